# expect: env-secret@3 env-secret@4
FROM nvcr.io/nvidia/pytorch:24.04-py3
ENV HF_TOKEN=hf_example
ARG WANDB_API_KEY
WORKDIR /workspace
