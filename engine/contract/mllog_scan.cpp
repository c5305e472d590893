// Hand-rolled MLLOG payload scanner (see mllog_scan.h): one pass over the bytes, values built in place,
// no exceptions. Every rule below mirrors what nlohmann's lexer and parser do; where matching it would take
// more than a few lines (errors, duplicate keys, numbers out of range, deep nesting) the scanner declines.
#include "contract/mllog_scan.h"

#include "contract/utf8.h"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <system_error>

namespace slipway::mllog_detail {
namespace {

// Real MLLOG values nest two or three levels; anything deeper goes to nlohmann (which has the 512 limit).
constexpr int kMaxDepth = 32;
// ordered_map finds keys by a linear search; bigger objects go to nlohmann rather than scan quadratically.
constexpr size_t kMaxObjectMembers = 64;

// Bytes a string copies as they are: printable ASCII but '"' and '\\'.
constexpr std::array<bool, 256> kPlainStringByte = [] {
    std::array<bool, 256> plain{};
    for (int c = 0x20; c < 0x80; ++c)
        plain[static_cast<size_t>(c)] = c != '"' && c != '\\';
    return plain;
}();

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

class Scanner {
public:
    explicit Scanner(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

    bool event(MllogEvent& event) {
        skip_whitespace();
        if (!consume('{')) return false;
        skip_whitespace();
        if (consume('}')) return at_end();
        // Top-level keys seen so far, to decline duplicates (nlohmann would keep the last value).
        std::array<std::string, 8> seen;
        size_t seen_count = 0;
        for (;;) {
            std::string key;
            if (!string(key)) return false;
            for (size_t i = 0; i < seen_count; ++i) {
                if (seen[i] == key) return false;
            }
            if (seen_count == seen.size()) return false;
            seen[seen_count++] = key;
            skip_whitespace();
            if (!consume(':')) return false;
            skip_whitespace();
            if (!member(key, event)) return false;
            skip_whitespace();
            if (consume(',')) {
                skip_whitespace();
                continue;
            }
            if (!consume('}')) return false;
            return at_end();
        }
    }

private:
    // One top-level member: the fields MllogEvent names, read as parse_mllog_line reads them.
    bool member(const std::string& key, MllogEvent& event) {
        if (key == "value") return value(event.value, 1);
        if (key == "metadata") return value(event.metadata, 1);
        std::string* text_field = key == "namespace"    ? &event.ns
                                  : key == "event_type" ? &event.event_type
                                  : key == "key"        ? &event.key
                                                        : nullptr;
        if (text_field != nullptr && peek('"')) return string(*text_field);
        MllogJson other;  // a mistyped field (which keeps its default) or a key MllogEvent does not name
        if (!value(other, 1)) return false;
        if (key == "time_ms") event.time_ms = time_ms_from_json(other);
        return true;
    }

    bool value(MllogJson& out, int depth) {
        if (p_ == end_) return false;
        switch (*p_) {
            case '{':
                return object(out, depth);
            case '[':
                return array(out, depth);
            case '"':
                out = std::string();
                return string(out.get_ref<std::string&>());
            case 't':
                out = true;
                return literal("true");
            case 'f':
                out = false;
                return literal("false");
            case 'n':
                out = nullptr;
                return literal("null");
            default:
                return number(out);
        }
    }

    bool object(MllogJson& out, int depth) {
        if (depth > kMaxDepth) return false;
        ++p_;
        out = MllogJson::object();
        auto& members = out.get_ref<MllogJson::object_t&>();
        skip_whitespace();
        if (consume('}')) return true;
        for (;;) {
            if (members.size() == kMaxObjectMembers) return false;
            std::string key;
            if (!string(key)) return false;
            const auto [it, inserted] = members.emplace(std::move(key), MllogJson());
            if (!inserted) return false;
            skip_whitespace();
            if (!consume(':')) return false;
            skip_whitespace();
            if (!value(it->second, depth + 1)) return false;
            skip_whitespace();
            if (consume(',')) {
                skip_whitespace();
                continue;
            }
            return consume('}');
        }
    }

    bool array(MllogJson& out, int depth) {
        if (depth > kMaxDepth) return false;
        ++p_;
        out = MllogJson::array();
        auto& elements = out.get_ref<MllogJson::array_t&>();
        skip_whitespace();
        if (consume(']')) return true;
        for (;;) {
            elements.emplace_back();
            if (!value(elements.back(), depth + 1)) return false;
            skip_whitespace();
            if (consume(',')) {
                skip_whitespace();
                continue;
            }
            return consume(']');
        }
    }

    // A JSON string at p_ (which must be '"') into `out`, unescaped.
    bool string(std::string& out) {
        if (!consume('"')) return false;
        out.clear();
        for (;;) {
            const char* run = p_;
            while (p_ < end_ && kPlainStringByte[static_cast<unsigned char>(*p_)])
                ++p_;
            out.append(run, static_cast<size_t>(p_ - run));
            if (p_ == end_) return false;
            const auto c = static_cast<unsigned char>(*p_);
            if (c == '"') {
                ++p_;
                return true;
            }
            if (c == '\\') {
                if (!escape(out)) return false;
            } else if (c < 0x20) {
                return false;  // raw control characters are not JSON
            } else if (!utf8_sequence(out)) {
                return false;
            }
        }
    }

    // The escape at p_ (a backslash); \u escapes as nlohmann decodes them: a high surrogate must be
    // followed by an escaped low one, a lone low surrogate is an error, \u0000 is a NUL character.
    bool escape(std::string& out) {
        ++p_;
        if (p_ == end_) return false;
        const char c = *p_++;
        switch (c) {
            case '"':
            case '\\':
            case '/':
                out += c;
                return true;
            case 'b':
                out += '\b';
                return true;
            case 'f':
                out += '\f';
                return true;
            case 'n':
                out += '\n';
                return true;
            case 'r':
                out += '\r';
                return true;
            case 't':
                out += '\t';
                return true;
            case 'u':
                break;
            default:
                return false;
        }
        uint32_t cp = 0;
        if (!hex4(cp)) return false;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return false;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t low = 0;
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
            p_ += 2;
            if (!hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        append_utf8(out, cp);
        return true;
    }

    bool hex4(uint32_t& cp) {
        if (end_ - p_ < 4) return false;
        for (int i = 0; i < 4; ++i) {
            const int digit = hex_digit(*p_++);
            if (digit < 0) return false;
            cp = (cp << 4) | static_cast<uint32_t>(digit);
        }
        return true;
    }

    // One well-formed UTF-8 sequence at p_ (nlohmann's lexer checks the same ranges).
    bool utf8_sequence(std::string& out) {
        const size_t length = utf8_sequence_at(std::string_view(p_, static_cast<size_t>(end_ - p_)), 0);
        if (length == 0) return false;
        out.append(p_, length);
        p_ += length;
        return true;
    }

    // A JSON number typed as nlohmann types it: integers without a sign are unsigned, with '-' signed
    // ("-0" is the signed integer 0), integers beyond 64 bits and anything with '.' or an exponent are
    // doubles. Doubles that overflow or underflow are declined (nlohmann errors or rounds to 0).
    bool number(MllogJson& out) {
        const char* start = p_;
        const bool negative = consume('-');
        if (p_ == end_ || !is_digit(*p_)) return false;
        if (*p_ == '0') {
            ++p_;
        } else {
            skip_digits();
        }
        bool integer = true;
        if (consume('.')) {
            integer = false;
            if (p_ == end_ || !is_digit(*p_)) return false;
            skip_digits();
        }
        if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
            integer = false;
            ++p_;
            if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
            if (p_ == end_ || !is_digit(*p_)) return false;
            skip_digits();
        }
        if (integer) {
            uint64_t magnitude = 0;
            bool overflow = false;
            for (const char* d = start + (negative ? 1 : 0); d < p_; ++d) {
                const auto digit = static_cast<uint64_t>(*d - '0');
                overflow = overflow || magnitude > (std::numeric_limits<uint64_t>::max() - digit) / 10;
                magnitude = magnitude * 10 + digit;
            }
            constexpr uint64_t kMinInt64Magnitude = uint64_t{1} << 63;
            if (!overflow && !negative) {
                out = magnitude;
                return true;
            }
            if (!overflow && magnitude <= kMinInt64Magnitude) {
                out = magnitude == kMinInt64Magnitude ? std::numeric_limits<int64_t>::min()
                                                      : -static_cast<int64_t>(magnitude);
                return true;
            }
        }
        // from_chars, not strtod: the same correctly rounded value, but independent of the C locale (Qt
        // sets it from the environment; nlohmann adapts its strtod input to the locale's decimal point).
        double d = 0;
        const auto [end, error] = std::from_chars(start, p_, d);
        if (error != std::errc() || end != p_ || !std::isfinite(d)) return false;
        out = d;
        return true;
    }

    bool literal(std::string_view word) {
        if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word)
            return false;
        p_ += word.size();
        return true;
    }

    static bool is_digit(char c) { return c >= '0' && c <= '9'; }
    void skip_digits() {
        while (p_ < end_ && is_digit(*p_))
            ++p_;
    }
    void skip_whitespace() {
        while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r'))
            ++p_;
    }
    bool peek(char c) const { return p_ < end_ && *p_ == c; }
    bool consume(char c) {
        if (!peek(c)) return false;
        ++p_;
        return true;
    }
    bool at_end() {
        skip_whitespace();
        return p_ == end_;
    }

    const char* p_;
    const char* end_;
};

}  // namespace

bool scan_mllog_payload(std::string_view payload, MllogEvent& event) {
    return Scanner(payload).event(event);
}

int64_t time_ms_from_json(const MllogJson& value) {
    if (value.is_number_unsigned()) {
        const auto u = value.get<uint64_t>();
        return u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? 0 : static_cast<int64_t>(u);
    }
    if (value.is_number_integer()) return value.get<int64_t>();
    if (value.is_number_float()) {
        // Some loggers write time_ms as a float; anything outside int64 is not a time.
        const double d = value.get<double>();
        if (std::isfinite(d) && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
    }
    return 0;
}

}  // namespace slipway::mllog_detail
