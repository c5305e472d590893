// Byte-level BPE training (bpe_trainer.h): word counts -> pair counts -> greedy merges with incremental
// pair-count updates over only the words a merge touches.
#include "tokenizer/bpe_trainer.h"

#include <queue>
#include <unordered_set>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode.h"

namespace slipway::tokenizer {

const char* const kLlama3SplitPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

namespace {

nlohmann::ordered_json pre_tokenizer_json() {
    return {{"type", "Sequence"},
            {"pretokenizers",
             {{{"type", "Split"},
               {"pattern", {{"Regex", kLlama3SplitPattern}}},
               {"behavior", "Isolated"},
               {"invert", false}},
              {{"type", "ByteLevel"},
               {"add_prefix_space", false},
               {"trim_offsets", true},
               {"use_regex", false}}}}};
}

uint64_t key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

struct Candidate {
    int64_t count;
    uint64_t pair;
    bool operator<(const Candidate& o) const {  // max-heap: highest count, then lowest pair ids
        if (count != o.count) return count < o.count;
        return pair > o.pair;
    }
};

}  // namespace

nlohmann::ordered_json special_token_json(int32_t id, const std::string& content) {
    return {{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", false},
            {"rstrip", false}, {"normalized", false}, {"special", true}};
}

nlohmann::ordered_json bos_post_processor_json(const std::string& bos_token, int32_t bos_id) {
    const nlohmann::ordered_json bos_item = {{"SpecialToken", {{"id", bos_token}, {"type_id", 0}}}};
    return {
        {"type", "TemplateProcessing"},
        {"single", {bos_item, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
        {"pair",
         {bos_item,
          {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
          bos_item,
          {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
        {"special_tokens", {{bos_token, {{"id", bos_token}, {"ids", {bos_id}}, {"tokens", {bos_token}}}}}}};
}

BpeTrainer::BpeTrainer(BpeTrainerOptions options) : options_(std::move(options)) {}

Status BpeTrainer::add_text(const std::string& text) {
    static const Result<std::shared_ptr<const PreTokenizer>> pre =
        make_pre_tokenizer(nlohmann::json(pre_tokenizer_json()));
    if (!pre.ok()) return pre.status();
    if (!is_valid_utf8(text)) return Status::Error("text is not valid UTF-8");
    std::vector<Piece> pieces = {{text, true}};
    if (Status s = (*pre)->pre_tokenize(pieces); !s.ok()) return s;
    for (Piece& p : pieces)
        ++word_counts_[std::move(p.text)];
    return Status::Ok();
}

int32_t MergeVocabulary::add(const std::string& token) {
    const auto id = static_cast<int32_t>(tokens.size());
    tokens.push_back(token);
    ids.emplace(token, id);
    return id;
}

std::vector<std::pair<int32_t, int32_t>> learn_merges(MergeVocabulary& vocabulary, WordTable table,
                                                      const MergeLearningOptions& options) {
    std::vector<std::vector<int32_t>>& words = table.words;
    const std::vector<int64_t>& counts = table.counts;
    std::unordered_map<uint64_t, int64_t> pair_counts;
    std::unordered_map<uint64_t, std::unordered_set<int32_t>> pair_words;
    auto account = [&](int32_t w, int64_t sign) {
        const std::vector<int32_t>& s = words[static_cast<size_t>(w)];
        for (size_t i = 0; i + 1 < s.size(); ++i) {
            if (options.can_merge && !options.can_merge(s[i], s[i + 1])) continue;
            const uint64_t k = key(s[i], s[i + 1]);
            pair_counts[k] += sign * counts[static_cast<size_t>(w)];
            if (sign > 0) pair_words[k].insert(w);
        }
    };
    for (size_t w = 0; w < words.size(); ++w)
        account(static_cast<int32_t>(w), +1);
    std::priority_queue<Candidate> heap;
    for (const auto& [k, c] : pair_counts)
        heap.push({c, k});

    std::vector<std::pair<int32_t, int32_t>> merges;
    size_t added = 0;
    while (added < options.new_tokens && !heap.empty()) {
        const Candidate top = heap.top();
        heap.pop();
        const auto current = pair_counts.find(top.pair);
        if (current == pair_counts.end() || current->second != top.count) continue;  // stale entry
        if (top.count < options.min_frequency) break;
        const auto left = static_cast<int32_t>(top.pair >> 32);
        const auto right = static_cast<int32_t>(top.pair & 0xffffffffu);
        const std::string merged =
            vocabulary.tokens[static_cast<size_t>(left)] + vocabulary.tokens[static_cast<size_t>(right)];
        // The same string can come from another split ("ab"+"c" and "a"+"bc"): the merge then maps to
        // the existing token.
        const auto existing = vocabulary.ids.find(merged);
        int32_t new_id = 0;
        if (existing != vocabulary.ids.end()) {
            new_id = existing->second;
        } else {
            new_id = vocabulary.add(merged);
            ++added;
        }
        merges.emplace_back(left, right);
        const std::unordered_set<int32_t> affected = std::move(pair_words[top.pair]);
        pair_words.erase(top.pair);
        std::unordered_set<uint64_t> touched;
        for (int32_t w : affected) {
            std::vector<int32_t>& s = words[static_cast<size_t>(w)];
            for (size_t i = 0; i + 1 < s.size(); ++i)
                touched.insert(key(s[i], s[i + 1]));
            account(w, -1);
            std::vector<int32_t> rewritten;
            rewritten.reserve(s.size());
            for (size_t i = 0; i < s.size(); ++i) {
                if (i + 1 < s.size() && s[i] == left && s[i + 1] == right) {
                    rewritten.push_back(new_id);
                    ++i;
                } else {
                    rewritten.push_back(s[i]);
                }
            }
            s = std::move(rewritten);
            account(w, +1);
            for (size_t i = 0; i + 1 < s.size(); ++i)
                touched.insert(key(s[i], s[i + 1]));
        }
        for (uint64_t k : touched) {
            const auto it = pair_counts.find(k);
            if (it == pair_counts.end()) continue;
            if (it->second <= 0) {
                pair_counts.erase(it);
                pair_words.erase(k);
            } else {
                heap.push({it->second, k});
            }
        }
        if (options.progress && merges.size() % 500 == 0) options.progress(merges.size(), added);
    }
    return merges;
}

Result<nlohmann::ordered_json> BpeTrainer::train(const std::function<void(size_t, size_t)>& progress) {
    const size_t base = 256 + options_.special_tokens.size();
    if (options_.vocab_size < base) {
        return Status::Error("vocab_size must be at least " + std::to_string(base) +
                             " (256 bytes + special tokens)");
    }
    // Ids: 256 byte characters first, then merges, then special tokens at the end (as Llama-3 does).
    MergeVocabulary vocabulary;
    const ByteLevelAlphabet& alphabet = byte_level_alphabet();
    for (int b = 0; b < 256; ++b)
        vocabulary.add(alphabet.byte_to_utf8[static_cast<size_t>(b)]);
    // Words as symbol sequences (each byte-level character is one symbol).
    WordTable table;
    table.words.reserve(word_counts_.size());
    for (const auto& [word, count] : word_counts_) {
        std::vector<int32_t> symbols;
        for (size_t i = 0; i < word.size();) {
            const size_t n = utf8_sequence_length(static_cast<unsigned char>(word[i]));
            symbols.push_back(vocabulary.ids.at(word.substr(i, n)));
            i += n;
        }
        table.words.push_back(std::move(symbols));
        table.counts.push_back(count);
    }
    const size_t target_tokens = options_.vocab_size - options_.special_tokens.size();
    MergeLearningOptions learning;
    learning.new_tokens = target_tokens - vocabulary.tokens.size();
    learning.min_frequency = options_.min_frequency;
    if (progress) {
        learning.progress = [&](size_t, size_t added) { progress(256 + added, target_tokens); };
    }
    const std::vector<std::pair<int32_t, int32_t>> learned =
        learn_merges(vocabulary, std::move(table), learning);
    std::vector<std::string>& tokens = vocabulary.tokens;
    nlohmann::ordered_json merges = nlohmann::ordered_json::array();
    for (const auto& [left, right] : learned)
        merges.push_back(tokens[static_cast<size_t>(left)] + " " + tokens[static_cast<size_t>(right)]);

    nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
    for (size_t i = 0; i < tokens.size(); ++i)
        vocab[tokens[i]] = i;
    nlohmann::ordered_json added = nlohmann::ordered_json::array();
    std::unordered_map<std::string, int32_t> special_ids;
    for (const std::string& special : options_.special_tokens) {
        const auto id = static_cast<int32_t>(tokens.size());
        tokens.push_back(special);
        special_ids[special] = id;
        added.push_back(special_token_json(id, special));
    }
    nlohmann::ordered_json post = nullptr;
    if (!options_.bos_token.empty()) {
        const auto bos = special_ids.find(options_.bos_token);
        if (bos == special_ids.end())
            return Status::Error("bos_token \"" + options_.bos_token + "\" is not a special token");
        post = bos_post_processor_json(options_.bos_token, bos->second);
    }
    return nlohmann::ordered_json{
        {"version", "1.0"},
        {"truncation", nullptr},
        {"padding", nullptr},
        {"added_tokens", added},
        {"normalizer", nullptr},
        {"pre_tokenizer", pre_tokenizer_json()},
        {"post_processor", post},
        {"decoder",
         {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
        {"model",
         {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", nullptr},
          {"continuing_subword_prefix", nullptr},
          {"end_of_word_suffix", nullptr},
          {"fuse_unk", false},
          {"byte_fallback", false},
          {"ignore_merges", false},
          {"vocab", vocab},
          {"merges", merges}}}};
}

}  // namespace slipway::tokenizer
