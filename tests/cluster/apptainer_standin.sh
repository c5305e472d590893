#!/usr/bin/env bash
# A stand-in for `apptainer exec` (and `singularity exec`) on the test cluster's nodes, for the tests of jobs
# that run in an image: IMAGE is a Debian root folder (tests/compat/torch2_root.sh) instead of a .sif, entered
# the way apptainer enters one without setuid: a user namespace (the caller is root inside, nobody else),
# a mount namespace with the host's /proc and /dev, each --bind SRC:DST mounted at DST, then chroot. The
# environment passes through as apptainer passes it, with what a real image's ENV sets: its PATH, LANG
# C.UTF-8 (as NGC's images set it) and CCACHE_DIR (the image's compiler cache, which hashes the locale).
# Usage: apptainer exec [--nv] [--bind SRC[:DST][,...]] [--pwd DIR] IMAGE COMMAND [ARG...]
set -euo pipefail
PATH=$PATH:/usr/sbin:/sbin  # chroot, for a user whose PATH leaves the sbin folders out
usage="usage: apptainer exec [--nv] [--bind SRC[:DST][,...]] [--pwd DIR] IMAGE COMMAND [ARG...]"
[ "${1:-}" = exec ] || { echo "$usage" >&2; exit 255; }
shift
binds=() pwd_inside=$PWD
while [ $# -gt 0 ]; do
  case "$1" in
  --nv) shift ;;  # no GPU on the test cluster: nothing to bind
  --bind | -B) IFS=, read -ra more <<<"$2" && binds+=("${more[@]}") && shift 2 ;;
  --pwd) pwd_inside=$2 && shift 2 ;;
  -*) echo "apptainer (stand-in): unknown option $1" >&2 && exit 255 ;;
  *) break ;;
  esac
done
image=${1:?$usage}
shift
[ $# -gt 0 ] || { echo "$usage" >&2; exit 255; }
[ -x "$image/usr/bin/env" ] || { echo "apptainer (stand-in): $image is not a root folder" >&2; exit 255; }
# Mount points are made where missing, as apptainer's underlay makes them (the image's folder on the way
# must be writable: the tests make the workdir's place in the root writable).
for bind in "${binds[@]}"; do
  target=${bind#*:}
  mkdir -p "$image$target" 2>/dev/null ||
    { echo "apptainer (stand-in): cannot make the mount point $target in $image" >&2; exit 255; }
done

# shellcheck disable=SC2016  # expanded by the inner shell
exec unshare --user --map-root-user --mount --fork bash -c '
  set -euo pipefail
  image=$1 pwd_inside=$2 count=$3
  shift 3
  mount --rbind /proc "$image/proc"
  mount --rbind /dev "$image/dev"
  for _ in $(seq "$count"); do
    mount --rbind "${1%%:*}" "$image${1#*:}"
    shift
  done
  exec chroot "$image" /usr/bin/env -u LC_ALL -u LC_CTYPE -u LC_MESSAGES \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/tmp \
    CCACHE_DIR=/var/cache/ccache /bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$pwd_inside" "$@"
' apptainer "$image" "$pwd_inside" "${#binds[@]}" "${binds[@]}" "$@"
