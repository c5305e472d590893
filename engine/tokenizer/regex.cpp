// PCRE2 wrapper of regex.h: translation of \s / \S, compile with JIT, and per-thread match data.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex.h"

#include <pcre2.h>

namespace slipway::tokenizer {
namespace {

// Oniguruma (ONIG_SYNTAX_RUBY, Unicode) whitespace: what \s means in the HF library's patterns.
constexpr const char* kOnigSpaceClassBody =
    "\\t\\n\\x{0B}\\f\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}"
    "\\x{3000}";

// Per-thread match data, so one compiled Regex serves every thread.
struct MatchData {
    pcre2_match_data* data = nullptr;
    MatchData() : data(pcre2_match_data_create(4, nullptr)) {}
    ~MatchData() { pcre2_match_data_free(data); }
};

}  // namespace

std::string oniguruma_compatible(const std::string& pattern) {
    std::string out;
    bool in_class = false;
    for (size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            const char n = pattern[i + 1];
            if (n == 's') {
                out += in_class ? std::string(kOnigSpaceClassBody)
                                : "[" + std::string(kOnigSpaceClassBody) + "]";
            } else if (n == 'S' && !in_class) {
                out += "[^" + std::string(kOnigSpaceClassBody) + "]";
            } else {
                out += c;
                out += n;
            }
            ++i;
            continue;
        }
        if (c == '[' && !in_class) {
            in_class = true;
            out += c;
            if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
            if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];  // literal ] first
            continue;
        }
        if (c == ']' && in_class) in_class = false;
        out += c;
    }
    return out;
}

std::string Regex::escape(std::string_view literal) {
    std::string out;
    for (char c : literal) {
        if (std::string_view("\\^$.|?*+()[]{}-/").find(c) != std::string_view::npos) out += '\\';
        out += c;
    }
    return out;
}

Result<std::shared_ptr<const Regex>> Regex::compile(const std::string& pattern) {
    const std::string translated = oniguruma_compatible(pattern);
    int error_code = 0;
    PCRE2_SIZE error_offset = 0;
    pcre2_code* code =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                      PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &error_code, &error_offset, nullptr);
    if (code == nullptr) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(error_code, message, sizeof(message));
        return Status::Error("regex " + pattern + ": " + reinterpret_cast<const char*>(message) +
                             " at offset " + std::to_string(error_offset));
    }
    std::shared_ptr<Regex> regex(new Regex());
    regex->pattern_ = pattern;
    regex->code_ = code;
    regex->jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
    return std::shared_ptr<const Regex>(std::move(regex));
}

Regex::~Regex() {
    pcre2_code_free(static_cast<pcre2_code*>(code_));
}

Status Regex::find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& matches) const {
    thread_local MatchData match;
    matches.clear();
    auto* code = static_cast<pcre2_code*>(code_);
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    size_t offset = 0;
    while (offset <= text.size()) {
        // Input was validated as UTF-8 once by the caller: skip PCRE2's per-call check.
        const int rc =
            jit_
                ? pcre2_jit_match(code, subject, text.size(), offset, PCRE2_NO_UTF_CHECK, match.data, nullptr)
                : pcre2_match(code, subject, text.size(), offset, PCRE2_NO_UTF_CHECK, match.data, nullptr);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(rc, message, sizeof(message));
            return Status::Error("regex " + pattern_ + ": " + reinterpret_cast<const char*>(message) +
                                 " at byte " + std::to_string(offset) + " of a " +
                                 std::to_string(text.size()) + "-byte piece");
        }
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.data);
        const size_t begin = ovector[0], end = ovector[1];
        if (end == begin) {  // empty match: step one character forward, as find_iter does
            offset = end + 1;
            while (offset < text.size() && (static_cast<unsigned char>(text[offset]) & 0xC0) == 0x80)
                ++offset;
            continue;
        }
        matches.emplace_back(begin, end);
        offset = end;
    }
    return Status::Ok();
}

}  // namespace slipway::tokenizer
