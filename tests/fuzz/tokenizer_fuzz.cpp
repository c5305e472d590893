// Fuzz harness: tokenizer.json as users download and share it (ids, merges, added tokens, normalizers,
// pre-tokenizers, decoders), then encode and decode with it. Input: the tokenizer.json bytes, optionally
// "\n----\n" a text to encode (its ids are decoded again) and "\n----\n" raw little-endian ids to decode.
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "tokenizer/tokenizer.h"

using namespace slipway;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 3);
    const std::string path = fuzz::write_scratch("tokenizer.json", parts[0]);
    Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_file(path);
    if (!tok.ok()) {
        FUZZ_CHECK(fuzz::names(tok.error(), path), tok.error());
        return 0;
    }
    const std::string_view text = parts.size() > 1 ? parts[1] : std::string_view("Hello, world! Привет 123");
    Result<std::vector<int32_t>> ids = tok->encode_checked(text, /*add_special_tokens=*/true);
    if (ids.ok()) {
        for (int32_t id : *ids)
            FUZZ_CHECK(id >= 0 && static_cast<size_t>(id) < tok->vocab_size(), "id " + std::to_string(id));
        (void)tok->decode(*ids);
        (void)tok->decode(*ids, /*skip_special_tokens=*/true);
    }
    if (parts.size() > 2) {
        std::vector<int32_t> raw(parts[2].size() / 4);
        if (!raw.empty()) std::memcpy(raw.data(), parts[2].data(), raw.size() * 4);
        (void)tok->decode(raw);
    }
    return 0;
}
