# expect: apt-no-yes@4
FROM ubuntu:22.04
RUN apt-get update \
    && apt-get install --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /workspace
