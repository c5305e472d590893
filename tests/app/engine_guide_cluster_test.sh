#!/usr/bin/env bash
# The Clusters page's first-run guide on the local test cluster (tests/cluster: real sshd + Slurm), in an
# environment that is not the host's: the bare Debian root as an image under a stand-in apptainer
# (tests/cluster/standin_image.sh). Makes the image, then runs the window's test (engine_guide_cluster_test.cpp)
# with where the image, the stand-in and the workdir are.
# Usage: engine_guide_cluster_test.sh GUI_TEST_BINARY SOURCE_DIR CACHE_DIR SCREENSHOT_DIR
set -euo pipefail
binary=$1 source_dir=$2 cache=$3 screenshots=$4
# shellcheck source=SCRIPTDIR/../remote/cluster_script_prelude.sh
source "$source_dir/tests/remote/cluster_script_prelude.sh"
# shellcheck source=SCRIPTDIR/../cluster/standin_image.sh
source "$source_dir/tests/cluster/standin_image.sh"
workdir=$SLIPWAY_TEST_USER_HOME/slipway-guide-$suffix
cleanup() {
  remove_standin_image
  rm -rf "$work" "$workdir"
}
trap cleanup EXIT
make_standin_image "$source_dir" "$cache" "$workdir"
mkdir -p "$screenshots"
SLIPWAY_GUIDE_IMAGE=$image SLIPWAY_GUIDE_STANDIN=$standin SLIPWAY_GUIDE_WORKDIR=$workdir \
  SLIPWAY_GUIDE_SCREENSHOTS=$screenshots QT_QPA_PLATFORM=offscreen "$binary"
