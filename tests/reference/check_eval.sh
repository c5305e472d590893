#!/usr/bin/env bash
# Checks `slipway-engine eval` against the independent reference (eval_reference.py) on a tiny random model
# with the demo tokenizer: task files made by the reference, then every prediction, generation and count
# equal and log-likelihoods / perplexity within 1e-5 relative; then the same with a LoRA adapter trained for a
# few steps (eval --adapter against the reference's W + scaling * B @ A).
# Usage: check_eval.sh SLIPWAY_ENGINE WORK_DIR TOKENIZER_JSON REFERENCE_DIR
# (REFERENCE_DIR: where install.sh sets up REFERENCE_DIR/python, a python with torch and the HF tokenizers
# library; quick when it is there already.)
set -euo pipefail
engine=$1 work=$2 tokenizer=$3 reference=$4
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/install.sh" "$reference" >/dev/null
rm -rf "$work" && mkdir -p "$work"
# 4096 tokens as the demo tokenizer; 48 positions, so long contexts are cut on the left as lm-eval does.
cat >"$work/config.json" <<'JSON'
{"vocab_size": 4096, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
 "num_key_value_heads": 2, "max_position_embeddings": 48, "rms_norm_eps": 1e-5, "initializer_range": 0.5,
 "tie_word_embeddings": true, "bos_token_id": 4093, "eos_token_id": 4094}
JSON
"$engine" init-model --config "$work/config.json" --out "$work/model" --seed 5
ref=("$reference/python" "$here/eval_reference.py")
common=(--model "$work/model" --tokenizer "$tokenizer")
"${ref[@]}" make-tasks "${common[@]}" --out "$work/tasks"
"$engine" eval --model "$work/model" --tokenizer "$tokenizer" --tasks "$work/tasks/tasks.json" --threads 1 \
  --details "$work/details.jsonl" >"$work/result.json"
"${ref[@]}" check "${common[@]}" --tasks "$work/tasks/tasks.json" --engine-result "$work/result.json" \
  --engine-details "$work/details.jsonl"

# A LoRA adapter: a few steps on demo texts, so B is no longer zero.
head -n 300 "$here/../../resources/demo/corpus.jsonl" >"$work/train.jsonl"
cat >"$work/lora.json" <<JSON
{"name": "eval-lora", "model": {"path": "$work/model"}, "tokenizer": {"path": "$tokenizer"},
 "data": {"train_file": "$work/train.jsonl", "block_size": 32, "validation_split_percentage": 0,
          "cache_dir": "$work/cache"},
 "training": {"learning_rate": 0.02, "max_steps": 4, "per_device_train_batch_size": 4, "output_dir": "$work/adapter"},
 "adapter": {"method": "lora", "r": 4, "lora_alpha": 8, "target_modules": ["q_proj", "v_proj", "down_proj"]},
 "slurm": {"gpus_per_node": 0}}
JSON
"$engine" train --threads 1 "$work/lora.json" >/dev/null 2>"$work/train.err" || { cat "$work/train.err"; exit 1; }
"$engine" eval --model "$work/model" --adapter "$work/adapter" --tokenizer "$tokenizer" \
  --tasks "$work/tasks/tasks.json" --threads 1 --details "$work/details-lora.jsonl" >"$work/result-lora.json"
"${ref[@]}" check "${common[@]}" --adapter "$work/adapter" --tasks "$work/tasks/tasks.json" \
  --engine-result "$work/result-lora.json" --engine-details "$work/details-lora.jsonl"

# --bf16 (autocast over the fp32 weights, as training's bf16): the same predictions' log-likelihoods move, by
# bf16's precision and no more.
"$engine" eval --model "$work/model" --tokenizer "$tokenizer" --tasks "$work/tasks/tasks.json" --threads 1 --bf16 \
  --details "$work/details-bf16.jsonl" >/dev/null
/usr/bin/python3 - "$work/details.jsonl" "$work/details-bf16.jsonl" <<'PY'
import json, sys
fp32, bf16 = ([json.loads(l) for l in open(p)] for p in sys.argv[1:3])
worst = 0.0
for a, b in zip(fp32, bf16):
    pairs = list(zip(a.get("loglikelihoods", []), b.get("loglikelihoods", [])))
    if "nll_sum" in a:
        pairs.append((a["nll_sum"], b["nll_sum"]))
    for x, y in pairs:
        worst = max(worst, abs(x - y) / abs(x))
print(f"bf16 against fp32: max relative difference of log-likelihoods {worst:.3e}")
if not 1e-5 < worst < 0.1:
    sys.exit("FAIL: expected bf16 to move log-likelihoods by more than 1e-5 and less than 0.1 relative")
PY
