#!/usr/bin/env bash
# Makes (or reuses) a Debian root with LibTorch 2.x and everything the engine's build and test suites need,
# made with Debian's own mmdebstrap from the Debian mirror alone. TORCH2_SUITE picks the release: trixie
# (the default; libtorch-dev/python3-torch 2.6, the nearest torch 2.x to the NGC images clusters build
# against) or forky (2.14, the newest LibTorch, with HF transformers/tokenizers as the CPU reference and
# llama.cpp). The root is cached outside the checkout (CACHE_DIR/SUITE-root): a second run only checks it,
# and adds packages when its list has grown. Made in a temporary folder and renamed, so an interrupted run
# never leaves a half-made root behind.
# Usage: torch2_root.sh CACHE_DIR. Prints the root's path last. Exit 77 (skip) when the mirror cannot be
# reached or this user cannot chroot.
set -euo pipefail
cache_dir=$1
suite=${TORCH2_SUITE:-trixie}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$cache_dir/$suite-root

# The engine's build dependencies (as packaging/install-deps.sh names them for Debian 12), its test suites'
# references (python3-torch; python3-venv for the pinned PyPI references, tests/reference/venv.sh), and
# python-is-python3 because the rendered Dockerfile calls `python` as NGC images have it; mount/util-linux
# for the tests that make a private tmpfs (a full disk).
packages=(
  build-essential cmake pkg-config ccache ca-certificates git
  nlohmann-json3-dev libcli11-dev libpcre2-dev libicu-dev
  libtorch-dev libgloo-dev libopenblas0-pthread
  libgtest-dev libgmock-dev
  python3 python3-torch python-is-python3 python3-venv
  procps iproute2 mount util-linux curl xz-utils
)
aptopts=('Acquire::Retries "3"')
case "$suite" in
forky)
  # The torch-latest label's references: HF transformers on CPU (tests/compat/hf_reference.py), jinja2,
  # llama.cpp (-tools-extra: llama-perplexity); libsentencepiece-dev for slipway-tokenizer (the Unigram trainer), built once its headers
  # compile: forky's 0.2 includes Abseil's, and forky has no libabsl-dev at present (checked 2026-11-26).
  packages+=(python3-transformers python3-tokenizers python3-safetensors python3-jinja2 python3-accelerate
             llama.cpp-tools llama.cpp-tools-extra python3-gguf libsentencepiece-dev
             # what lm-eval imports on its hf path (tests/reference/lm_eval_check.py; lm-eval, datasets and
             # sacrebleu themselves are pinned in tests/reference/requirements.txt)
             python3-pandas python3-pyarrow python3-dill python3-multiprocess python3-xxhash python3-portalocker
             python3-tabulate python3-colorama python3-lxml)
  # Testing's Release file is re-signed only now and then: apt calls it expired between two signings.
  aptopts+=('Acquire::Check-Valid-Until "false"')
  ;;
esac
# TORCH2_FLAVOR=bare: a cluster environment as the engine bundle meets it (an NGC image's torch, a venv):
# python3's torch with its C++ SDK, a compiler, CMake, and nothing else the engine uses (no -dev package of
# nlohmann-json, CLI11, PCRE2 or ICU), for tests/cluster/engine_bundle.sh.
if [ "${TORCH2_FLAVOR:-}" = bare ]; then
  root=$cache_dir/$suite-bare-root
  # ccache: build.sh uses it where the image has it, so that the test's rebuilds of a changed bundle hit
  packages=(build-essential cmake python3 python3-torch libtorch-dev libgloo-dev libopenblas0-pthread ccache)
fi
wanted=$(printf '%s\n' "${packages[@]}" | sort | tr '\n' ' ')

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: building and entering the $suite root needs root (mmdebstrap, chroot); run the torch2 tests as root"
  exit 77
fi
if ! command -v mmdebstrap >/dev/null 2>&1; then
  echo "mmdebstrap is missing: run packaging/install-deps.sh" >&2
  exit 1
fi
mkdir -p "$cache_dir"
exec 9>"$cache_dir/.lock"
flock 9  # one maker at a time; a concurrent run waits and then reuses the root

if [ -f "$root/.slipway-packages" ] && [ "$(cat "$root/.slipway-packages")" = "$wanted" ]; then
  # shellcheck disable=SC2016  # dpkg-query's own format
  echo "torch2_root: reusing $root ($(chroot "$root" dpkg-query -W -f='${Version}' libtorch-dev) libtorch-dev)"
  echo "$root"
  exit 0
fi
if ! curl -fsS --max-time 60 -o /dev/null "$mirror/dists/$suite/Release"; then
  echo "SKIP: the Debian mirror ($mirror, $suite) cannot be reached"
  exit 77
fi

if [ -d "$root" ]; then
  # The list grew since the root was made: install the difference instead of starting again.
  echo "torch2_root: adding packages to $root"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  chroot "$root" apt-get update -q  # mmdebstrap left the aptopts in /etc/apt/apt.conf.d/99mmdebstrap
  chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${packages[@]}"
else
  echo "torch2_root: making $root from $mirror ($suite); a few minutes, once"
  rm -rf "$root.tmp"
  started=$(date +%s)
  mmdebstrap --variant=apt "${aptopts[@]/#/--aptopt=}" --include="$(IFS=,; echo "${packages[*]}")" \
    "$suite" "$root.tmp" "$mirror"
  mv "$root.tmp" "$root"
  echo "torch2_root: made in $(( $(date +%s) - started )) s, $(du -sh "$root" | cut -f1)"
fi
if [ "${TORCH2_FLAVOR:-}" = bare ]; then
  for dev in nlohmann-json3-dev libcli11-dev libpcre2-dev libicu-dev; do
    if chroot "$root" dpkg-query -W "$dev" >/dev/null 2>&1; then
      echo "torch2_root: the bare root has $dev, which a cluster's image would not" >&2
      exit 1
    fi
  done
fi
printf '%s' "$wanted" > "$root/.slipway-packages"
echo "$root"
