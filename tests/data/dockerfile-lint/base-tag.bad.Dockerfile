# expect: base-tag@2 base-tag@5 base-tag@7
FROM nvcr.io/nvidia/pytorch AS build
WORKDIR /src

FROM ubuntu:latest
WORKDIR /workspace
FROM localhost:5000/slipway/base
WORKDIR /workspace
