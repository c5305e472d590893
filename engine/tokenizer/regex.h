// A compiled Unicode regex (PCRE2 with UTF + UCP, JIT when available) that finds all matches the way
// the HF tokenizers library's Oniguruma patterns do. \s and \S are rewritten to Oniguruma's whitespace
// set, which differs from PCRE2's (e.g. U+0085).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "contract/status.h"

namespace slipway::tokenizer {

class Regex {
public:
    // Compiles `pattern`; the error names the pattern and the offset of the problem.
    static Result<std::shared_ptr<const Regex>> compile(const std::string& pattern);
    // A pattern that matches `literal` exactly.
    static std::string escape(std::string_view literal);

    ~Regex();
    Regex(const Regex&) = delete;
    Regex& operator=(const Regex&) = delete;

    // Every non-overlapping match as [begin, end) byte ranges, left to right. Thread-safe. An error when
    // the engine gives up (match or depth limit, JIT stack): never a silent "no match".
    [[nodiscard]] Status find_all(std::string_view text,
                                  std::vector<std::pair<size_t, size_t>>& matches) const;

    const std::string& pattern() const { return pattern_; }

private:
    Regex() = default;
    std::string pattern_;
    void* code_ = nullptr;  // pcre2_code_8*
    bool jit_ = false;
};

// Oniguruma's \s in Unicode mode, as the body of a character class.
std::string oniguruma_compatible(const std::string& pattern);

}  // namespace slipway::tokenizer
