# A named release, an earlier stage, a registry with a port, a digest.
FROM nvcr.io/nvidia/pytorch:24.04-py3 AS base
WORKDIR /workspace

FROM base
WORKDIR /workspace
FROM localhost:5000/slipway/base:1.0
WORKDIR /workspace
FROM ubuntu@sha256:0eb3bd5e5b5a8c79b9e3e8e5e45a1b1f8e1c0c6b3a7f1b6a3f3e0a2c1d4e5f60
WORKDIR /workspace
