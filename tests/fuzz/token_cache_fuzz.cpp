// Fuzz harness: a token cache folder as prepare leaves it and other ranks (or another engine version)
// read it: meta.json, then train.tokens, train.blocks, validation.tokens, validation.blocks. Input: the
// five files separated by "\n----\n". Every block the cache hands out is read end to end.
#include <string>

#include "data/token_cache.h"
#include "fuzz_common.h"

using namespace slipway;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    namespace fs = std::filesystem;
    const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 5);
    const std::string dir = fuzz::scratch_dir() + "/cache";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const char* names[] = {"meta.json", "train.tokens", "train.blocks", "validation.tokens",
                           "validation.blocks"};
    for (size_t i = 0; i < 5; ++i)
        fuzz::write_scratch(std::string("cache/") + names[i],
                            i < parts.size() ? parts[i] : std::string_view());

    Result<data::TokenCache> cache = data::TokenCache::open(dir);
    if (!cache.ok()) {
        FUZZ_CHECK(fuzz::names(cache.error(), dir), cache.error());
        return 0;
    }
    volatile uint64_t sink = 0;
    for (data::Split split : {data::Split::kTrain, data::Split::kValidation}) {
        for (size_t b = 0; b < cache->num_blocks(split); ++b) {
            const data::TokenSpan block = cache->block(split, b);
            if (block.size > 0) sink = sink + block[0] + block[block.size - 1];
        }
        const data::TokenSpan all = cache->tokens(split);
        if (all.size > 0) sink = sink + all[0] + all[all.size - 1];
    }
    return 0;
}
