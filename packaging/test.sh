#!/usr/bin/env bash
# The README's test command: set up, build and run the tests (ctest). Usage: packaging/test.sh [--all] [preset]
# Without --all, the labels that only repeat what others check at a greater cost are left out (LONG_LABELS:
# the Debian roots' -full suites, and the ten-minute fuzz runs); --all runs every test there is, those too.
# The Debian roots of the torch2 / torch-latest labels and the PyPI references in forky's root are made from
# the mirrors while the build compiles (they are mostly downloads); their ctest steps then reuse them.
set -euo pipefail
cd "$(dirname "$0")/.."
all=0 preset=default
for arg in "$@"; do
  case "$arg" in
  --all) all=1 ;;
  -*) echo "usage: packaging/test.sh [--all] [preset]" >&2; exit 2 ;;
  *) preset=$arg ;;
  esac
done
LONG_LABELS='-full$|^fuzz-long$'

bash packaging/install-deps.sh
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
roots_pid=
if [ "$(id -u)" -eq 0 ]; then
  cache=${SLIPWAY_TORCH2_CACHE:-$HOME/.cache/slipway/torch2}
  (
    TORCH2_SUITE=trixie bash tests/compat/torch2_root.sh "$cache"
    TORCH2_SUITE=forky bash tests/compat/torch2_root.sh "$cache"
    TORCH2_SUITE=trixie TORCH2_FLAVOR=bare bash tests/compat/torch2_root.sh "$cache"  # cluster-engine
    TORCH2_SUITE=forky bash tests/compat/torch2.sh "$cache" . venv
  ) >"$logs/roots.log" 2>&1 &
  roots_pid=$!
fi
started=$SECONDS
bash packaging/build.sh "$preset"
echo "test.sh: build $((SECONDS - started)) s"
if [ -n "$roots_pid" ]; then
  # A failure here is reported again, with its reason, by the ctest step that needs the root.
  wait "$roots_pid" && echo "test.sh: Debian roots and references ready" ||
    { echo "test.sh: making the Debian roots failed; their log:"; tail -n 20 "$logs/roots.log"; }
fi

ctest_args=(--preset "$preset" --timeout 900)
if [ "$all" = 1 ]; then
  cmake --preset "$preset" -DSLIPWAY_FUZZ_LONG=ON >/dev/null
else
  ctest_args+=(-LE "$LONG_LABELS")
fi
ctest "${ctest_args[@]}"
