# expect: apt-upgrade@4
FROM nvcr.io/nvidia/pytorch:24.04-py3
RUN apt-get update \
    && apt-get dist-upgrade -y \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /workspace
