# expect: add-not-copy@3 add-not-copy@4
FROM ubuntu:22.04
ADD requirements.txt /tmp/requirements.txt
ADD --chown=1000:1000 src /src
WORKDIR /workspace
