#!/usr/bin/env bash
# Checks slipway-engine's LLaMA against the independent PyTorch reference (llama_reference.py) for one
# architecture: init-model from CONFIG_JSON (inline JSON), then per-line score and first-line logits,
# loss and gradients, all within 1e-5 relative.
# Usage: check_model.sh SLIPWAY_ENGINE WORK_DIR CONFIG_JSON [DTYPE]
set -euo pipefail
engine=$1 work=$2 config=$3 dtype=${4:-float32}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$work" && mkdir -p "$work"
printf '%s\n' "$config" >"$work/config.json"
"$engine" init-model --config "$work/config.json" --out "$work/model" --seed 7 --dtype "$dtype"
# Token lines of different lengths (1-based seeds keep them reproducible).
vocab=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['vocab_size'])" "$work/config.json")
/usr/bin/python3 - "$vocab" "$work/tokens.jsonl" <<'PY'
import json, random, sys
vocab, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(11)
with open(path, "w") as f:
    for n in (96, 2, 33, 200):
        f.write(json.dumps({"ids": [rng.randrange(vocab) for _ in range(n)]}) + "\n")
PY
"$engine" score --model "$work/model" --tokens "$work/tokens.jsonl" --threads 1 >"$work/scores.jsonl"
"$engine" dump --model "$work/model" --tokens "$work/tokens.jsonl" --out "$work/dump.safetensors"
/usr/bin/python3 "$here/llama_reference.py" score --model "$work/model" --tokens "$work/tokens.jsonl" \
  --engine-scores "$work/scores.jsonl"
/usr/bin/python3 "$here/llama_reference.py" dump --model "$work/model" --tokens "$work/tokens.jsonl" \
  --engine-dump "$work/dump.safetensors"
