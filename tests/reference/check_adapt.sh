#!/usr/bin/env bash
# Checks `slipway-engine adapt-vocab` and `lep` against the independent reference (adapt_reference.py: the
# old tokenizer's splits from the HF tokenizers library, means and least squares in PyTorch) on tiny random
# models, then runs the propagated instruct model through `generate --chat` and `score`.
#   adapt-vocab: byte-level -> byte-level (the demo tokenizer -> one trained on its Russian lines; tied, fp32),
#                SentencePiece-style -> byte-level (Llama-2's -> the trained one; untied, bf16) and
#                byte-level -> SentencePiece-style (the demo tokenizer -> Llama-2's; untied, fp32), and the
#                demo tokenizer -> Llama-3's 128256 tokens.
#   lep:         base, "instruct" (base perturbed), "adapted" (adapt-vocab of base, embeddings perturbed as
#                training would), every method, tied and untied.
#   Also bf16 LEP with a SentencePiece-style instruct tokenizer, the refusals (errors naming the file), and the
#   LEP output through generate --chat, score and eval.
# Usage: check_adapt.sh SLIPWAY_ENGINE WORK_DIR REFERENCE_DIR
# (REFERENCE_DIR: where install.sh sets up the real tokenizers and REFERENCE_DIR/python, a python with torch and
# the HF tokenizers library; quick when they are there already.)
set -euo pipefail
engine=$1 work=$2 reference=$3
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/install.sh" "$reference" >/dev/null
python=$reference/python
llama2=$reference/tokenizers/llama2/tokenizer.json
demo=$here/../../resources/demo/tokenizer.json
rm -rf "$work" && mkdir -p "$work"
ref=("$python" "$here/adapt_reference.py")

# The "new" tokenizer: BPE trained on the demo corpus's Russian lines.
LC_ALL=C.utf8 grep -P '[\x{0400}-\x{04FF}]' "$here/../../resources/demo/corpus.jsonl" >"$work/ru.jsonl"
"$engine" tokenizer train --corpus "$work/ru.jsonl" --vocab-size 3000 --out "$work/ru-tokenizer.json" >/dev/null

model() {  # model NAME VOCAB TIED DTYPE
  cat >"$work/$1.json" <<JSON
{"vocab_size": $2, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
 "num_key_value_heads": 2, "max_position_embeddings": 64, "initializer_range": 0.5, "tie_word_embeddings": $3,
 "bos_token_id": 4093, "eos_token_id": 4094}
JSON
  "$engine" init-model --config "$work/$1.json" --out "$work/$1" --dtype "$4" --seed 7 >/dev/null
}

adapt() {  # adapt MODEL OLD NEW OUT
  "$engine" adapt-vocab --model "$work/$1" --old-tokenizer "$2" --new-tokenizer "$3" --out "$work/$4"
  "${ref[@]}" adapt-vocab --model "$work/$1" --old-tokenizer "$2" --new-tokenizer "$3" --engine-out "$work/$4" \
    --work "$work/ref-$4"
}

model tied 4096 true float32
cp "$demo" "$work/tied/tokenizer.json"
adapt tied "$demo" "$work/ru-tokenizer.json" tied-ru
# Llama-3's 128256 tokens (its pre-tokenizer regex, its 256 added tokens, byte tokens that are parts of a
# UTF-8 character) from the demo tokenizer.
adapt tied "$demo" "$reference/tokenizers/llama3/tokenizer.json" tied-llama3
model sp 32000 false bfloat16
adapt sp "$llama2" "$work/ru-tokenizer.json" sp-ru
model untied 4096 false float32
cp "$demo" "$work/untied/tokenizer.json"
adapt untied "$demo" "$llama2" untied-llama2
adapt untied "$demo" "$work/ru-tokenizer.json" untied-ru

for kind in tied untied; do
  "${ref[@]}" perturb --model "$work/$kind" --out "$work/$kind-instruct" --seed 1 --chat-template >/dev/null
  "${ref[@]}" perturb --model "$work/$kind-ru" --out "$work/$kind-adapted" --seed 2 --embeddings-only >/dev/null
  for method in swap overlap conversion; do
    out=$kind-lep-$method
    "$engine" lep --base "$work/$kind" --instruct "$work/$kind-instruct" --adapted "$work/$kind-adapted" \
      --method "$method" --out "$work/$out"
    "${ref[@]}" lep --base "$work/$kind" --instruct "$work/$kind-instruct" --adapted "$work/$kind-adapted" \
      --method "$method" --engine-out "$work/$out" --work "$work/ref-$out"
  done
done

