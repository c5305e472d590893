// XXH64 (after Yann Collet's xxHash specification) and the file digest of hash.h.
#include "data/hash.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace slipway::data {
namespace {

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kP3 = 0x165667B19E3779F9ull;
constexpr uint64_t kP4 = 0x85EBCA77C2B2AE63ull;
constexpr uint64_t kP5 = 0x27D4EB2F165667C5ull;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the token cache and XXH64 here assume little-endian");

inline uint64_t rotl(uint64_t x, int r) {
    return (x << r) | (x >> (64 - r));
}
inline uint64_t read64(const unsigned char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}
inline uint32_t read32(const unsigned char* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
inline uint64_t xxh_round(uint64_t acc, uint64_t input) {
    return rotl(acc + input * kP2, 31) * kP1;
}
inline uint64_t merge_round(uint64_t acc, uint64_t lane) {
    return (acc ^ xxh_round(0, lane)) * kP1 + kP4;
}

void init_lanes(uint64_t seed, uint64_t lanes[4]) {
    lanes[0] = seed + kP1 + kP2;
    lanes[1] = seed + kP2;
    lanes[2] = seed;
    lanes[3] = seed - kP1;
}

void consume_stripe(uint64_t lanes[4], const unsigned char* p) {
    for (int i = 0; i < 4; ++i)
        lanes[i] = xxh_round(lanes[i], read64(p + 8 * i));
}

// The tail (< 32 bytes) and the final avalanche, given the accumulated state.
uint64_t finalize(uint64_t h, const unsigned char* p, size_t size) {
    while (size >= 8) {
        h = rotl(h ^ xxh_round(0, read64(p)), 27) * kP1 + kP4;
        p += 8;
        size -= 8;
    }
    if (size >= 4) {
        h = rotl(h ^ (static_cast<uint64_t>(read32(p)) * kP1), 23) * kP2 + kP3;
        p += 4;
        size -= 4;
    }
    while (size > 0) {
        h = rotl(h ^ (*p * kP5), 11) * kP1;
        ++p;
        --size;
    }
    h ^= h >> 33;
    h *= kP2;
    h ^= h >> 29;
    h *= kP3;
    h ^= h >> 32;
    return h;
}

uint64_t converge(const uint64_t lanes[4]) {
    uint64_t h = rotl(lanes[0], 1) + rotl(lanes[1], 7) + rotl(lanes[2], 12) + rotl(lanes[3], 18);
    for (int i = 0; i < 4; ++i)
        h = merge_round(h, lanes[i]);
    return h;
}

}  // namespace

uint64_t xxh64(const void* data, size_t size, uint64_t seed) {
    const auto* p = static_cast<const unsigned char*>(data);
    const size_t total = size;
    uint64_t h;
    if (size >= 32) {
        uint64_t lanes[4];
        init_lanes(seed, lanes);
        while (size >= 32) {
            consume_stripe(lanes, p);
            p += 32;
            size -= 32;
        }
        h = converge(lanes);
    } else {
        h = seed + kP5;
    }
    return finalize(h + total, p, size);
}

Xxh64Stream::Xxh64Stream(uint64_t seed) : seed_(seed) {
    init_lanes(seed, lanes_);
}

void Xxh64Stream::update(const void* data, size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    total_ += size;
    if (buffered_ > 0) {
        const size_t take = std::min(size, sizeof(buffer_) - buffered_);
        std::memcpy(buffer_ + buffered_, p, take);
        buffered_ += take;
        p += take;
        size -= take;
        if (buffered_ < sizeof(buffer_)) return;
        consume_stripe(lanes_, buffer_);
        buffered_ = 0;
    }
    while (size >= 32) {
        consume_stripe(lanes_, p);
        p += 32;
        size -= 32;
    }
    std::memcpy(buffer_, p, size);
    buffered_ = size;
}

uint64_t Xxh64Stream::digest() const {
    const uint64_t h = total_ >= 32 ? converge(lanes_) : seed_ + kP5;
    return finalize(h + total_, buffer_, buffered_);
}

std::string hex64(uint64_t value) {
    char text[17];
    std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
    return text;
}

Result<FileDigest> digest_file(const std::string& path) {
    std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) return Status::Error(path + ": cannot open file: " + std::strerror(errno));
    struct stat info {};
    if (fstat(fileno(file.get()), &info) != 0)
        return Status::Error(path + ": cannot stat: " + std::strerror(errno));
    if (S_ISDIR(info.st_mode)) return Status::Error(path + ": is a folder, not a file");
    FileDigest digest;
    digest.mtime_ns = static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
    Xxh64Stream stream;
    std::vector<unsigned char> buffer(1 << 20);
    while (true) {
        const size_t n = std::fread(buffer.data(), 1, buffer.size(), file.get());
        stream.update(buffer.data(), n);
        digest.size += n;
        if (n < buffer.size()) break;
    }
    if (std::ferror(file.get())) return Status::Error(path + ": read error: " + std::strerror(errno));
    digest.hash = stream.digest();
    return digest;
}

}  // namespace slipway::data
