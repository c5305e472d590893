# torch on a base that has none is fine; packages merely named torch-something are fine on NGC.
FROM python:3.11-slim AS plain
RUN pip install --no-cache-dir torch==2.4.0

FROM nvcr.io/nvidia/pytorch:24.04-py3
RUN python -c 'import torch; print("torch==" + torch.__version__)' > /opt/torch-constraint.txt
RUN pip install --no-cache-dir -c /opt/torch-constraint.txt torchmetrics==1.4.0
WORKDIR /workspace
