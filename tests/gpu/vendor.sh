#!/usr/bin/env bash
# Fills tests/gpu/vendor/ (ignored by git) with the engine's build dependencies that a GPU machine with only
# a PyTorch may lack: nlohmann-json, CLI11, PCRE2, ICU (uc), GoogleTest and Gloo headers, taken from this
# Debian 12 machine's packages with `apt-get download` (no root) and unpacked with `dpkg-deb -x`. The folder
# travels with the working tree to the GPU machine, where run.sh puts it first on CMAKE_PREFIX_PATH.
#
# Only static libraries are kept, so the engine needs none of them at run time. ICU's 30 MB data library
# is replaced by ICU's own empty stub (the engine calls only UTF-8/16 conversion and NFC, whose data is
# compiled into libicuuc), linked into libicuuc.a. .pc files get a relocatable prefix (${pcfiledir}).
# Usage: tests/gpu/vendor.sh [VENDOR_DIR]        (default: tests/gpu/vendor)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
vendor="${1:-$here/vendor}"
packages=(nlohmann-json3-dev libcli11-dev libpcre2-dev libicu-dev libgtest-dev libgmock-dev libgloo-dev)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download "${packages[@]}" >/dev/null 2>"$work/apt.log") || {
    cat "$work/apt.log" >&2
    exit 1
}
rm -rf "$vendor"
mkdir -p "$vendor"
for deb in "$work"/*.deb; do
    dpkg-deb -x "$deb" "$work/root"
done

src="$work/root/usr"
dst="$vendor/usr"
arch="$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)"
mkdir -p "$dst/include" "$dst/lib/$arch/pkgconfig" "$dst/lib/$arch/cmake" "$dst/share/cmake"
cp -a "$src/include/nlohmann" "$src/include/CLI" "$src/include/gtest" "$src/include/gmock" \
    "$src/include/gloo" "$src/include/unicode" "$src/include/pcre2.h" "$dst/include/"
cp -a "$src/share/cmake/nlohmann_json" "$src/share/cmake/CLI11" "$dst/share/cmake/"
cp -a "$src/lib/$arch/cmake/GTest" "$dst/lib/$arch/cmake/"
cp -a "$src/lib/$arch"/lib{gtest,gtest_main,gmock,gmock_main,pcre2-8,icuuc}.a "$dst/lib/$arch/"
# pkg-config: prefix relative to the .pc file, so the folder can move (pkg_check_modules finds it through
# CMAKE_PREFIX_PATH).
for pc in libpcre2-8.pc gtest.pc gtest_main.pc gmock.pc gmock_main.pc; do
    # shellcheck disable=SC2016  # ${pcfiledir} is pkg-config's variable, written as is
    sed 's|^prefix=/usr$|prefix=${pcfiledir}/../../..|' "$src/lib/$arch/pkgconfig/$pc" \
        >"$dst/lib/$arch/pkgconfig/$pc"
done

# ICU's stub data library (icu4c/source/stubdata/stubdata.cpp: a table of contents with no entries) as one
# more member of libicuuc.a, which then links on its own.
cat >"$work/stubdata.cpp" <<'CPP'
#include "unicode/udata.h"
#include "unicode/utypes.h"
#include "unicode/uversion.h"
typedef struct {
    uint16_t headerSize;
    uint8_t magic1, magic2;
    UDataInfo info;
    char padding[8];
    uint32_t count, reserved;
    int fakeNameAndData[4];
} ICU_Data_Header;
extern "C" U_EXPORT const ICU_Data_Header U_ICUDATA_ENTRY_POINT = {
    32, 0xda, 0x27,
    {sizeof(UDataInfo), 0, U_IS_BIG_ENDIAN, U_CHARSET_FAMILY, sizeof(UChar), 0, {0x54, 0x6f, 0x43, 0x50},
     {1, 0, 0, 0}, {0, 0, 0, 0}},
    {0, 0, 0, 0, 0, 0, 0, 0}, 0, 0, {0, 0, 0, 0}};
CPP
"${CXX:-c++}" -c -O2 -fPIC -I"$dst/include" "$work/stubdata.cpp" -o "$work/icu_stubdata.o"
ar rs "$dst/lib/$arch/libicuuc.a" "$work/icu_stubdata.o" 2>/dev/null

for deb in "$work"/*.deb; do
    basename "$deb"
done >"$vendor/PACKAGES"
echo "$vendor: $(du -sh "$vendor" | cut -f1) from ${#packages[@]} Debian packages (see $vendor/PACKAGES)"
