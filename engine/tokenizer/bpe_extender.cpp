// Vocabulary extension of bpe_extender.h: base-tokenized words (plus characters the base lacks) ->
// learn_merges (bpe_trainer.h) -> the base tokenizer.json with the new tokens and merges appended.
#include "tokenizer/bpe_extender.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "tokenizer/bpe_trainer.h"
#include "tokenizer/unicode.h"

namespace slipway::tokenizer {
namespace {

// SentencePiece's word boundary: Llama-2-style files have no pre-tokenizer, so a whole text is one piece.
constexpr std::string_view kMetaspace = "\xE2\x96\x81";

// Cuts before every U+2581 (as Metaspace's split does), so merges are learned within words.
void cut_at_metaspace(std::string_view piece, std::vector<std::string_view>& words) {
    size_t start = 0;
    for (size_t at = piece.find(kMetaspace, 1); at != std::string_view::npos;
         at = piece.find(kMetaspace, at + kMetaspace.size())) {
        words.push_back(piece.substr(start, at - start));
        start = at;
    }
    words.push_back(piece.substr(start));
}

}  // namespace

Result<BpeExtender> BpeExtender::create(nlohmann::json base, BpeExtendOptions options) {
    try {
        const nlohmann::json& model = base.at("model");
        if (model.value("type", "BPE") != "BPE")
            return Status::Error("model \"" + model.value("type", "") +
                                 "\": only BPE tokenizers can be extended");
        if (!model.at("merges").is_array() || !model.at("vocab").is_object())
            return Status::Error("model: vocab must be an object and merges a list");
    } catch (const nlohmann::json::exception& e) {
        return Status::Error(std::string("model: ") + e.what());
    }
    Result<Tokenizer> tokenizer = Tokenizer::from_json(base);
    if (!tokenizer.ok()) return tokenizer.status();
    return BpeExtender(std::move(base), std::move(*tokenizer), options);
}

Status BpeExtender::add_text(std::string_view text) {
    std::vector<std::string> pieces;
    if (Status s = tokenizer_.pre_tokenize(text, pieces); !s.ok()) return s;
    std::vector<std::string_view> words;
    for (const std::string& piece : pieces) {
        words.clear();
        if (tokenizer_.has_pre_tokenizer()) {
            words.push_back(piece);
        } else {
            cut_at_metaspace(piece, words);
        }
        for (std::string_view word : words)
            ++word_counts_[std::string(word)];
    }
    return Status::Ok();
}

Result<BpeExtension> BpeExtender::extend(const std::function<void(size_t, size_t)>& progress) const {
    nlohmann::json document = base_;
    nlohmann::json& model = document["model"];
    nlohmann::json& vocab = model["vocab"];
    nlohmann::json& merges = model["merges"];
    // Merges in the base's own spelling: "a b" strings (then no token with a space may merge) or pairs.
    const bool string_merges = merges.empty() || merges.front().is_string();

    // Every id in use, model and added tokens alike: new ids go after the highest of them.
    MergeVocabulary vocabulary;
    vocabulary.tokens.resize(tokenizer_.vocab_size());
    for (const auto& [token, id] : vocab.items()) {
        vocabulary.tokens[id.get<size_t>()] = token;
        vocabulary.ids.emplace(token, id.get<int32_t>());
    }
    // The HF library gives an added token the id of its model entry, and otherwise numbers added tokens
    // from the model's vocab size: with more model tokens that would move them. So each added token is
    // also written into the model vocab, at its own id.
    for (const AddedToken& token : tokenizer_.added_tokens()) {
        if (vocabulary.ids.count(token.content) != 0) continue;
        vocabulary.tokens[static_cast<size_t>(token.id)] = token.content;
        vocabulary.ids.emplace(token.content, token.id);
        vocab[token.content] = token.id;
    }
    const auto first_new_id = static_cast<int32_t>(vocabulary.tokens.size());

    // Characters the base vocab lacks (a SentencePiece-style base spells them with <0xNN> or unk; a
    // byte-level base lacks none): the frequent ones become tokens first, so that merges can use them.
    std::map<std::string, int64_t> missing;
    for (const auto& [word, count] : word_counts_) {
        for (size_t i = 0; i < word.size();) {
            const size_t n =
                std::min(utf8_sequence_length(static_cast<unsigned char>(word[i])), word.size() - i);
            std::string character = word.substr(i, n);
            if (vocabulary.ids.count(character) == 0) missing[std::move(character)] += count;
            i += n;
        }
    }
    std::vector<std::pair<int64_t, std::string>> by_count;
    for (auto& [character, count] : missing) {
        if (count >= options_.min_frequency) by_count.emplace_back(-count, character);
    }
    std::sort(by_count.begin(), by_count.end());  // most frequent first, then by bytes
    std::unordered_set<int32_t> new_characters;
    for (size_t i = 0; i < by_count.size() && i < options_.add; ++i)
        new_characters.insert(vocabulary.add(by_count[i].second));

    // Words as the extended vocab starts them: the base's tokens, with each new character as one symbol
    // (the base's merges never involve the bytes it spelled such a character with).
    WordTable table;
    table.words.reserve(word_counts_.size());
    for (const auto& [word, count] : word_counts_) {
        std::vector<int32_t> symbols;
        size_t segment = 0;
        for (size_t i = 0; i < word.size();) {
            const size_t n =
                std::min(utf8_sequence_length(static_cast<unsigned char>(word[i])), word.size() - i);
            const auto id =
                new_characters.empty() ? vocabulary.ids.end() : vocabulary.ids.find(word.substr(i, n));
            if (id != vocabulary.ids.end() && new_characters.count(id->second) != 0) {
                tokenizer_.tokenize_piece(std::string_view(word).substr(segment, i - segment), symbols);
                symbols.push_back(id->second);
                segment = i + n;
            }
            i += n;
        }
        tokenizer_.tokenize_piece(std::string_view(word).substr(segment), symbols);
        table.words.push_back(std::move(symbols));
        table.counts.push_back(count);
    }
    const std::optional<int32_t> unk = tokenizer_.unk_id();
    MergeLearningOptions learning;
    learning.new_tokens = options_.add - new_characters.size();
    learning.min_frequency = options_.min_frequency;
    // Byte-fallback tokens and unk stand for text they do not spell, so they never merge.
    learning.can_merge = [&](int32_t left, int32_t right) {
        for (int32_t id : {left, right}) {
            if (id == unk || tokenizer_.is_byte_fallback(id)) return false;
            if (string_merges && vocabulary.tokens[static_cast<size_t>(id)].find(' ') != std::string::npos)
                return false;
        }
        return true;
    };
    if (progress) learning.progress = [&](size_t, size_t added) { progress(added, options_.add); };
    const std::vector<std::pair<int32_t, int32_t>> learned =
        learn_merges(vocabulary, std::move(table), learning);

    for (size_t id = static_cast<size_t>(first_new_id); id < vocabulary.tokens.size(); ++id)
        vocab[vocabulary.tokens[id]] = id;
    for (const auto& [left, right] : learned) {
        const std::string& l = vocabulary.tokens[static_cast<size_t>(left)];
        const std::string& r = vocabulary.tokens[static_cast<size_t>(right)];
        if (string_merges) {
            merges.push_back(l + " " + r);
        } else {
            merges.push_back({l, r});
        }
    }
    BpeExtension extension;
    extension.new_tokens = vocabulary.tokens.size() - static_cast<size_t>(first_new_id);
    extension.new_merges = learned.size();
    extension.first_new_id = first_new_id;
    extension.document = std::move(document);
    return extension;
}

}  // namespace slipway::tokenizer
