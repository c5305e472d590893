# Pinned packages (extras too); requirement files and local folders are not looked into.
FROM python:3.11-slim
COPY requirements.txt /tmp/requirements.txt
COPY tools /opt/tools
RUN pip install --no-cache-dir "transformers[torch]==4.40.0" -r /tmp/requirements.txt /opt/tools
WORKDIR /workspace
