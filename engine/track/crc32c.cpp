// A table-driven CRC-32C: event files are written at log steps only, so a byte at a time is plenty.
#include "track/crc32c.h"

#include <array>

namespace slipway::track {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78;  // Castagnoli, reflected

constexpr std::array<uint32_t, 256> make_table() {
    std::array<uint32_t, 256> table{};
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t crc = i;
        for (int bit = 0; bit < 8; ++bit)
            crc = (crc & 1) ? (crc >> 1) ^ kPolynomial : crc >> 1;
        table[i] = crc;
    }
    return table;
}

constexpr std::array<uint32_t, 256> kTable = make_table();

}  // namespace

uint32_t crc32c(std::string_view bytes, uint32_t crc) {
    crc = ~crc;
    for (const char c : bytes)
        crc = kTable[(crc ^ static_cast<uint8_t>(c)) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

uint32_t masked_crc32c(std::string_view bytes) {
    const uint32_t crc = crc32c(bytes);
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8U;
}

}  // namespace slipway::track
