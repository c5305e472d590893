// Mapping a new vocabulary onto an old one (vocab_map.h).
#include "adapt/vocab_map.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "contract/file_system.h"
#include "contract/json_text.h"
#include "contract/utf8.h"
#include "tokenizer/unicode.h"

namespace slipway::adapt {
namespace {

// Whether a decoder or pre-tokenizer spec is, or holds in a Sequence, a ByteLevel step.
bool has_byte_level(const nlohmann::json& spec) {
    if (!spec.is_object()) return false;
    if (spec.value("type", "") == "ByteLevel") return true;
    for (const char* key : {"decoders", "pretokenizers"}) {
        if (spec.contains(key) && spec[key].is_array()) {
            for (const nlohmann::json& step : spec[key])
                if (has_byte_level(step)) return true;
        }
    }
    return false;
}

// The code point of the well-formed sequence of `length` bytes at s[i].
char32_t code_point_at(const std::string& s, size_t i, size_t length) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
    if (length == 1) return byte(0);
    char32_t cp = byte(0) & (0x7F >> length);
    for (size_t k = 1; k < length; ++k)
        cp = (cp << 6) | (byte(k) & 0x3F);
    return cp;
}

bool starts_with(const std::vector<int32_t>& ids, const std::vector<int32_t>& prefix) {
    return ids.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), ids.begin());
}

// The old tokenizer's token for one byte: its byte-level character, or its "<0xNN>" fallback token.
std::optional<int32_t> byte_token(const TokenizerFile& t, unsigned char b) {
    if (t.byte_level) return t.tokenizer.token_to_id(tokenizer::byte_level_alphabet().byte_to_utf8[b]);
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    return t.tokenizer.token_to_id(name);
}

}  // namespace

Result<TokenizerFile> load_tokenizer_file(const std::string& path) {
    Result<tokenizer::Tokenizer> loaded = tokenizer::Tokenizer::from_file(path);
    if (!loaded.ok()) return loaded.status();
    Result<std::string> text = read_file(path);
    if (!text.ok()) return text.status();
    Result<nlohmann::json> document = parse_json_text(*text, path);
    if (!document.ok()) return document.status();
    const bool byte_level = has_byte_level(document->value("decoder", nlohmann::json())) ||
                            has_byte_level(document->value("pre_tokenizer", nlohmann::json()));
    return TokenizerFile{path, std::move(*loaded), byte_level};
}

std::string token_bytes(const std::string& token, bool byte_level) {
    std::string out;
    if (byte_level) {
        const tokenizer::ByteLevelAlphabet& alphabet = tokenizer::byte_level_alphabet();
        for (size_t i = 0; i < token.size();) {
            const size_t length = std::max<size_t>(1, utf8_sequence_at(token, i));
            const char32_t cp = code_point_at(token, i, length);
            if (cp < alphabet.char_to_byte.size() && alphabet.char_to_byte[cp] >= 0)
                out.push_back(static_cast<char>(alphabet.char_to_byte[cp]));
            else
                out.append(token, i, length);  // not of the alphabet: kept as written
            i += length;
        }
        return out;
    }
    unsigned value = 0;
    if (token.size() == 6 && token.compare(0, 3, "<0x") == 0 && token[5] == '>' &&
        std::sscanf(token.c_str() + 3, "%2X", &value) == 1)
        return std::string(1, static_cast<char>(value));
    static const std::string kSpace = "\u2581";
    for (size_t i = 0; i < token.size();) {
        if (token.compare(i, kSpace.size(), kSpace) == 0) {
            out.push_back(' ');
            i += kSpace.size();
        } else {
            out.push_back(token[i++]);
        }
    }
    return out;
}

std::vector<int32_t> old_split(const TokenizerFile& old_tokenizer, const std::string& bytes) {
    std::vector<int32_t> ids;
    if (!is_valid_utf8(bytes)) {
        for (unsigned char b : bytes)
            if (std::optional<int32_t> id = byte_token(old_tokenizer, b)) ids.push_back(*id);
        return ids;
    }
    const tokenizer::Tokenizer& t = old_tokenizer.tokenizer;
    const std::vector<int32_t> prefix = t.encode("\n", false);
    ids = t.encode("\n" + bytes, false);
    if (!starts_with(ids, prefix)) return t.encode(bytes, false);
    ids.erase(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(prefix.size()));
    return ids;
}

