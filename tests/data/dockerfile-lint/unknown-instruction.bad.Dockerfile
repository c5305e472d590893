# expect: unknown-instruction@3
FROM nvcr.io/nvidia/pytorch:24.04-py3
INSTAL git
WORKDIR /workspace
