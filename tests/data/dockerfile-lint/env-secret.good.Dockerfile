# Names that merely contain a marker (TOKENIZERS) are not secrets.
FROM nvcr.io/nvidia/pytorch:24.04-py3
ENV HF_HOME=/scratch/cache NCCL_DEBUG=WARN
ENV TOKENIZERS_PARALLELISM=false
ARG RELEASE=1
WORKDIR /workspace
