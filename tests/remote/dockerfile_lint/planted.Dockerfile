# Known-bad for hadolint: slips a change to Slipway's Dockerfile renderer could make that only hadolint
# catches (shell inside RUN, stage names, ENV). hadolint_findings.txt lists what it must find here; Slipway's
# own rules find nothing (no `# expect:` line), and dockerfile_lint_test.cpp checks both.
FROM nvcr.io/nvidia/pytorch:24.04-py3 AS base
ENV SLIPWAY_HOME=/opt/slipway SLIPWAY_BIN=$SLIPWAY_HOME/bin
RUN apt update \
    && apt install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*

FROM base AS engine
COPY . /src/slipway
RUN cd /src/slipway && cmake -S . -B build -DCMAKE_PREFIX_PATH=$(python -c 'import torch; print(torch.utils.cmake_prefix_path)')
RUN cmake --build /src/slipway/build -j`nproc` | tee /tmp/build.log

FROM base
COPY --from=engnie /src/slipway/build/bin/slipway-engine /usr/local/bin/slipway-engine
WORKDIR /workspace
