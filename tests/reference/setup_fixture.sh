#!/usr/bin/env bash
# CTest fixture of the tokenizer golden tests: sets up the HF reference in DIR (install.sh: the real tokenizers
# decompressed, a python with the HF tokenizers library as DIR/python), trains and extends tokenizers with our
# engine, and writes the HF library's ids for them (golden.py).
# Usage: setup_fixture.sh SLIPWAY_ENGINE DIR CORPUS
set -euo pipefail
engine=$1 dir=$2 corpus=$3
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/install.sh" "$dir"
python=$dir/python
mkdir -p "$dir/trained"
"$engine" tokenizer train --corpus "$corpus" --vocab-size 3000 --out "$dir/trained/tokenizer.json"
"$python" "$here/golden.py" --tokenizer "$dir/trained/tokenizer.json" --name trained --corpus "$corpus" \
  --out-dir "$dir/trained"
# A Metaspace variant of the SentencePiece-style tokenizer (as newer Mistral/Llama files are written:
# no normalizer, Metaspace pre-tokenizer with prepend_scheme "first", Metaspace decoder).
mkdir -p "$dir/metaspace"
"$python" - "$dir/tokenizers/llama2/tokenizer.json" "$dir/metaspace/tokenizer.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["normalizer"] = None
t["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
t["decoder"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
json.dump(t, open(sys.argv[2], "w"), ensure_ascii=False)
PY
"$python" "$here/golden.py" --tokenizer "$dir/metaspace/tokenizer.json" --name metaspace --corpus "$corpus" \
  --out-dir "$dir/metaspace"

# Trained and extended tokenizers, each in DIR/NAME/ (tokenizer.json, base.json for extensions) with the HF
# library's ids for the test corpus (golden-NAME*) and the Russian+English demo corpus (golden-NAME-demo*).
demo="$here/../../resources/demo/corpus.jsonl"
golden_both() {  # NAME
  "$python" "$here/golden.py" --tokenizer "$dir/$1/tokenizer.json" --name "$1" --corpus "$corpus" \
    --out-dir "$dir/$1"
  "$python" "$here/golden.py" --tokenizer "$dir/$1/tokenizer.json" --name "$1-demo" --corpus "$demo" \
    --out-dir "$dir/$1" --special-lines 50
}
# A byte-level BPE learned on the English half of the demo corpus, extended with merges from all of it
# (so the new tokens are Cyrillic).
mkdir -p "$dir/extended"
grep '"domain": "fortunes/' "$demo" >"$dir/extended/english.jsonl"
"$engine" tokenizer train --corpus "$dir/extended/english.jsonl" --vocab-size 1500 --out "$dir/extended/base.json"
"$engine" tokenizer extend --base "$dir/extended/base.json" --corpus "$demo" --add 1000 \
  --out "$dir/extended/tokenizer.json"
golden_both extended
# Llama-3 (added tokens right after the model vocab), Qwen3 (the same, merges as pairs, NFC) and Llama-2
# (SentencePiece style, byte fallback, no pre-tokenizer) extended on the demo corpus.
for name in llama3 qwen3 llama2; do
  mkdir -p "$dir/extended-$name"
  cp "$dir/tokenizers/$name/tokenizer.json" "$dir/extended-$name/base.json"
  "$engine" tokenizer extend --base "$dir/extended-$name/base.json" --corpus "$demo" --add 500 \
    --out "$dir/extended-$name/tokenizer.json"
  golden_both "extended-$name"
done
if [ -x "$(dirname "$engine")/slipway-tokenizer" ]; then
  # A Unigram tokenizer from SentencePiece's trainer.
  mkdir -p "$dir/unigram"
  "$engine" tokenizer train --type unigram --corpus "$demo" --vocab-size 4000 --out "$dir/unigram/tokenizer.json"
  golden_both unigram
  # The same with the scores as float32 values written in full (17 digits, as HF's converters write them):
  # the HF library's JSON reader rounds some of those differently from a correctly rounding one.
  mkdir -p "$dir/unigram-f32"
  /usr/bin/python3 - "$dir/unigram/tokenizer.json" "$dir/unigram-f32/tokenizer.json" <<'PY'
import json, struct, sys
t = json.load(open(sys.argv[1]))
t["model"]["vocab"] = [[p, struct.unpack("f", struct.pack("f", s))[0]] for p, s in t["model"]["vocab"]]
json.dump(t, open(sys.argv[2], "w"), ensure_ascii=False)
PY
  golden_both unigram-f32
else
  echo "setup_fixture.sh: no slipway-tokenizer (built without libsentencepiece-dev): no Unigram goldens" >&2
fi
ls "$dir/trained" "$dir/metaspace" "$dir/extended"
