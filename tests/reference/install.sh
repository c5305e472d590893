#!/usr/bin/env bash
# Sets up the tokenizer reference in DIR (the tests use build/reference) and prints what it holds, one
# name=path per line:
#
#   python=DIR/python                          a python with the HF tokenizers library
#   llama3=DIR/tokenizers/llama3/tokenizer.json
#   qwen3=DIR/tokenizers/qwen3/tokenizer.json
#   llama2=DIR/tokenizers/llama2/tokenizer.json
#
# The three real tokenizers are committed compressed (tests/data/tokenizers/NAME/tokenizer.json.xz) and
# decompressed into DIR/tokenizers/NAME/ with their tokenizer_config.json. DIR/python runs the venv of
# tests/reference/requirements-host.txt (tests/reference/venv.sh: hash-pinned wheels from PyPI, cached in
# ~/.cache/slipway; it sees the system's site-packages, so Debian's torch too); where PyPI cannot be reached,
# a python3 that already imports tokenizers (Debian forky's python3-tokenizers) stands in.
#
# Usage: tests/reference/install.sh [DIR]
#   DIR defaults to $SLIPWAY_REFERENCE_DIR, then to build/reference in the source tree.
# Idempotent: files already decompressed from the same .xz are kept, and a made venv is reused. Only stdout
# carries the paths; pip's output goes to stderr. Several runs at once (ctest -j) wait for each other.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source_dir="$(cd "$here/../.." && pwd)"
dir="${1:-${SLIPWAY_REFERENCE_DIR:-$source_dir/build/reference}}"
base_python=${SLIPWAY_REFERENCE_PYTHON:-/usr/bin/python3}
names=(llama3 qwen3 llama2)

die() {
  echo "install.sh: $*" >&2
  exit 1
}

mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
exec 8>"$dir/.install.lock"
flock 8

# A python with the library: the pinned venv, else one that has it already.
if venv=$(bash "$here/venv.sh" "$here/requirements-host.txt" "$base_python" | tail -n 1) &&
  [ -x "$venv/bin/python" ]; then
  python=$venv/bin/python
elif "$base_python" -c 'import tokenizers' 2>/dev/null; then
  python=$base_python
  echo "install.sh: no venv (PyPI unreachable?); using $python's tokenizers" \
    "$("$python" -c 'import tokenizers; print(tokenizers.__version__)')" >&2
else
  die "no python with the HF tokenizers library (venv.sh failed and $base_python has none)"
fi
# Files are replaced only when they change, and then by a rename: tests that do not wait for the fixture
# (eval_reference) run this while others read the files.
put() {  # put DST (the new content on stdin) [MODE]
  cat >"$1.tmp"
  [ -z "${2:-}" ] || chmod "$2" "$1.tmp"
  if cmp -s "$1.tmp" "$1"; then rm -f "$1.tmp"; else mv -f "$1.tmp" "$1"; fi
}
# A wrapper rather than a symlink: a venv's python finds its venv only when run by its own path.
printf '#!/bin/sh\nexec %q "$@"\n' "$python" | put "$dir/python" 755

for n in "${names[@]}"; do
  src=$source_dir/tests/data/tokenizers/$n
  out=$dir/tokenizers/$n
  [ -f "$src/tokenizer.json.xz" ] || die "missing $src/tokenizer.json.xz"
  sum=$(sha256sum <"$src/tokenizer.json.xz" | cut -d' ' -f1)
  if [ ! -f "$out/tokenizer.json" ] || [ "$(cat "$out/.source-sha256" 2>/dev/null)" != "$sum" ]; then
    mkdir -p "$out"
    # Python's lzma rather than xz(1): a minimal root has liblzma but not always xz-utils.
    "$python" -c 'import lzma, shutil, sys
with lzma.open(sys.argv[1]) as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)' "$src/tokenizer.json.xz" "$out/tokenizer.json.tmp"
    mv "$out/tokenizer.json.tmp" "$out/tokenizer.json"
    printf '%s\n' "$sum" >"$out/.source-sha256"
  fi
  put "$out/tokenizer_config.json" <"$src/tokenizer_config.json"
  put "$out/LICENSE" <"$src/LICENSE"
done

printf 'python=%s\n' "$dir/python"
for n in "${names[@]}"; do
  printf '%s=%s\n' "$n" "$dir/tokenizers/$n/tokenizer.json"
done
