# The word sudo as an argument is not sudo running.
FROM ubuntu:22.04
RUN mkdir -p /scratch && echo sudo > /scratch/note
WORKDIR /workspace
