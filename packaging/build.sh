#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and builds Slipway: installs the system packages, configures the
# CMake preset (default: Release in build/) and builds with two jobs. Usage: packaging/build.sh [preset]
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-default}
bash packaging/install-deps.sh
cmake --preset "$preset"
cmake --build --preset "$preset" -j2
