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
ls "$dir/trained"
