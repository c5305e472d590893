#!/usr/bin/env bash
# Runs the engine stage of a Dockerfile that `slipway render dockerfile` writes, command for command, in
# the Debian trixie root (LibTorch 2.6 from python3-torch, found through torch.utils.cmake_prefix_path as
# in an NGC image). What Docker would do differently is done here by hand and said: COPY of the build
# context is the read-only mount of this source tree at /src/slipway, and the pip install of cmake is left
# out (PyPI is not reachable here; the root's own cmake builds instead). Any other line the stage gains
# fails this check, so a changed Dockerfile is looked at here again.
# Usage: dockerfile_engine_stage.sh SLIPWAY_BIN ROOT SOURCE_DIR [RUN.json]
set -euo pipefail
slipway=$1 root=$2 source_dir=$3
run_file=${4:-$source_dir/resources/presets/ruadapt-lora.json}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$slipway" render dockerfile "$run_file" > "$work/Dockerfile"
# One instruction per line (continuations joined), then the engine stage and the final stage apart.
sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$work/Dockerfile" | grep -v '^#' > "$work/instructions"
awk '/^FROM .* AS engine$/ {on = 1; next} /^FROM / {on = 0} on && NF' "$work/instructions" > "$work/engine_stage"
awk '/^FROM base$/ {on = 1; next} on && NF' "$work/instructions" > "$work/final_stage"
[ -s "$work/engine_stage" ] || { echo "no engine stage in the rendered Dockerfile:"; cat "$work/Dockerfile"; exit 1; }
echo "engine stage of $(basename "$run_file")'s Dockerfile:"
cat "$work/engine_stage"

# The torch2 build step's ccache: its build folder is a sibling of /src/build, so this stage compiles from
# the objects that step made (a second full build of the engine otherwise).
# shellcheck source=SCRIPTDIR/root_ccache.sh
source "$here/root_ccache.sh"
ccache_env+=(CMAKE_CXX_COMPILER_LAUNCHER=ccache)
while IFS= read -r line; do
  case "$line" in
  "COPY . /src/slipway")
    echo "== COPY: this source tree is mounted read-only at /src/slipway" ;;
  "RUN python -m pip install "*" cmake=="*)
    echo "== left out (no PyPI here; the root's cmake $(chroot "$root" cmake --version | head -1 | awk '{print $3}') builds): ${line#RUN }" ;;
  "RUN "*)
    echo "== RUN ${line#RUN }"
    started=$(date +%s)
    bash "$here/in_root.sh" "$root" "$source_dir" "${ccache_env[@]}" /bin/sh -c "${line#RUN }"
    echo "== done in $(( $(date +%s) - started )) s" ;;
  *)
    echo "the engine stage has an instruction this check does not know: $line"
    exit 1 ;;
  esac
done < "$work/engine_stage"

# The final stage copies the binary out and runs it once.
copy=$(grep '^COPY --from=engine ' "$work/final_stage") || { echo "the final stage copies no engine"; exit 1; }
binary=$(echo "$copy" | awk '{print $3}')
grep -qx 'RUN slipway-engine --version' "$work/final_stage" || { echo "the final stage does not run the engine"; exit 1; }
bash "$here/in_root.sh" "$root" "$source_dir" "$binary" --version
bash "$here/in_root.sh" "$root" "$source_dir" "$binary" config validate "/src/slipway/${run_file#"$source_dir"/}"
# shellcheck disable=SC2016  # dpkg-query's own format
version=$(chroot "$root" dpkg-query -W -f='${Version}' libtorch-dev)
echo "the Dockerfile's engine stage built $binary against LibTorch $version (python3-torch's cmake_prefix_path)"
