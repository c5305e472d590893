# -y in any spelling: -y, -qy, --yes.
FROM ubuntu:22.04
RUN apt-get update \
    && apt-get install -qy --no-install-recommends git \
    && apt-get install --yes --no-install-recommends nano \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /workspace
