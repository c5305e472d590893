# expect: apt-lists@3
FROM ubuntu:22.04
RUN apt-get update \
    && apt-get install -y --no-install-recommends git
WORKDIR /workspace
