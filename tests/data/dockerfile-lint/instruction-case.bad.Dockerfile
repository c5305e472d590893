# expect: instruction-case@3
FROM nvcr.io/nvidia/pytorch:24.04-py3
workdir /workspace
