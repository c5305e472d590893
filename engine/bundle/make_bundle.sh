#!/usr/bin/env bash
# Makes the engine bundle: everything slipway-engine needs to build on a cluster except torch, CUDA, NCCL, a
# compiler and CMake. The engine's sources and CMake, build.sh, and third_party/: the nlohmann-json and CLI11
# headers this machine builds with (header-only, with their licences) and PCRE2's source tarball from Debian,
# pinned by SHA-256 (engine/bundle/deps.cmake). BUNDLE.sha256 is the hash of the contents (every file's
# SHA-256, in name order), which names the bundle wherever it is unpacked; the tarball itself is
# reproducible too (sorted, owner 0, mtime 0).
# Usage: make_bundle.sh SOURCE_DIR OUT.tar.gz NLOHMANN_INCLUDE_DIR CLI11_INCLUDE_DIR PCRE2_TARBALL VERSION
set -euo pipefail
source_dir=$1 out=$2 nlohmann=$3 cli11=$4 pcre2=$5 version=$6
name=slipway-engine-$version
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
dest=$stage/$name
mkdir -p "$dest/third_party/include" "$dest/third_party/licences"

cp "$source_dir/CMakeLists.txt" "$dest/"
(cd "$source_dir" && find engine -type f ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 |
  xargs -0 cp --parents -t "$dest")
cp "$source_dir/engine/bundle/build.sh" "$dest/build.sh"
cp -r "$nlohmann/nlohmann" "$dest/third_party/include/"
cp -r "$cli11/CLI" "$dest/third_party/include/"
cp "$pcre2" "$dest/third_party/"
for pkg in nlohmann-json3-dev libcli11-dev; do
  if [ -f "/usr/share/doc/$pkg/copyright" ]; then
    cp "/usr/share/doc/$pkg/copyright" "$dest/third_party/licences/$pkg.copyright"
  fi
done
tar -xzf "$pcre2" -C "$stage" --wildcards '*/LICENCE'
mv "$stage"/pcre2-*/LICENCE "$dest/third_party/licences/pcre2.LICENCE"

(cd "$dest" && find . -type f ! -name BUNDLE.sha256 -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) \
  >"$dest/BUNDLE.files"
printf '%s  slipway-engine %s\n' "$(sha256sum <"$dest/BUNDLE.files" | cut -d' ' -f1)" "$version" \
  >"$dest/BUNDLE.sha256"
mkdir -p "$(dirname "$out")"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$stage" -cf - "$name" | gzip -n >"$out.tmp"
mv "$out.tmp" "$out"
echo "make_bundle: $out ($(du -h "$out" | cut -f1)), contents $(cut -d' ' -f1 "$dest/BUNDLE.sha256")"
