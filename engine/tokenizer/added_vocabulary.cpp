// Trie matching of added tokens (added_vocabulary.h).
#include "tokenizer/added_vocabulary.h"

#include <cctype>

namespace slipway::tokenizer {
namespace {

bool is_space_at(std::string_view s, size_t i, size_t* length) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    *length = 1;
    if (c == ' ' || (c >= '\t' && c <= '\r')) return true;
    if (c == 0xC2 && i + 1 < s.size() &&
        (static_cast<unsigned char>(s[i + 1]) == 0x85 || static_cast<unsigned char>(s[i + 1]) == 0xA0)) {
        *length = 2;
        return true;
    }
    return false;
}

// Word characters for single_word: ASCII alphanumerics, '_' and any non-ASCII byte (letters of other
// scripts); an approximation of the HF library's \w that only matters for tokens with single_word set.
bool is_word_byte(unsigned char c) {
    return c == '_' || std::isalnum(c) || c >= 0x80;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(const std::vector<const AddedToken*>& tokens) : nodes_(1) {
    for (const AddedToken* token : tokens) {
        if (token->content.empty()) continue;
        first_byte_[static_cast<unsigned char>(token->content[0])] = true;
        int32_t node = 0;
        for (unsigned char c : token->content) {
            const auto it = nodes_[static_cast<size_t>(node)].children.find(c);
            if (it != nodes_[static_cast<size_t>(node)].children.end()) {
                node = it->second;
            } else {
                nodes_.emplace_back();
                const auto child = static_cast<int32_t>(nodes_.size() - 1);
                nodes_[static_cast<size_t>(node)].children.emplace(c, child);
                node = child;
            }
        }
        if (nodes_[static_cast<size_t>(node)].token == nullptr)
            nodes_[static_cast<size_t>(node)].token = token;
    }
}

std::vector<Segment> AddedTokenMatcher::split(std::string_view text) const {
    std::vector<Segment> out;
    size_t emitted = 0;  // end of the last segment
    size_t i = 0;
    while (i < text.size()) {
        if (!first_byte_[static_cast<unsigned char>(text[i])]) {
            ++i;
            continue;
        }
        // Longest token starting at i.
        const AddedToken* found = nullptr;
        size_t found_end = 0;
        int32_t node = 0;
        for (size_t k = i; k < text.size(); ++k) {
            const auto& children = nodes_[static_cast<size_t>(node)].children;
            const auto it = children.find(static_cast<unsigned char>(text[k]));
            if (it == children.end()) break;
            node = it->second;
            if (nodes_[static_cast<size_t>(node)].token != nullptr) {
                found = nodes_[static_cast<size_t>(node)].token;
                found_end = k + 1;
            }
        }
        if (found == nullptr) {
            ++i;
            continue;
        }
        size_t start = i, stop = found_end;
        if (found->single_word) {
            const bool left_ok = start == 0 || !is_word_byte(static_cast<unsigned char>(text[start - 1]));
            const bool right_ok =
                stop == text.size() || !is_word_byte(static_cast<unsigned char>(text[stop]));
            if (!left_ok || !right_ok) {
                ++i;
                continue;
            }
        }
        if (found->lstrip) {
            while (start > emitted) {
                size_t length = 0;
                size_t back = start - 1;
                while (back > emitted && (static_cast<unsigned char>(text[back]) & 0xC0) == 0x80)
                    --back;
                if (!is_space_at(text, back, &length) || back + length != start) break;
                start = back;
            }
        }
        if (found->rstrip) {
            size_t length = 0;
            while (stop < text.size() && is_space_at(text, stop, &length))
                stop += length;
        }
        if (start > emitted) out.push_back({text.substr(emitted, start - emitted), std::nullopt, emitted});
        out.push_back({text.substr(start, stop - start), found->id, start});
        emitted = stop;
        i = stop;
    }
    if (emitted < text.size()) out.push_back({text.substr(emitted), std::nullopt, emitted});
    return out;
}

}  // namespace slipway::tokenizer
