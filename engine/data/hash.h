// 64-bit hashing for the token cache: XXH64 (one-shot and streaming, bit-exact with the reference
// xxHash), a whole-file content hash, and hex formatting. Used for cache keys and document dedup.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "contract/status.h"

namespace slipway::data {

// XXH64 of `data` with `seed`, equal to the reference implementation's XXH64().
uint64_t xxh64(const void* data, size_t size, uint64_t seed = 0);
inline uint64_t xxh64(std::string_view text, uint64_t seed = 0) {
    return xxh64(text.data(), text.size(), seed);
}

// Streaming XXH64: update() in any chunking gives the same digest as one xxh64() over the whole input.
class Xxh64Stream {
public:
    explicit Xxh64Stream(uint64_t seed = 0);
    void update(const void* data, size_t size);
    void update(std::string_view text) { update(text.data(), text.size()); }
    uint64_t digest() const;

private:
    uint64_t seed_;
    uint64_t total_ = 0;
    uint64_t lanes_[4];
    unsigned char buffer_[32];
    size_t buffered_ = 0;
};

// SplitMix64's output function: a strong 64-bit mixer (also the generator step of the sampler).
inline uint64_t splitmix64_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// 16 lower-case hex digits.
std::string hex64(uint64_t value);

struct FileDigest {
    uint64_t size = 0;     // bytes
    uint64_t hash = 0;     // XXH64 of the whole content, seed 0
    int64_t mtime_ns = 0;  // modification time, nanoseconds since the epoch
};

// Reads the whole file once. Errors name the file.
Result<FileDigest> digest_file(const std::string& path);

}  // namespace slipway::data
