#!/usr/bin/env bash
# The README's test command: set up, build and run every test (ctest). Usage: packaging/test.sh [preset]
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-default}
bash packaging/build.sh "$preset"
ctest --preset "$preset" --timeout 900
