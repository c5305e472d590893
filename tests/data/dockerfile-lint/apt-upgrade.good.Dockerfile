# Install what is needed instead of upgrading the base image's libraries.
FROM nvcr.io/nvidia/pytorch:24.04-py3
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /workspace
