// Whitespace normalization and duplicate filtering of dedup.h.
#include "data/dedup.h"

#include "data/hash.h"

namespace slipway::data {
namespace {

bool is_ascii_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

}  // namespace

std::string normalize_whitespace(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    bool pending_space = false;
    for (const char c : text) {
        if (is_ascii_space(c)) {
            pending_space = !out.empty();
            continue;
        }
        if (pending_space) out.push_back(' ');
        pending_space = false;
        out.push_back(c);
    }
    return out;
}

uint64_t document_hash(std::string_view text) {
    return xxh64(normalize_whitespace(text));
}

bool DuplicateFilter::keep(uint64_t hash) {
    if (seen_.insert(hash).second) return true;
    ++removed_;
    return false;
}

}  // namespace slipway::data
