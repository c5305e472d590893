// Opening and checking a token cache (token_cache.h).
#include "data/token_cache.h"

#include <cstdint>
#include <filesystem>

#include "contract/run_config.h"

namespace slipway::data {
namespace {

// A file of `count` elements (`what`) of `element_bytes` each, as meta.json says. Compared by division
// first: a count from meta.json times the element size must not wrap around to the file's size.
Status check_file_size(const std::string& path, uint64_t file_bytes, uint64_t count, uint64_t element_bytes,
                       const char* what) {
    if (count <= file_bytes / element_bytes && file_bytes == count * element_bytes) return Status::Ok();
    const std::string expected = count > UINT64_MAX / element_bytes ? std::string("more than 2^64")
                                                                    : std::to_string(count * element_bytes);
    return Status::Error(path + ": " + std::to_string(file_bytes) + " bytes, expected " + expected + " (" +
                         std::to_string(count) + " " + what + " of " + std::to_string(element_bytes) +
                         " bytes in meta.json): truncated or not from this cache");
}

}  // namespace

Result<TokenCache> TokenCache::open(const std::string& dir) {
    const std::string meta_path = (std::filesystem::path(dir) / kTokenCacheMetaFile).string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(meta_path, ec)) {
        return Status::Error(meta_path + ": missing: " + dir + " is not a complete token cache");
    }
    Result<nlohmann::json> json = read_json_file(meta_path);
    if (!json.ok()) return json.status();
    Result<CacheMeta> meta = meta_from_json(*json, meta_path);
    if (!meta.ok()) return meta.status();
    TokenCache cache;
    cache.path_ = dir;
    cache.meta_ = std::move(meta).value();
    for (const Split split : {Split::kTrain, Split::kValidation}) {
        if (Status s = cache.open_part(split); !s.ok()) return s;
    }
    return cache;
}

Status TokenCache::open_part(Split split) {
    const SplitCounts& counts = meta_.counts(split);
    Part& p = parts_[static_cast<int>(split)];
    const std::string tokens_path = (std::filesystem::path(path_) / tokens_file_name(split)).string();
    const std::string blocks_path = (std::filesystem::path(path_) / blocks_file_name(split)).string();
    Result<MappedFile> tokens = MappedFile::open(tokens_path);
    if (!tokens.ok()) return tokens.status();
    Result<MappedFile> blocks = MappedFile::open(blocks_path);
    if (!blocks.ok()) return blocks.status();
    if (Status s = check_file_size(tokens_path, tokens->size(), counts.tokens, sizeof(uint32_t), "tokens");
        !s.ok())
        return s;
    if (Status s = check_file_size(blocks_path, blocks->size(), counts.blocks, sizeof(uint64_t), "offsets");
        !s.ok())
        return s;
    p.tokens = std::move(tokens).value();
    p.blocks = std::move(blocks).value();
    p.num_tokens = static_cast<size_t>(counts.tokens);
    p.num_blocks = static_cast<size_t>(counts.blocks);
    const uint64_t size = block_size();
    const uint64_t* offsets = p.offsets();
    for (size_t i = 0; i < p.num_blocks; ++i) {
        if ((i > 0 && offsets[i] <= offsets[i - 1]) || offsets[i] > counts.tokens ||
            counts.tokens - offsets[i] < size) {
            return Status::Error(blocks_path + ": block " + std::to_string(i) + " starts at " +
                                 std::to_string(offsets[i]) + ", out of order or past the end of " +
                                 std::to_string(counts.tokens) + " tokens");
        }
    }
    return Status::Ok();
}

}  // namespace slipway::data
