# shellcheck shell=bash
# Sourced by the cluster tests that run in an image that is not the host's, after cluster_script_prelude.sh:
# Debian trixie's bare root (torch2_root.sh, TORCH2_FLAVOR=bare: python3-torch 2.6, a compiler, CMake; no -dev
# package of ICU, PCRE2, nlohmann or CLI11) as the image, entered by a stand-in `apptainer`
# (apptainer_standin.sh: user namespace + chroot) that a profile's env_setup puts on PATH, as
# `module load apptainer` would.
# make_standin_image SOURCE_DIR CACHE_DIR WORKDIR sets $image (the root, bind-mounted where the test user
# reaches it) and $standin (the folder holding `apptainer`), and makes WORKDIR's place in the image; it exits
# 77 (skip) when the root cannot be made here. remove_standin_image undoes it (call it from the EXIT trap).
standin_root="" standin_workdir="" standin_made_home=0 image="" standin=""
: "${suffix:?source cluster_script_prelude.sh first}"
make_standin_image() {
  local source_dir=$1 cache=$2 root_out
  standin_workdir=$3
  root_out=$(TORCH2_SUITE=trixie TORCH2_FLAVOR=bare bash "$source_dir/tests/compat/torch2_root.sh" "$cache") ||
    { echo "skipped: the bare root cannot be made here"; exit 77; }
  standin_root=$(tail -n 1 <<<"$root_out")
  image=/tmp/slipway-image-$suffix
  standin=/tmp/slipway-apptainer-$suffix
  [ -d "$standin_root$SLIPWAY_TEST_USER_HOME" ] || standin_made_home=1
  # The workdir's place in the image writable, so the stand-in can make its mount points there; the image's
  # compiler cache writable by the test user.
  mkdir -p "$image" "$standin" "$standin_root$standin_workdir" "$standin_root/var/cache/ccache"
  chmod 755 "$image" "$standin"
  chmod 777 "$standin_root$standin_workdir"
  chmod -R a+rwX "$standin_root/var/cache/ccache"
  mount --bind "$standin_root" "$image"
  install -m 755 "$source_dir/tests/cluster/apptainer_standin.sh" "$standin/apptainer"
}
remove_standin_image() {
  [ -n "$standin_root" ] || return 0
  umount "$image" 2>/dev/null || true
  rmdir "$image" 2>/dev/null || true
  rm -rf "$standin" "${standin_root:?}$standin_workdir"
  [ "$standin_made_home" = 0 ] || rm -rf "${standin_root:?}$SLIPWAY_TEST_USER_HOME"
}
