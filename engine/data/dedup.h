// Exact-duplicate detection for documents: a 64-bit hash of the whitespace-normalized text, and a filter
// that keeps the first occurrence of each hash.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

namespace slipway::data {

// Trims ASCII whitespace (space, \t, \n, \v, \f, \r) at both ends and collapses every inner run of it
// to one space. Other characters (incl. Unicode spaces such as U+00A0) are kept as they are.
std::string normalize_whitespace(std::string_view text);

// XXH64 of normalize_whitespace(text): documents that differ only in whitespace hash equal.
uint64_t document_hash(std::string_view text);

// Remembers hashes seen; keep() is true the first time a hash is offered.
class DuplicateFilter {
public:
    bool keep(uint64_t hash);
    uint64_t removed() const { return removed_; }

private:
    std::unordered_set<uint64_t> seen_;
    uint64_t removed_ = 0;
};

}  // namespace slipway::data
