#!/usr/bin/env bash
# Hostile inputs through the real binaries (issue 14): every file that is wrong must end the command with
# exit code 1 or 2 and a message naming the file (and field or line where there is one); never a signal,
# an abort or a hang. Usage: hostile_test.sh BIN_DIR SOURCE_DIR
set -uo pipefail
bin=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$source_dir/tests/fuzz/hostile/make_inputs.py" "$work" "$source_dir"
failures=0

# expect NAME NEEDLE... -- COMMAND...: exit 1 or 2 within 60 s, stderr+stdout containing every NEEDLE.
expect() {
  local name=$1
  shift
  local needles=()
  while [ "$1" != "--" ]; do
    needles+=("$1")
    shift
  done
  shift
  local out rc
  out=$(timeout 60 "$@" 2>&1 </dev/null)
  rc=$?
  local ok=1
  if [ "$rc" -ne 1 ] && [ "$rc" -ne 2 ]; then ok=0; fi
  for n in "${needles[@]}"; do
    case "$out" in *"$n"*) ;; *) ok=0 ;; esac
  done
  if [ "$ok" -eq 1 ]; then
    echo "ok   $name (exit $rc)"
  else
    echo "FAIL $name: exit $rc (want 1 or 2), expected [${needles[*]}] in:"
    printf '%s\n' "$out" | head -c 2000
    echo
    failures=$((failures + 1))
  fi
}

e="$bin/slipway-engine"
expect config-deep "$work/deep.json" "nested deeper" -- "$e" config validate "$work/deep.json"
expect config-truncated "$work/truncated.json" "invalid JSON" -- "$e" config validate "$work/truncated.json"
expect config-not-utf8 "$work/not-utf8.json" "invalid JSON" -- "$e" config validate "$work/not-utf8.json"
expect config-huge-batch "$work/huge-batch.json" "per_device_train_batch_size" -- "$e" config validate "$work/huge-batch.json"
expect config-print-deep "$work/deep.json" -- "$e" config print "$work/deep.json"
expect from-args-base-deep "$work/deep.json" -- "$e" config from-args --base "$work/deep.json" -- --learning_rate 1e-4
expect sbatch-shell-partition "/slurm/partition" -- "$bin/slipway" render sbatch "$work/shell-partition.json"

for f in tok-id-int-max tok-id-2-40 tok-id-negative tok-id-float tok-added-id; do
  expect "tokenize-$f" "$work/$f.json" "id" -- bash -c "echo '{\"text\": \"hi\"}' | \"$e\" tokenize --tokenizer \"$work/$f.json\""
done
expect tokenize-deep "$work/tok-deep.json" "nested deeper" -- bash -c "echo '{\"text\": \"hi\"}' | \"$e\" tokenize --tokenizer \"$work/tok-deep.json\""
expect decode-big-id "ids" -- bash -c "\"$e\" tokenize --decode --tokenizer \"$source_dir/resources/demo/tokenizer.json\" < \"$work/decode-big.jsonl\""

expect plan-huge-model "$work/model-huge/config.json" "vocab_size" -- "$e" plan "$source_dir/resources/presets/demo-tiny.json" --model-config "$work/model-huge/config.json"
expect plan-many-layers "$work/model-layers/config.json" "num_hidden_layers" -- "$e" plan "$source_dir/resources/presets/demo-tiny.json" --model-config "$work/model-layers/config.json"
expect score-safetensors-shape "$work/model-st/model.safetensors" "shape" -- "$e" score --model "$work/model-st" --tokens "$work/ids.jsonl"
expect score-safetensors-offset "$work/model-offset/model.safetensors" "data_offsets" -- "$e" score --model "$work/model-offset" --tokens "$work/ids.jsonl"
expect score-safetensors-header "$work/model-header/model.safetensors" "header" -- "$e" score --model "$work/model-header" --tokens "$work/ids.jsonl"

# Token files against a real (randomly initialized) demo model: refused by file:line, never converted.
"$e" init-model --config "$source_dir/resources/demo/model/config.json" --out "$work/model-ok" >/dev/null
expect score-ids-float "$work/ids-float.jsonl:2:" "1.5" -- "$e" score --model "$work/model-ok" --tokens "$work/ids-float.jsonl"
expect score-ids-huge "$work/ids-huge.jsonl:1:" "1e+300" -- "$e" score --model "$work/model-ok" --tokens "$work/ids-huge.jsonl"
expect score-ids-negative "$work/ids-negative.jsonl:1:" "id -1 " -- "$e" score --model "$work/model-ok" --tokens "$work/ids-negative.jsonl"
expect score-ids-past-vocab "$work/ids-past-vocab.jsonl:1:" "4096" -- "$e" score --model "$work/model-ok" --tokens "$work/ids-past-vocab.jsonl"
expect score-ids-short "$work/ids-short.jsonl:1:" "at least 2 ids" -- "$e" score --model "$work/model-ok" --tokens "$work/ids-short.jsonl"
expect score-ids-deep "$work/ids-deep.jsonl:1:" "nested deeper" -- "$e" score --model "$work/model-ok" --tokens "$work/ids-deep.jsonl"
expect dump-ids-past-vocab "$work/ids-past-vocab.jsonl:1:" "4096" -- "$e" dump --model "$work/model-ok" --tokens "$work/ids-past-vocab.jsonl" --out "$work/dump.safetensors"

# Evaluation task files and their data against the same model: the task file, or the data file and line.
ev=("$e" eval --model "$work/model-ok" --tokenizer "$source_dir/resources/demo/tokenizer.json" --tasks)
expect eval-tasks-deep "$work/eval-deep.json" "nested deeper" -- "${ev[@]}" "$work/eval-deep.json"
expect eval-data-not-utf8 "$work/not-utf8.jsonl:2" "task \"t\"" -- "${ev[@]}" "$work/eval-data-not-utf8.json"
expect eval-data-deep "$work/data-deep.jsonl:1" "nested deeper" -- "${ev[@]}" "$work/eval-data-deep.json"
expect eval-gold-huge "$work/gold-huge.jsonl:1:" "\"gold\"" -- "${ev[@]}" "$work/eval-gold-huge.json"
expect eval-data-dev-zero "/dev/zero" "not a regular file" -- "${ev[@]}" "$work/eval-dev-zero.json"
expect eval-max-new-tokens "$work/eval-max-new-tokens.json" "max_new_tokens" -- "${ev[@]}" "$work/eval-max-new-tokens.json"
expect eval-prompt-too-long "$work/long.jsonl:1:" "positions" -- "${ev[@]}" "$work/eval-prompt-too-long.json"

# A log is never refused for its lines: the deep line is counted as bad, the command succeeds.
out=$(timeout 60 "$bin/slipway" logs summary --json "$work/deep.log" 2>&1)
rc=$?
case "$out" in *'"bad_lines":1,'*) [ "$rc" -eq 0 ] && echo "ok   logs-summary-deep" ;; *) rc=99 ;; esac
if [ "$rc" -ne 0 ]; then echo "FAIL logs-summary-deep: exit $rc: $out" | head -c 2000; failures=$((failures + 1)); fi

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
