# ADD for what only ADD does (unpacking an archive); COPY for the rest.
FROM ubuntu:22.04
ADD model.tar.gz /models/
COPY requirements.txt /tmp/requirements.txt
WORKDIR /workspace
