# The exec form is read too.
FROM ubuntu:22.04
RUN apt-get update && apt-get install -y --no-install-recommends git && rm -rf /var/lib/apt/lists/*
RUN ["apt-get", "purge", "-y", "git"]
WORKDIR /workspace
