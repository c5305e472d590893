# The constraint comes from ENV PIP_CONSTRAINT in the stage this one is built from.
FROM nvcr.io/nvidia/pytorch:24.04-py3 AS base
RUN python -c 'import torch; print("torch==" + torch.__version__)' > /opt/torch-constraint.txt
ENV PIP_CONSTRAINT=/opt/torch-constraint.txt

FROM base
RUN pip install --no-cache-dir transformers==4.40.0
WORKDIR /workspace
