# expect: pip-replaces-torch@6 pip-replaces-torch@7
FROM nvcr.io/nvidia/pytorch:24.04-py3
RUN python -c 'import torch; print("torch==" + torch.__version__)' > /opt/torch-constraint.txt
RUN python -m pip install --no-cache-dir --constraint /opt/torch-constraint.txt \
        transformers==4.40.0 \
        torch==2.4.0
RUN pip install --no-cache-dir --no-deps -U torchvision==0.19.0
WORKDIR /workspace
