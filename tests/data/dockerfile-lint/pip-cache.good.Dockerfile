# --no-cache-dir, or PIP_NO_CACHE_DIR in the stage or on the command.
FROM python:3.11-slim
RUN pip install --no-cache-dir datasets==2.18.0
RUN PIP_NO_CACHE_DIR=1 python3 -m pip install evaluate==0.4.2
ENV PIP_NO_CACHE_DIR=1
RUN pip3 install sentencepiece==0.2.0
WORKDIR /workspace
