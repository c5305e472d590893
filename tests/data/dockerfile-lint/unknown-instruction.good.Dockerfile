# Every instruction docker knows.
FROM nvcr.io/nvidia/pytorch:24.04-py3
LABEL org.opencontainers.image.title="slipway training image"
STOPSIGNAL SIGTERM
WORKDIR /workspace
