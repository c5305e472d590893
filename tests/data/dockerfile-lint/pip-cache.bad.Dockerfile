# expect: pip-cache@3
FROM python:3.11-slim
RUN pip install datasets==2.18.0
WORKDIR /workspace
