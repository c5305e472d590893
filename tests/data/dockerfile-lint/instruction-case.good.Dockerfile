# Instructions in upper case; their arguments in any case.
FROM nvcr.io/nvidia/pytorch:24.04-py3 as base
WORKDIR /workspace
