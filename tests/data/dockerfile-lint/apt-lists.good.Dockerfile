# A comment inside a continuation is skipped, as docker skips it.
FROM ubuntu:22.04
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
# the lists are only needed while installing
    && rm -rf /var/lib/apt/lists/*
WORKDIR /workspace
