// tokenizer.json parts that several tokenizer tests build their hand-made documents from.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

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

// A SentencePiece-style BPE tokenizer in the Llama-2 layout: <unk> <s> </s>, then `pieces`, then the 256
// <0xNN> byte tokens; Prepend + Replace normalizer, no pre-tokenizer, <s> before each sequence, byte
// fallback and fuse_unk.
inline nlohmann::json sentencepiece_bpe_json(const std::vector<std::string>& pieces,
                                             const std::vector<std::string>& merges) {
    nlohmann::json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
    for (const std::string& piece : pieces)
        vocab[piece] = vocab.size();
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof(name), "<0x%02X>", b);
        vocab[name] = vocab.size();
    }
    return {{"added_tokens",
             {{{"id", 0}, {"content", "<unk>"}, {"special", true}, {"normalized", false}},
              {{"id", 1}, {"content", "<s>"}, {"special", true}, {"normalized", false}},
              {{"id", 2}, {"content", "</s>"}, {"special", true}, {"normalized", false}}}},
            {"normalizer",
             {{"type", "Sequence"},
              {"normalizers",
               {{{"type", "Prepend"}, {"prepend", "▁"}},
                {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "▁"}}}}}},
            {"pre_tokenizer", nullptr},
            {"post_processor",
             {{"type", "TemplateProcessing"},
              {"single",
               {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
              {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
            {"decoder", sentencepiece_decoder_json()},
            {"model",
             {{"type", "BPE"},
              {"unk_token", "<unk>"},
              {"byte_fallback", true},
              {"fuse_unk", true},
              {"vocab", vocab},
              {"merges", merges}}}};
}

}  // namespace slipway::tokenizer
