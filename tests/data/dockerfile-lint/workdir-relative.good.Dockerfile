# Absolute, or a variable that holds an absolute path.
FROM ubuntu:22.04
ENV APP_DIR=/opt/app
WORKDIR $APP_DIR
WORKDIR /workspace
