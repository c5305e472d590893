// CRC-32C (Castagnoli), the checksum of TFRecord framing, and the "masked" form TensorFlow stores so that a
// CRC of data that itself holds CRCs stays well distributed.
#pragma once

#include <cstdint>
#include <string_view>

namespace slipway::track {

// CRC-32C of `bytes`, continuing from `crc` (0 to start): crc32c("123456789") == 0xE3069283.
uint32_t crc32c(std::string_view bytes, uint32_t crc = 0);

// TensorFlow's masked CRC: rotate right by 15, plus 0xa282ead8.
uint32_t masked_crc32c(std::string_view bytes);

}  // namespace slipway::track
