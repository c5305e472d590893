# expect: pip-unpinned@3 pip-unpinned@3 pip-unpinned@4
FROM python:3.11-slim
RUN pip install --no-cache-dir transformers "datasets>=2.18" \
        accelerate==0.30.*
WORKDIR /workspace
