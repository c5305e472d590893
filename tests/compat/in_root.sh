#!/usr/bin/env bash
# Runs a command inside the cached Debian root (torch2_root.sh) with the source tree at /src/slipway,
# read-only. Everything is mounted in a private mount namespace that ends with the command, so nothing stays
# mounted on the host when the command ends or is killed. /usr/local/cuda is mounted too when the host has
# one, so the CUDA/NCCL code paths build against the root's LibTorch, and the host's CA bundle, so the root
# reaches what the host reaches (PyPI). The command sees a clean environment. IN_ROOT_CUDA=0 leaves CUDA out
# (a root that stands for an environment without nvcc).
# Usage: in_root.sh ROOT SOURCE_DIR COMMAND [ARG...]
set -euo pipefail
root=$1 source_dir=$2
shift 2
[ -d "$root/usr" ] || { echo "in_root.sh: no root at $root (run torch2_root.sh)" >&2; exit 1; }
source_dir=$(cd "$source_dir" && pwd)

# pip reaches PyPI from inside (the tests' venvs: tests/reference/venv.sh).
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mkdir -p "$root/src/slipway" "$root/usr/local/cuda" "$root/dev/shm"

# shellcheck disable=SC2016  # expanded by the inner shell
exec unshare --mount --pid --fork --kill-child --propagation private bash -c '
  set -euo pipefail
  root=$1 source_dir=$2
  shift 2
  # The root a mount point of its own: tests that unshare again (a private tmpfs) need / to be one.
  mount --bind "$root" "$root"
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  mount -t tmpfs -o size=50% tmpfs "$root/dev/shm"
  mount --bind "$source_dir" "$root/src/slipway"
  mount -o remount,bind,ro "$root/src/slipway"
  # The root trusts what the host trusts (an egress proxy'"'"'s CA, say): pip reaches PyPI through it.
  if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    mount --bind /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
  fi
  if [ -f /usr/local/cuda/include/nccl.h ] && [ "${IN_ROOT_CUDA:-1}" = 1 ]; then
    mount --bind /usr/local/cuda "$root/usr/local/cuda"
    mount -o remount,bind,ro "$root/usr/local/cuda"
  fi
  exec chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CCACHE_DIR=/var/cache/ccache "$@"
' in_root "$root" "$source_dir" "$@"
