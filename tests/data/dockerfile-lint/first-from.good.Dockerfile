# Only ARG may come before FROM (it can choose the base).
ARG RELEASE=24.04
FROM nvcr.io/nvidia/pytorch:${RELEASE}-py3
WORKDIR /workspace
