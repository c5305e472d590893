#!/usr/bin/env bash
# The headless `slipway` binary without a cluster: `render sbatch` of every preset passes bash -n and the
# script linter, `render dockerfile` passes hadolint (under tests/remote/dockerfile_lint/hadolint.yaml), and
# `clusters add/list/remove` keep profiles in the XDG config folder (no secrets) with errors that name the
# problem.
# Usage: cli_render_test.sh SLIPWAY SOURCE_DIR HADOLINT
set -euo pipefail
slipway=$1 source_dir=$2 hadolint=$3
hadolint_config=$source_dir/tests/remote/dockerfile_lint/hadolint.yaml
unset "${!HADOLINT_@}"  # hadolint's HADOLINT_* variables (e.g. HADOLINT_IGNORE) override its config file
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CONFIG_HOME=$work/config XDG_DATA_HOME=$work/data
failures=0
check() {  # check DESCRIPTION COMMAND...: runs the command, counts a failure
  local what=$1
  shift
  if ! "$@"; then
    echo "FAIL: $what" >&2
    failures=$((failures + 1))
  fi
}
hadolint_clean() {  # hadolint_clean DOCKERFILE: no finding and no message (a config it cannot read is one)
  local output
  if output=$("$hadolint" --config "$hadolint_config" --no-color "$1" 2>&1) && [ -z "$output" ]; then
    return 0
  fi
  echo "$output" >&2
  return 1
}

# A Dockerfile with real mistakes must fail, or the checks below prove nothing.
printf 'FROM nvcr.io/nvidia/pytorch:24.04-py3\nRUN sudo mkdir -p /scratch\nWORKDIR scratch\n' \
  >"$work/bad.Dockerfile"
if hadolint_clean "$work/bad.Dockerfile" 2>/dev/null; then
  echo "FAIL: hadolint passed a Dockerfile with sudo and a relative WORKDIR" >&2
  failures=$((failures + 1))
fi

for preset in "$source_dir"/resources/presets/*.json; do
  name=$(basename "$preset" .json)
  "$slipway" render sbatch "$preset" >"$work/$name.sbatch"
  check "$name: bash -n" bash -n "$work/$name.sbatch"
  check "$name: shellcheck" shellcheck --shell=bash "$work/$name.sbatch"
  "$slipway" render dockerfile "$preset" >"$work/$name.Dockerfile"
  check "$name: hadolint" hadolint_clean "$work/$name.Dockerfile"
  check "$name: NGC base" grep -q '^FROM nvcr.io/nvidia/pytorch:24.04-py3 AS base$' "$work/$name.Dockerfile"
done
check "mlperf: pyxis flags" grep -q -- '--container-image=/scratch/workdir/mlperf-nvidia+llama2_70b_lora-pyt.sqsh' \
  "$work/mlperf-llama2-70b-lora.sbatch"
check "mlperf: 8 GPUs" grep -qx '#SBATCH --gres=gpu:8' "$work/mlperf-llama2-70b-lora.sbatch"
check "catalogue versions in the Dockerfile" grep -q 'NCCL 2.21.5' "$work/demo-tiny.Dockerfile"

# Profiles.
"$slipway" clusters add lomonosov --host login.example.org --user tikhomirov --proxy-jump gate.example.org \
  --workdir /scratch/tikhomirov/slipway --container pyxis --partition gpu >/dev/null
"$slipway" clusters add local --host 127.0.0.1 --port 2222 >/dev/null
"$slipway" clusters list >"$work/list.txt"
check "list shows both" grep -q 'tikhomirov@login.example.org via gate.example.org' "$work/list.txt"
check "list shows port" grep -q '127.0.0.1:2222' "$work/list.txt"
check "a new profile builds its engine on the cluster" python3 -c "
import json, sys
profiles = {p['name']: p for p in json.load(open('$XDG_CONFIG_HOME/slipway/clusters.json'))['clusters']}
sys.exit(0 if profiles['local']['engine_source'] == 'build' else 1)"
check "profiles are private" test "$(stat -c %a "$XDG_CONFIG_HOME/slipway/clusters.json")" = 600
check "no secrets field" bash -c "! grep -qi -e password -e passphrase '$XDG_CONFIG_HOME/slipway/clusters.json'"
"$slipway" render sbatch "$source_dir/resources/presets/saiga-lora.json" --cluster lomonosov >"$work/saiga.sbatch"
check "profile's default partition" grep -qx '#SBATCH --partition=gpu' "$work/saiga.sbatch"
if "$slipway" render sbatch "$source_dir/resources/presets/mlperf-llama2-70b-lora.json" --cluster local \
  >/dev/null 2>"$work/err.txt"; then
  echo "FAIL: a container run on a bare-metal profile must be refused" >&2
  failures=$((failures + 1))
fi
check "refusal names the field" grep -q '/slurm/container_image' "$work/err.txt"
# Seed 001's job under apptainer with the engine built on the cluster: the run's image exec'd, the setup line
# first, the engine's folder (a preview: its fingerprint is known once the cluster is asked) mounted.
"$slipway" clusters add hpc --host login.example.org --workdir /scratch/tikhomirov/slipway --container apptainer \
  --engine-source build --env-setup 'module load apptainer/1.3' >/dev/null
"$slipway" render sbatch "$source_dir/resources/presets/ruadapt-lora.json" --cluster hpc >"$work/hpc.sbatch"
check "apptainer: shellcheck" shellcheck --shell=bash "$work/hpc.sbatch"
# shellcheck disable=SC2016  # the script's own variables, matched as text
check "apptainer: exec in the image" grep -qxF 'container=(apptainer exec --nv --bind "$mounts" --pwd "$workdir" /scratch/user/ngc_cuda_pytorch_24_04_v1+latest.sqsh)' "$work/hpc.sbatch"
check "apptainer: setup line" grep -qx '  module load apptainer/1.3' "$work/hpc.sbatch"
check "apptainer: the engine built there" grep -qx 'engine=/scratch/tikhomirov/slipway/engines/FINGERPRINT/slipway-engine' "$work/hpc.sbatch"
check "profile keeps the engine source" grep -q '"engine_source": "build"' "$XDG_CONFIG_HOME/slipway/clusters.json"
if "$slipway" clusters add bad --host 'x -oProxyCommand=touch /tmp/pwned' >/dev/null 2>"$work/err.txt"; then
  echo "FAIL: a host with options must be refused" >&2
  failures=$((failures + 1))
fi
check "host refusal names the field" grep -q 'host' "$work/err.txt"
"$slipway" clusters remove local >/dev/null
check "removed" bash -c "! '$slipway' clusters list | grep -q '^local '"
if "$slipway" submit "$source_dir/resources/presets/demo-tiny.json" --cluster nope --batch >/dev/null 2>"$work/err.txt"; then
  echo "FAIL: submit to an unknown cluster must fail" >&2
  failures=$((failures + 1))
fi
check "unknown cluster named" grep -q 'no cluster named "nope"' "$work/err.txt"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "cli_render_test: all checks passed"
