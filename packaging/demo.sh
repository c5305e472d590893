#!/usr/bin/env bash
# The README's run command: set up, build, and run the main job on the embedded default, the "This
# computer" profile: slipway-engine trains the demo-tiny preset (a tiny LLaMA on the demo corpus) on this
# machine's CPUs. With a display the Slipway window plots train_loss / eval_accuracy live as the engine
# writes its MLLOG; without one the engine's progress lines and MLLOG show the live metrics, and the
# app's headless mode summarizes the finished run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/build.sh default
preset=resources/presets/demo-tiny.json
build/bin/slipway-engine config validate "$preset"
output_dir=$(build/bin/slipway-engine config print "$preset" | python3 -c 'import json,sys; print(json.load(sys.stdin)["training"]["output_dir"])')
mllog="$output_dir/mllog.txt"
rm -f "$mllog"
# The preset's 2 Gloo ranks x 1 torch thread each, started like torchrun by `slipway-engine launch`
# (for a model this small, 2 threads in one process cost more than they give on 2 cores).
train=(build/bin/slipway-engine launch --nproc 2 --threads-per-rank 1 -- train "$preset")

if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  build/bin/slipway --open "$mllog" --follow &
  app_pid=$!
  "${train[@]}" >/dev/null
  echo "Training finished; the Slipway window (pid $app_pid) shows the run. Close it to exit."
  wait "$app_pid"
else
  echo "No display: headless mode (progress on stderr, MLLOG lines on stdout)."
  "${train[@]}" | grep --line-buffered -E '"key": "(train_loss|eval_accuracy|run_stop)"'
  build/bin/slipway logs summary "$mllog"
fi