Result<VocabMap> map_vocabularies(const TokenizerFile& old_tokenizer, const TokenizerFile& new_tokenizer) {
    VocabMap map;
    map.old_vocab_size = static_cast<int64_t>(old_tokenizer.tokenizer.vocab_size());
    map.new_vocab_size = static_cast<int64_t>(new_tokenizer.tokenizer.vocab_size());
    if (map.old_vocab_size == 0 || map.new_vocab_size == 0)
        return Result<VocabMap>::Error((map.old_vocab_size == 0 ? old_tokenizer.path : new_tokenizer.path) +
                                       ": the tokenizer has an empty vocabulary");
    std::vector<bool> added(static_cast<size_t>(map.new_vocab_size), false);
    for (const tokenizer::AddedToken& token : new_tokenizer.tokenizer.added_tokens())
        added[static_cast<size_t>(token.id)] = true;
    // Tokenizers of different styles write the same text differently ("Ġmir", "▁mir"): theirs are matched
    // by the bytes the tokens stand for, plain tokens before "<0xNN>" byte tokens.
    std::unordered_map<std::string, int32_t> old_by_bytes;
    const bool same_style = old_tokenizer.byte_level == new_tokenizer.byte_level;
    if (!same_style) {
        std::vector<bool> old_added(static_cast<size_t>(map.old_vocab_size), false);
        for (const tokenizer::AddedToken& token : old_tokenizer.tokenizer.added_tokens())
            old_added[static_cast<size_t>(token.id)] = true;
        for (int pass = 0; pass < 2; ++pass) {
            for (int32_t id = 0; id < map.old_vocab_size; ++id) {
                const std::optional<std::string> token = old_tokenizer.tokenizer.id_to_token(id);
                if (!token || (token->rfind("<0x", 0) == 0) != (pass == 1)) continue;
                old_by_bytes.emplace(old_added[static_cast<size_t>(id)]
                                         ? *token
                                         : token_bytes(*token, old_tokenizer.byte_level),
                                     id);
            }
        }
    }
    map.rows.resize(static_cast<size_t>(map.new_vocab_size));
    for (int32_t id = 0; id < map.new_vocab_size; ++id) {
        TokenSource& row = map.rows[static_cast<size_t>(id)];
        const std::optional<std::string> token = new_tokenizer.tokenizer.id_to_token(id);
        if (!token) {
            ++map.all_mean;
            continue;
        }
        const std::string text =
            added[static_cast<size_t>(id)] ? *token : token_bytes(*token, new_tokenizer.byte_level);
        std::optional<int32_t> same = old_tokenizer.tokenizer.token_to_id(*token);
        if (!same_style) {
            const auto found = old_by_bytes.find(text);
            same = found == old_by_bytes.end() ? std::nullopt : std::optional<int32_t>(found->second);
        }
        if (same) {
            row = {RowSource::kSameToken, {*same}};
            ++map.same;
            continue;
        }
        row.old_ids = old_split(old_tokenizer, text);
        row.source = row.old_ids.empty() ? RowSource::kAllMean : RowSource::kSubTokenMean;
        ++(row.old_ids.empty() ? map.all_mean : map.split);
    }
    return map;
}

Result<std::string> append_added_tokens(const std::string& path,
                                        const std::vector<tokenizer::AddedToken>& tokens, int64_t first_id) {
    Result<std::string> text = read_file(path);
    if (!text.ok() || tokens.empty()) return text;
    Result<nlohmann::json> document = parse_json_text(*text, path);
    if (!document.ok()) return document.status();
    nlohmann::json& added = (*document)["added_tokens"];
    if (added.is_null()) added = nlohmann::json::array();
    if (!added.is_array()) return Result<std::string>::Error(path + ": \"added_tokens\" is not a list");
    for (const tokenizer::AddedToken& t : tokens) {
        added.push_back(nlohmann::json{{"id", first_id++},
                                       {"content", t.content},
                                       {"single_word", t.single_word},
                                       {"lstrip", t.lstrip},
                                       {"rstrip", t.rstrip},
                                       {"normalized", t.normalized},
                                       {"special", t.special}});
    }
    return document->dump(2, ' ', false) + "\n";
}

std::vector<std::pair<int32_t, int32_t>> shared_tokens(const VocabMap& map) {
    std::vector<std::pair<int32_t, int32_t>> pairs;
    for (size_t id = 0; id < map.rows.size(); ++id) {
        if (map.rows[id].source == RowSource::kSameToken)
            pairs.emplace_back(map.rows[id].old_ids.front(), static_cast<int32_t>(id));
    }
    std::sort(pairs.begin(), pairs.end());
    return pairs;
}

}  // namespace slipway::adapt
