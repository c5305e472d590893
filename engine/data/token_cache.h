// TokenCache: read-only access to a prepared token cache (see token_cache_meta.h for the layout). The
// token and block files are memory-mapped, so every rank can open the same cache at no cost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "contract/status.h"
#include "data/mapped_file.h"
#include "data/token_cache_meta.h"

namespace slipway::data {

// A view of consecutive token ids inside a mapped file.
struct TokenSpan {
    const uint32_t* data = nullptr;
    size_t size = 0;

    const uint32_t* begin() const { return data; }
    const uint32_t* end() const { return data + size; }
    uint32_t operator[](size_t i) const { return data[i]; }
};

class TokenCache {
public:
    // Reads <dir>/meta.json and maps the four data files. Fails, naming the file, on a wrong magic or
    // format version, a missing file, a size that disagrees with the counts in meta.json, or a block
    // offset out of order or out of range.
    static Result<TokenCache> open(const std::string& dir);

    const std::string& path() const { return path_; }
    const CacheMeta& meta() const { return meta_; }
    uint64_t block_size() const { return static_cast<uint64_t>(meta_.block_size); }

    size_t num_blocks(Split split) const { return part(split).num_blocks; }
    size_t num_tokens(Split split) const { return part(split).num_tokens; }
    // Start offset of block `index` (< num_blocks) in the split's tokens.
    uint64_t block_offset(Split split, size_t index) const { return part(split).offsets()[index]; }
    // Block `index` (< num_blocks): block_size tokens.
    TokenSpan block(Split split, size_t index) const {
        return {part(split).tokens_data() + block_offset(split, index), static_cast<size_t>(block_size())};
    }
    // Every token of the split, documents back to back.
    TokenSpan tokens(Split split) const { return {part(split).tokens_data(), part(split).num_tokens}; }

private:
    struct Part {
        MappedFile tokens;
        MappedFile blocks;
        size_t num_tokens = 0;
        size_t num_blocks = 0;
        const uint32_t* tokens_data() const { return static_cast<const uint32_t*>(tokens.data()); }
        const uint64_t* offsets() const { return static_cast<const uint64_t*>(blocks.data()); }
    };
    const Part& part(Split split) const { return parts_[static_cast<int>(split)]; }
    Status open_part(Split split);

    std::string path_;
    CacheMeta meta_;
    Part parts_[2];
};

}  // namespace slipway::data