# LEP on bf16 checkpoints with a SentencePiece-style instruct tokenizer (Llama-2's): dtype kept.
cp "$llama2" "$work/sp/tokenizer.json"
"${ref[@]}" perturb --model "$work/sp" --out "$work/sp-instruct" --seed 3 >/dev/null
"${ref[@]}" perturb --model "$work/sp-ru" --out "$work/sp-adapted" --seed 4 --embeddings-only >/dev/null
"$engine" lep --base "$work/sp" --instruct "$work/sp-instruct" --adapted "$work/sp-adapted" --method conversion \
  --out "$work/sp-lep-conversion"
"${ref[@]}" lep --base "$work/sp" --instruct "$work/sp-instruct" --adapted "$work/sp-adapted" \
  --method conversion --engine-out "$work/sp-lep-conversion" --work "$work/ref-sp-lep-conversion"

# Errors name the folder or file and what does not fit.
expect_error() {  # expect_error MESSAGE_PART COMMAND...
  local part=$1
  shift
  if "$@" >"$work/error.out" 2>"$work/error.err"; then
    echo "expected a failure: $*" && exit 1
  fi
  grep -qF -- "$part" "$work/error.err" || { echo "expected \"$part\" in:"; cat "$work/error.err"; exit 1; }
  echo "refused as expected: $(head -n 1 "$work/error.err")"
}
expect_error "not this model's tokenizer" \
  "$engine" adapt-vocab --model "$work/tied" --old-tokenizer "$llama2" --new-tokenizer "$demo" --out "$work/bad"
sed 's/"hidden_size": 32/"hidden_size": 16/; s/"num_attention_heads": 4/"num_attention_heads": 2/' \
  "$work/untied.json" >"$work/narrow.json"
"$engine" init-model --config "$work/narrow.json" --out "$work/narrow" >/dev/null
cp "$work/ru-tokenizer.json" "$work/narrow/tokenizer.json"
expect_error "hidden size 16" "$engine" lep --base "$work/untied" --instruct "$work/untied-instruct" \
  --adapted "$work/narrow" --out "$work/bad"
mkdir -p "$work/mismatch" && cp "$work/untied-adapted/"*.json "$work/untied-adapted/model.safetensors" "$work/mismatch/"
cp "$llama2" "$work/mismatch/tokenizer.json"
expect_error "mismatch/tokenizer.json: the tokenizer has 32000 ids" "$engine" lep --base "$work/untied" \
  --instruct "$work/untied-instruct" --adapted "$work/mismatch" --out "$work/bad"
expect_error "tie_word_embeddings differs" "$engine" lep --base "$work/untied" \
  --instruct "$work/untied-instruct" --adapted "$work/tied-adapted" --out "$work/bad"
mkdir -p "$work/headless" && cp "$work/untied-adapted/"*.json "$work/headless/"
PYTHONPATH="$here" "$python" - "$work/untied-adapted/model.safetensors" "$work/headless/model.safetensors" <<'PY'
import sys
from adapt_reference import read_safetensors, write_safetensors
t = read_safetensors(sys.argv[1])
del t["lm_head.weight"]
write_safetensors(sys.argv[2], t)
PY
expect_error "headless: the checkpoint has no \"lm_head.weight\"" "$engine" lep --base "$work/untied" \
  --instruct "$work/untied-instruct" --adapted "$work/headless" --out "$work/bad"

# The propagated model is an ordinary HF folder: its tokenizer loads in the HF library and has the instruct
# model's chat token as one id after the adapted rows; a chat turn and a score with it.
out=$work/untied-lep-conversion
echo '["<|end_of_turn|>"]' >"$work/chat-token.json"
"$python" "$here/encode_strings.py" "$out/tokenizer.json" "$work/chat-token.json" "$work/chat-ids.json"
[ "$(cat "$work/chat-ids.json")" = "[[3000]]" ] || { echo "<|end_of_turn|>: $(cat "$work/chat-ids.json")"; exit 1; }
"$engine" generate --model "$out" --chat --prompt "Привет, как дела?" --max-new-tokens 8 --threads 1 \
  >"$work/chat.jsonl"
cat "$work/chat.jsonl"
head -n 20 "$work/ru.jsonl" | "$engine" tokenize --tokenizer "$out/tokenizer.json" --add-special-tokens \
  >"$work/ids.jsonl"
"$engine" score --model "$out" --tokens "$work/ids.jsonl" --threads 1 | tail -n 1
"$engine" eval --model "$out" --tasks "$here/../../resources/eval/demo-tasks.json" --limit 4 --threads 1 \
  >"$work/eval.json"
head -c 400 "$work/eval.json" && echo
