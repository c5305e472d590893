#!/usr/bin/env bash
# `slipway-engine quantize` against the NF4 reference: a tiny Qwen2-shaped model (q/k/v biases stay in fp32),
# quantized without and with double quantization, every key checked by check_bnb_folder.py.
# Usage: check_bnb_folder.sh SLIPWAY_ENGINE WORK_DIR
set -euo pipefail
engine=$1 work=$2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$work" && mkdir -p "$work"
printf '%s\n' '{"model_type": "qwen2", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
  "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64,
  "initializer_range": 0.1}' >"$work/config.json"
"$engine" init-model --config "$work/config.json" --out "$work/base" --seed 4
for flag in "" --double-quant; do
  "$engine" quantize --model "$work/base" --out "$work/quantized$flag" $flag
  (cd "$here" && /usr/bin/python3 check_bnb_folder.py "$work/base" "$work/quantized$flag")
done
