#!/usr/bin/env bash
# The README's run command: set up, build, and run the main job on the embedded default ("This computer").
# With a display it opens the Slipway window; without one it runs headless and prints what it shows.
#
# Not yet: the engine cannot train until the engine issues land, so for now the headless mode summarizes
# a real MLPerf llama2_70b_lora log (the same reader the live monitor uses). This command stays the same
# when it grows into training the demo-tiny preset locally.
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/build.sh default
build/bin/slipway-engine config validate resources/presets/demo-tiny.json
if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  exec build/bin/slipway
fi
echo "No display: headless mode."
exec build/bin/slipway logs summary tests/data/mlperf-logs/*.txt
