# expect: sudo@3
FROM ubuntu:22.04
RUN sudo mkdir -p /scratch
WORKDIR /workspace
