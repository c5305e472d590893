// BPE merge algorithm of bpe.h, following the HF tokenizers library's Word::merge_all.
#include "tokenizer/bpe.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <queue>

#include <nlohmann/json.hpp>

#include "tokenizer/unicode.h"

namespace slipway::tokenizer {
namespace {

std::atomic<uint64_t> next_instance_id{1};

// Cache of piece -> ids, one per thread and model; bounded so a long run doesn't grow without limit.
struct WordCache {
    uint64_t owner = 0;
    std::unordered_map<std::string, std::vector<int32_t>> entries;
};
constexpr size_t kCacheCapacity = 200000;
constexpr size_t kMaxCachedPieceBytes = 256;

struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
    uint32_t length;  // bytes; 0 once merged into its left neighbour
};

struct QueuedMerge {
    int32_t rank;
    int32_t position;
    int32_t new_id;
    bool operator<(const QueuedMerge& other) const {  // max-heap: invert to pop lowest rank, then leftmost
        if (rank != other.rank) return rank > other.rank;
        return position > other.position;
    }
};

}  // namespace

Result<BpeModel> BpeModel::from_json(const nlohmann::json& model) {
    BpeModel bpe;
    bpe.instance_id_ = next_instance_id++;
    try {
        const auto get_string = [&model](const char* key) -> std::string {
            const auto it = model.find(key);
            return it == model.end() || it->is_null() ? std::string() : it->get<std::string>();
        };
        const auto get_bool = [&model](const char* key) {
            const auto it = model.find(key);
            return it != model.end() && it->is_boolean() && it->get<bool>();
        };
        if (model.contains("dropout") && !model["dropout"].is_null() && model["dropout"].get<double>() > 0) {
            return Status::Error("model.dropout: BPE dropout is not supported (it is for training only)");
        }
        const nlohmann::json& vocab = model.at("vocab");
        if (!vocab.is_object()) return Status::Error("model.vocab: must be an object of token -> id");
        int32_t max_id = -1;
        bpe.vocab_.reserve(vocab.size());
        for (const auto& [token, id] : vocab.items()) {
            Result<int32_t> i = parse_token_id(id, "model.vocab[\"" + token + "\"]");
            if (!i.ok()) return i.status();
            bpe.vocab_.emplace(token, *i);
            max_id = std::max(max_id, *i);
        }
        bpe.id_to_token_.resize(static_cast<size_t>(max_id + 1));
        for (const auto& [token, id] : vocab.items())  // file order: the last token of a shared id wins
            bpe.id_to_token_[static_cast<size_t>(id.get<int32_t>())] = token;
        const nlohmann::json& merges = model.at("merges");
        if (!merges.is_array()) return Status::Error("model.merges: must be a list");
        bpe.merges_.reserve(merges.size());
        int32_t rank = 0;
        for (const nlohmann::json& merge : merges) {
            std::string left, right;
            if (merge.is_string()) {  // "a b"
                const std::string s = merge.get<std::string>();
                const size_t space = s.find(' ', 1);
                if (space == std::string::npos)
                    return Status::Error("model.merges[" + std::to_string(rank) + "]: \"" + s +
                                         "\" is not \"a b\"");
                left = s.substr(0, space);
                right = s.substr(space + 1);
            } else if (merge.is_array() && merge.size() == 2) {  // ["a", "b"]
                left = merge[0].get<std::string>();
                right = merge[1].get<std::string>();
            } else {
                return Status::Error("model.merges[" + std::to_string(rank) +
                                     "]: must be \"a b\" or [\"a\", \"b\"]");
            }
            const auto l = bpe.vocab_.find(left), r = bpe.vocab_.find(right);
            const auto merged = bpe.vocab_.find(left + right);
            if (l == bpe.vocab_.end() || r == bpe.vocab_.end() || merged == bpe.vocab_.end()) {
                return Status::Error("model.merges[" + std::to_string(rank) + "]: \"" + left + " " + right +
                                     "\" uses a token missing from the vocab");
            }
            // The first occurrence of a pair wins, as in the HF library.
            bpe.merges_.emplace(pair_key(l->second, r->second), Merge{rank, merged->second});
            ++rank;
        }
        const std::string unk = get_string("unk_token");
        if (!unk.empty()) {
            const auto it = bpe.vocab_.find(unk);
            if (it == bpe.vocab_.end())
                return Status::Error("model.unk_token: \"" + unk + "\" is not in the vocab");
            bpe.unk_id_ = it->second;
        }
        bpe.continuing_subword_prefix_ = get_string("continuing_subword_prefix");
        bpe.end_of_word_suffix_ = get_string("end_of_word_suffix");
        bpe.byte_fallback_ = get_bool("byte_fallback");
        bpe.fuse_unk_ = get_bool("fuse_unk");
        bpe.ignore_merges_ = get_bool("ignore_merges");
        for (int b = 0; b < 256; ++b) {
            const auto it = bpe.vocab_.find(byte_token_name(static_cast<unsigned char>(b)));
            bpe.byte_token_ids_[static_cast<size_t>(b)] = it == bpe.vocab_.end() ? -1 : it->second;
            if (it != bpe.vocab_.end()) bpe.byte_token_id_set_.insert(it->second);
        }
    } catch (const nlohmann::json::exception& e) {
        return Status::Error(std::string("model: ") + e.what());
    }
    return bpe;
}

