#!/usr/bin/env bash
# CTest fixture of the Dockerfile lint test: installs the pinned dockerfile-utils (package-lock.json) into
# DIR with npm ci, so the test runs a real linter without touching the source tree.
# Usage: install.sh DIR
set -euo pipefail
dir=$1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$dir"
cp "$here/package.json" "$here/package-lock.json" "$dir/"
pinned=$(sed -n 's/.*"dockerfile-utils": "\(.*\)".*/\1/p' "$here/package.json")
if "$dir/node_modules/.bin/dockerfile-utils" --version 2>/dev/null | grep -q "version $pinned "; then
  echo "dockerfile-utils already installed in $dir"
  exit 0
fi
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
"$dir/node_modules/.bin/dockerfile-utils" --version
