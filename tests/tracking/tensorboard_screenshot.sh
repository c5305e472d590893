#!/usr/bin/env bash
# Serves a run folder's TensorBoard events with TensorBoard itself on 127.0.0.1 and captures its Scalars and
# HParams pages with Debian's headless Chromium: the pictures in docs/screenshots/tensorboard-demo-*.png.
# Needs `chromium` (apt) and a TensorBoard that can serve (pip install tensorboard: werkzeug, markdown and
# grpcio beside the reader that tests/reference's venv pins). Not a ctest: the reader check is
# tensorboard_check.py.
# Usage: tests/tracking/tensorboard_screenshot.sh LOGDIR OUT_PREFIX [TENSORBOARD]
#   e.g. tests/tracking/tensorboard_screenshot.sh build/demo-run/runs docs/screenshots/tensorboard-demo
set -euo pipefail
logdir=$1 prefix=$2 tensorboard=${3:-tensorboard}
port=$((16006 + RANDOM % 1000))
"$tensorboard" --logdir "$logdir" --host 127.0.0.1 --port "$port" >/dev/null 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 60); do
  curl -sf "http://127.0.0.1:$port/data/runs" >/dev/null && break
  sleep 1
done
shoot() {  # shoot NAME WIDTHxHEIGHT FRAGMENT
  chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size="$2" \
    --virtual-time-budget=20000 --screenshot="$prefix-$1.png" \
    "http://127.0.0.1:$port/?darkMode=false#$3" 2>/dev/null
}
shoot scalars 1400,900 'scalars&tagFilter=train%2F(loss%7Clearning_rate%7Cgrad_norm%7Cepoch)&_smoothingWeight=0'
shoot hparams 1400,700 'hparams'
echo "wrote $prefix-scalars.png and $prefix-hparams.png"
