# expect: apt-no-update@3
FROM ubuntu:22.04
RUN apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /workspace
