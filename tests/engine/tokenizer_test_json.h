// tokenizer.json parts that several tokenizer tests build their hand-made documents from.
#pragma once

#include <nlohmann/json.hpp>

namespace slipway::tokenizer {

// The decoder of SentencePiece-style files with byte fallback (Llama-2, and `tokenizer train --type
// unigram`): U+2581 back to spaces, <0xNN> runs to their bytes, and the first space dropped.
inline nlohmann::json sentencepiece_decoder_json() {
    return {{"type", "Sequence"},
            {"decoders",
             {{{"type", "Replace"}, {"pattern", {{"String", "▁"}}}, {"content", " "}},
              {{"type", "ByteFallback"}},
              {{"type", "Fuse"}},
              {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
}

}  // namespace slipway::tokenizer
