// Writes a token cache (layout in token_cache_meta.h) into a temporary sibling folder
// <cache_dir>/<key>.tmp.<host>.<pid> and renames it to <cache_dir>/<key> only once everything, meta.json
// last, is written and synced. A writer destroyed without commit() removes its temporary folder, and a
// killed process leaves only a .tmp folder that no reader takes for a cache.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "contract/file_system.h"
#include "contract/status.h"
#include "data/token_cache_meta.h"

namespace slipway::data {

class TokenCacheWriter {
public:
    // Creates the temporary folder and the four empty data files. `cache_dir` must exist.
    static Result<TokenCacheWriter> create(const std::string& cache_dir, const std::string& key,
                                           FileSystem& fs = default_file_system());

    TokenCacheWriter(TokenCacheWriter&&) noexcept;
    TokenCacheWriter& operator=(TokenCacheWriter&&) noexcept;
    ~TokenCacheWriter();  // removes the temporary folder unless committed

    Status append_tokens(Split split, const std::vector<uint32_t>& tokens);
    Status append_blocks(Split split, const std::vector<uint64_t>& offsets);

    // Writes meta.json, syncs, and renames the folder into place. Returns the final path. When another
    // process committed the same key first, its complete cache is kept and its path returned.
    Result<std::string> commit(const CacheMeta& meta);

    std::string temporary_path() const;

private:
    struct Impl;
    explicit TokenCacheWriter(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// ".tmp.<host>.<pid>": the suffix of this process's temporary folders.
std::string temporary_suffix();

// Removes <cache_dir>/*.tmp.<this host>.<pid> folders whose process no longer runs (a killed prepare).
// Folders of other hosts are left alone: the cache folder may be shared between nodes. Returns how many.
size_t remove_stale_temporaries(const std::string& cache_dir);

}  // namespace slipway::data