std::optional<int32_t> BpeModel::token_to_id(std::string_view token) const {
    const auto it = vocab_.find(std::string(token));
    if (it == vocab_.end()) return std::nullopt;
    return it->second;
}

const std::string* BpeModel::id_to_token(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= id_to_token_.size()) return nullptr;
    return &id_to_token_[static_cast<size_t>(id)];
}

bool BpeModel::is_byte_fallback_token(int32_t id) const {
    return byte_fallback_ && byte_token_id_set_.count(id) != 0;
}

void BpeModel::tokenize(std::string_view piece, std::vector<int32_t>& out) const {
    if (piece.empty()) return;
    if (ignore_merges_) {  // Llama-3: a piece that is a whole token skips the merges
        const auto it = vocab_.find(std::string(piece));
        if (it != vocab_.end()) {
            out.push_back(it->second);
            return;
        }
    }
    if (piece.size() > kMaxCachedPieceBytes) {
        merge_word(piece, out);
        return;
    }
    thread_local WordCache cache;
    if (cache.owner != instance_id_) {
        cache.entries.clear();
        cache.owner = instance_id_;
    }
    const std::string key(piece);
    const auto hit = cache.entries.find(key);
    if (hit != cache.entries.end()) {
        out.insert(out.end(), hit->second.begin(), hit->second.end());
        return;
    }
    const size_t start = out.size();
    merge_word(piece, out);
    if (cache.entries.size() >= kCacheCapacity) cache.entries.clear();
    cache.entries.emplace(key,
                          std::vector<int32_t>(out.begin() + static_cast<std::ptrdiff_t>(start), out.end()));
}

void BpeModel::merge_word(std::string_view word, std::vector<int32_t>& out) const {
    std::vector<Symbol> symbols;
    symbols.reserve(word.size());
    auto add = [&symbols](int32_t id, size_t length) {
        const auto index = static_cast<int32_t>(symbols.size());
        symbols.push_back({id, index - 1, index + 1, static_cast<uint32_t>(length)});
    };
    bool has_pending_unk = false;  // an unknown run waiting to be added (fuse_unk joins runs)
    size_t pending_unk_length = 0;
    std::string scratch;
    for (size_t i = 0; i < word.size();) {
        const size_t length =
            std::min(utf8_sequence_length(static_cast<unsigned char>(word[i])), word.size() - i);
        const bool first = i == 0, last = i + length == word.size();
        std::string_view character = word.substr(i, length);
        if ((!first && !continuing_subword_prefix_.empty()) || (last && !end_of_word_suffix_.empty())) {
            scratch.assign(first ? "" : continuing_subword_prefix_);
            scratch.append(character);
            if (last) scratch.append(end_of_word_suffix_);
            character = scratch;
        }
        const auto it = vocab_.find(std::string(character));
        if (it != vocab_.end()) {
            if (has_pending_unk) {
                add(*unk_id_, pending_unk_length);
                has_pending_unk = false;
            }
            add(it->second, length);
        } else {
            bool fell_back = false;
            if (byte_fallback_) {
                fell_back = true;
                for (unsigned char b : character)
                    fell_back = fell_back && byte_token_ids_[b] >= 0;
                if (fell_back) {
                    for (unsigned char b : character)
                        add(byte_token_ids_[b], 1);
                }
            }
            if (!fell_back && unk_id_) {
                if (has_pending_unk && fuse_unk_) {
                    pending_unk_length += length;
                } else {
                    if (has_pending_unk) add(*unk_id_, pending_unk_length);
                    has_pending_unk = true;
                    pending_unk_length = length;
                }
            }
        }
        i += length;
    }
    if (has_pending_unk) add(*unk_id_, pending_unk_length);
    if (symbols.empty()) return;
    symbols.back().next = -1;

    std::priority_queue<QueuedMerge> queue;
    auto push_pair = [&](int32_t position) {
        const Symbol& left = symbols[static_cast<size_t>(position)];
        if (left.next < 0) return;
        const auto it = merges_.find(pair_key(left.id, symbols[static_cast<size_t>(left.next)].id));
        if (it != merges_.end()) queue.push({it->second.rank, position, it->second.new_id});
    };
    for (size_t i = 0; i + 1 < symbols.size(); ++i)
        push_pair(static_cast<int32_t>(i));
    while (!queue.empty()) {
        const QueuedMerge top = queue.top();
        queue.pop();
        Symbol& left = symbols[static_cast<size_t>(top.position)];
        if (left.length == 0 || left.next < 0) continue;
        Symbol& right = symbols[static_cast<size_t>(left.next)];
        const auto it = merges_.find(pair_key(left.id, right.id));
        if (it == merges_.end() || it->second.rank != top.rank || it->second.new_id != top.new_id)
            continue;  // stale
        left.id = top.new_id;
        left.length += right.length;
        right.length = 0;
        left.next = right.next;
        if (right.next >= 0) symbols[static_cast<size_t>(right.next)].prev = top.position;
        if (left.prev >= 0) push_pair(left.prev);
        push_pair(top.position);
    }
    for (const Symbol& s : symbols) {
        if (s.length != 0) out.push_back(s.id);
    }
}

}  // namespace slipway::tokenizer
