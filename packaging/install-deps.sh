#!/usr/bin/env bash
# Installs every Debian package that building, testing and running Slipway need. This is the single list
# of system dependencies: CI, the README's commands and developers all run it. Idempotent, and quick when
# everything is present (it then skips apt-get entirely). Uses sudo when not root.
set -euo pipefail

# Grouped by purpose; keep this the only place packages are named.
packages=(
  # toolchain
  build-essential cmake pkg-config git ca-certificates
  # a second checkout (CI's fresh clone) compiles from the cache (CMakeLists.txt: SLIPWAY_CCACHE)
  ccache
  # contract + engine
  nlohmann-json3-dev libcli11-dev libpcre2-dev libicu-dev
  # tokenizer train --type unigram: SentencePiece's own trainer (C++ API)
  libsentencepiece-dev
  libtorch-dev libgloo-dev
  # fast BLAS: Debian's default libblas.so.3 is the slow reference one; OpenBLAS takes over the alternative
  libopenblas0-pthread
  # app; the run history is SQLite through its C API
  qt6-base-dev libqcustomplot-dev qtkeychain-qt6-dev libsqlite3-dev
  # translations: lupdate/lrelease and Qt6LinguistTools (the build compiles resources/translations/*.ts), and
  # Qt's own qtbase_<lang>.qm for the standard dialogs' buttons
  qt6-l10n-tools qt6-tools-dev qt6-translations-l10n
  # remote
  libssh-dev
  # tests: GoogleTest, benchmarks, reference numerics, a real sshd + Slurm on 127.0.0.1, script lint
  libgtest-dev libgmock-dev libbenchmark-dev python3-torch python3-jinja2
  # the PyPI references (HF tokenizers, hadolint) in a hash-pinned venv: tests/reference/venv.sh; xz unpacks
  # the committed reference tokenizers
  python3-venv xz-utils
  openssh-server openssh-client slurm-wlm munge shellcheck
  # tests/cluster: python3 picks free ports; iproute2: ss shows which process owns a ProxyJump tunnel socket,
  # ip and tc make the multi-node cluster's bridge, veth pairs and throttled links
  python3 iproute2
  # GUI under a virtual display for screenshots
  xvfb
  # tests/fuzz (ctest label fuzz): libFuzzer with ASan and UBSan; flock serializes compiles on shared machines
  clang-14 libclang-rt-14-dev util-linux
  # tests/compat (ctest labels torch2, torch-latest): Debian trixie and forky roots with LibTorch 2.6 and 2.14,
  # made by mmdebstrap
  mmdebstrap curl
)

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages are installed"
else
  echo "install-deps: installing ${#missing[@]} packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update
  "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi

# Report which BLAS torch will run on (see design.md section 7).
blas=$(update-alternatives --query libblas.so.3-x86_64-linux-gnu 2>/dev/null | awk '/^Value:/ {print $2}')
echo "install-deps: libblas.so.3 -> ${blas:-unknown}"
case "$blas" in
  *openblas*) ;;
  *) echo "install-deps: warning: libblas.so.3 is not OpenBLAS; CPU training will be about 10x slower" >&2 ;;
esac
