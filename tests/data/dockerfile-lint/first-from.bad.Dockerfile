# expect: first-from@2
WORKDIR /workspace
FROM nvcr.io/nvidia/pytorch:24.04-py3
