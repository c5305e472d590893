#!/usr/bin/env bash
# The docs check (check_docs.py) on the real README.md and docs/*.md (every command shown real, every link
# there), and on a planted page, where it must fail naming each planted problem by file:line.
# Usage: docs_check_test.sh SLIPWAY SLIPWAY_ENGINE SOURCE_DIR
set -euo pipefail
slipway=$1 engine=$2 source_dir=$3
check=$source_dir/tests/docs/check_docs.py
python3 "$check" --slipway "$slipway" --engine "$engine" --root "$source_dir"
status=0
out=$(python3 "$check" --slipway "$slipway" --engine "$engine" --root "$source_dir/tests/docs" \
  "$source_dir/tests/docs/planted.md") || status=$?
echo "$out"
[ "$status" = 1 ] || { echo "FAIL: the planted page passed the check (exit $status)"; exit 1; }
for expected in "planted.md:3: the link no/such/file.md points at nothing" \
  "planted.md:3: slipway engine build: no option --logs" \
  "planted.md:6: slipway-engine train: no option --no_such_flag" \
  "planted.md:8: slipway submit --: no training-script flag --max_stepz" \
  "planted.md:9: slipway: no subcommand clustrs"; do
  grep -qF "$expected" <<<"$out" || { echo "FAIL: the check did not say: $expected"; exit 1; }
done
echo "docs_check: the planted page's 5 problems named"
