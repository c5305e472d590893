#!/usr/bin/env bash
# Checks slipway-engine's KV-cache greedy decoding against the reference's full recomputation
# (generate_reference.py) for one architecture: init-model from CONFIG_JSON (vocab 4096: the demo
# tokenizer's, which decodes the text), prompts of different lengths, N new tokens each.
# Usage: check_generate.sh SLIPWAY_ENGINE WORK_DIR CONFIG_JSON TOKENIZER_JSON [NEW_TOKENS]
set -euo pipefail
engine=$1 work=$2 config=$3 tokenizer=$4 new_tokens=${5:-40}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$work" && mkdir -p "$work"
printf '%s\n' "$config" >"$work/config.json"
"$engine" init-model --config "$work/config.json" --out "$work/model" --seed 5
/usr/bin/python3 - "$work/prompts.jsonl" <<'PY'
import json, random, sys
rng = random.Random(3)
with open(sys.argv[1], "w") as f:
    for n in (1, 7, 30):
        f.write(json.dumps({"ids": [rng.randrange(4096) for _ in range(n)]}) + "\n")
PY
"$engine" generate --model "$work/model" --tokenizer "$tokenizer" --prompts "$work/prompts.jsonl" \
  --max-new-tokens "$new_tokens" --threads 1 >"$work/generated.jsonl"
cd "$here" && /usr/bin/python3 generate_reference.py --model "$work/model" --prompts "$work/prompts.jsonl" \
  --engine-output "$work/generated.jsonl" --max-new-tokens "$new_tokens"
