# expect: pip-unconstrained@3
FROM nvcr.io/nvidia/pytorch:24.04-py3
RUN pip install --no-cache-dir transformers==4.40.0
WORKDIR /workspace
