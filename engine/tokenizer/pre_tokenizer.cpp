// The pre-tokenizer components of pre_tokenizer.h, with HF's delimiter behaviours.
#include "tokenizer/pre_tokenizer.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "tokenizer/regex.h"
#include "tokenizer/unicode.h"

namespace slipway::tokenizer {
namespace {

// GPT-2's pattern, used by ByteLevel when use_regex is true.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

Status split_pieces(std::vector<Piece>& pieces, const Regex& regex, SplitBehavior behavior, bool invert) {
    std::vector<Piece> out;
    out.reserve(pieces.size() * 4);
    std::vector<std::pair<size_t, size_t>> matches;
    for (Piece& piece : pieces) {
        if (Status s = regex.find_all(piece.text, matches); !s.ok())
            return Status::Error("pre_tokenizer: " + s.message());
        for (const auto& [begin, end] : split_by_matches(piece.text.size(), matches, behavior, invert)) {
            out.push_back({piece.text.substr(begin, end - begin), piece.at_input_start && begin == 0});
        }
    }
    pieces = std::move(out);
    return Status::Ok();
}

class Split : public PreTokenizer {
public:
    Split(std::shared_ptr<const Regex> regex, SplitBehavior behavior, bool invert)
        : regex_(std::move(regex)), behavior_(behavior), invert_(invert) {}
    Status pre_tokenize(std::vector<Piece>& pieces) const override {
        return split_pieces(pieces, *regex_, behavior_, invert_);
    }

private:
    std::shared_ptr<const Regex> regex_;
    SplitBehavior behavior_;
    bool invert_;
};

class ByteLevel : public PreTokenizer {
public:
    ByteLevel(bool add_prefix_space, std::shared_ptr<const Regex> regex)
        : add_prefix_space_(add_prefix_space), regex_(std::move(regex)) {}
    Status pre_tokenize(std::vector<Piece>& pieces) const override {
        if (add_prefix_space_) {
            for (Piece& p : pieces) {
                if (p.text.empty() || p.text[0] != ' ') p.text.insert(0, " ");
            }
        }
        if (regex_) {
            if (Status s = split_pieces(pieces, *regex_, SplitBehavior::kIsolated, false); !s.ok()) return s;
        }
        const ByteLevelAlphabet& alphabet = byte_level_alphabet();
        for (Piece& p : pieces) {
            std::string mapped;
            mapped.reserve(p.text.size() * 2);
            for (unsigned char b : p.text)
                mapped += alphabet.byte_to_utf8[b];
            p.text = std::move(mapped);
        }
        return Status::Ok();
    }

private:
    bool add_prefix_space_;
    std::shared_ptr<const Regex> regex_;
};

class Metaspace : public PreTokenizer {
public:
    enum class Prepend { kAlways, kFirst, kNever };
    Metaspace(std::string replacement, Prepend prepend, bool split)
        : replacement_(std::move(replacement)), prepend_(prepend), split_(split) {}
    Status pre_tokenize(std::vector<Piece>& pieces) const override {
        std::vector<Piece> out;
        for (Piece& p : pieces) {
            std::string replaced;
            for (char c : p.text) {
                if (c == ' ') {
                    replaced += replacement_;
                } else {
                    replaced += c;
                }
            }
            const bool starts = replaced.compare(0, replacement_.size(), replacement_) == 0;
            if (!starts &&
                (prepend_ == Prepend::kAlways || (prepend_ == Prepend::kFirst && p.at_input_start))) {
                replaced.insert(0, replacement_);
            }
            if (!split_) {
                out.push_back({std::move(replaced), p.at_input_start});
                continue;
            }
            std::vector<std::pair<size_t, size_t>> matches;
            for (size_t at = replaced.find(replacement_); at != std::string::npos;
                 at = replaced.find(replacement_, at + replacement_.size())) {
                matches.emplace_back(at, at + replacement_.size());
            }
            for (const auto& [b, e] :
                 split_by_matches(replaced.size(), matches, SplitBehavior::kMergedWithNext, false)) {
                out.push_back({replaced.substr(b, e - b), p.at_input_start && b == 0});
            }
        }
        pieces = std::move(out);
        return Status::Ok();
    }

private:
    std::string replacement_;
    Prepend prepend_;
    bool split_;
};

class Sequence : public PreTokenizer {
public:
    explicit Sequence(std::vector<std::shared_ptr<const PreTokenizer>> parts) : parts_(std::move(parts)) {}
    Status pre_tokenize(std::vector<Piece>& pieces) const override {
        for (const auto& p : parts_) {
            if (Status s = p->pre_tokenize(pieces); !s.ok()) return s;
        }
        return Status::Ok();
    }

private:
    std::vector<std::shared_ptr<const PreTokenizer>> parts_;
};

Result<SplitBehavior> parse_behavior(const std::string& name) {
    if (name == "Removed") return SplitBehavior::kRemoved;
    if (name == "Isolated") return SplitBehavior::kIsolated;
    if (name == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
    if (name == "MergedWithNext") return SplitBehavior::kMergedWithNext;
    if (name == "Contiguous") return SplitBehavior::kContiguous;
    return Status::Error("pre_tokenizer Split: unknown behavior \"" + name + "\"");
}

}  // namespace

std::vector<std::pair<size_t, size_t>> split_by_matches(size_t text_size,
                                                        const std::vector<std::pair<size_t, size_t>>& matches,
                                                        SplitBehavior behavior, bool invert) {
    // Segments covering the text, each flagged as delimiter or not (empty gaps are skipped, as in HF).
    std::vector<std::pair<std::pair<size_t, size_t>, bool>> segments;
    size_t previous = 0;
    for (const auto& [begin, end] : matches) {
        if (begin > previous) segments.push_back({{previous, begin}, invert});
        segments.push_back({{begin, end}, !invert});
        previous = end;
    }
    if (previous < text_size) segments.push_back({{previous, text_size}, invert});

    std::vector<std::pair<size_t, size_t>> out;
    bool previous_match = false;
    switch (behavior) {
        case SplitBehavior::kIsolated:
            for (const auto& s : segments)
                out.push_back(s.first);
            break;
        case SplitBehavior::kRemoved:
            for (const auto& s : segments) {
                if (!s.second) out.push_back(s.first);
            }
            break;
        case SplitBehavior::kMergedWithPrevious:
            for (const auto& [range, is_match] : segments) {
                if (is_match && !previous_match && !out.empty()) {
                    out.back().second = range.second;
                } else {
                    out.push_back(range);
                }
                previous_match = is_match;
            }
            break;
        case SplitBehavior::kMergedWithNext:
            for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
                if (it->second && !previous_match && !out.empty()) {
                    out.back().first = it->first.first;
                } else {
                    out.push_back(it->first);
                }
                previous_match = it->second;
            }
            std::reverse(out.begin(), out.end());
            break;
        case SplitBehavior::kContiguous:
            for (const auto& [range, is_match] : segments) {
                if (is_match == previous_match && !out.empty()) {
                    out.back().second = range.second;
                } else {
                    out.push_back(range);
                }
                previous_match = is_match;
            }
            break;
    }
    return out;
}

Result<std::shared_ptr<const PreTokenizer>> make_pre_tokenizer(const nlohmann::json& spec) {
    using Ptr = std::shared_ptr<const PreTokenizer>;
    if (spec.is_null()) return Ptr();
    try {
        const std::string type = spec.at("type").get<std::string>();
        if (type == "Split") {
            const nlohmann::json& pattern = spec.at("pattern");
            const std::string regex_text = pattern.contains("Regex")
                                               ? pattern["Regex"].get<std::string>()
                                               : Regex::escape(pattern.at("String").get<std::string>());
            Result<std::shared_ptr<const Regex>> regex = Regex::compile(regex_text);
            if (!regex.ok()) return Status::Error("pre_tokenizer Split: " + regex.error());
            Result<SplitBehavior> behavior = parse_behavior(spec.at("behavior").get<std::string>());
            if (!behavior.ok()) return behavior.status();
            return Ptr(std::make_shared<Split>(*regex, *behavior, spec.value("invert", false)));
        }
        if (type == "ByteLevel") {
            std::shared_ptr<const Regex> regex;
            if (spec.value("use_regex", true)) {
                Result<std::shared_ptr<const Regex>> compiled = Regex::compile(kGpt2Pattern);
                if (!compiled.ok()) return compiled.status();
                regex = *compiled;
            }
            return Ptr(std::make_shared<ByteLevel>(spec.value("add_prefix_space", true), regex));
        }
        if (type == "Metaspace") {
            Metaspace::Prepend prepend = Metaspace::Prepend::kAlways;
            if (spec.contains("prepend_scheme")) {
                const std::string scheme = spec["prepend_scheme"].get<std::string>();
                if (scheme == "first") {
                    prepend = Metaspace::Prepend::kFirst;
                } else if (scheme == "never") {
                    prepend = Metaspace::Prepend::kNever;
                } else if (scheme != "always") {
                    return Status::Error("pre_tokenizer Metaspace: unknown prepend_scheme \"" + scheme +
                                         "\"");
                }
            } else if (!spec.value("add_prefix_space", true)) {
                prepend = Metaspace::Prepend::kNever;
            }
            return Ptr(std::make_shared<Metaspace>(spec.at("replacement").get<std::string>(), prepend,
                                                   spec.value("split", true)));
        }
        if (type == "Sequence") {
            std::vector<Ptr> parts;
            for (const nlohmann::json& part : spec.at("pretokenizers")) {
                Result<Ptr> made = make_pre_tokenizer(part);
                if (!made.ok()) return made.status();
                if (*made) parts.push_back(*made);
            }
            return Ptr(std::make_shared<Sequence>(std::move(parts)));
        }
        return Status::Error("pre_tokenizer \"" + type + "\" is not supported");
    } catch (const nlohmann::json::exception& e) {
        return Status::Error(std::string("pre_tokenizer: ") + e.what());
    }
}

}  // namespace slipway::tokenizer
