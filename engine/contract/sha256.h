// SHA-256 (FIPS 180-4) of bytes, as lowercase hex: the names of things a cluster keeps by content (the
// engine bundle, the environment an engine was built in), equal to what `sha256sum` prints there.
#pragma once

#include <string>
#include <string_view>

namespace slipway {

std::string sha256_hex(std::string_view bytes);

}  // namespace slipway
