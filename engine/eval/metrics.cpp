// The lm-eval arithmetic of metrics.h.
#include "eval/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "contract/utf8.h"

namespace slipway::eval {

namespace {

// The code point of the well-formed n-byte UTF-8 sequence at text[i].
char32_t decode_at(std::string_view text, size_t i, size_t n) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
    if (n == 1) return byte(0);
    char32_t c = byte(0) & (0x7f >> n);
    for (size_t k = 1; k < n; ++k)
        c = (c << 6) | (byte(k) & 0x3f);
    return c;
}

}  // namespace

bool is_python_space(char32_t c) {
    return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f ||
           c == 0x3000;
}

size_t end_without_trailing_space(std::string_view text) {
    size_t end = text.size();
    while (end > 0) {
        size_t start = end - 1;  // back over continuation bytes to the sequence's first byte
        while (start > 0 && end - start < 4 && (static_cast<unsigned char>(text[start]) & 0xc0) == 0x80)
            --start;
        const size_t n = utf8_sequence_at(text, start);
        if (n != end - start || !is_python_space(decode_at(text, start, n))) break;
        end = start;
    }
    return end;
}

size_t code_point_count(std::string_view text) {
    size_t count = 0;
    for (size_t i = 0; i < text.size(); ++count) {
        const size_t n = utf8_sequence_at(text, i);
        i += n ? n : 1;
    }
    return count;
}

ChoicePick pick_choice(const std::vector<double>& loglikelihoods, const std::vector<std::string>& choices) {
    ChoicePick pick;
    double best = -std::numeric_limits<double>::infinity(), best_norm = best;
    for (size_t i = 0; i < loglikelihoods.size(); ++i) {
        const double ll = loglikelihoods[i];
        // numpy divides by float(len(choice)); an empty choice would give -inf/nan there, refused earlier.
        const double norm = ll / static_cast<double>(code_point_count(choices[i]));
        if (i == 0 || ll > best) {  // strictly greater: the first maximum wins, as np.argmax
            pick.pred = i;
            best = ll;
        }
        if (i == 0 || norm > best_norm) {
            pick.pred_norm = i;
            best_norm = norm;
        }
    }
    return pick;
}

EncodedPair encode_pair(const Encode& encode, std::string_view context, std::string_view continuation) {
    // n_spaces = len(context) - len(context.rstrip()); context[-n_spaces:] moves to the continuation.
    const size_t end = end_without_trailing_space(context);
    const std::string moved_continuation = std::string(context.substr(end)) + std::string(continuation);
    const std::string head(context.substr(0, end));
    const std::vector<int32_t> whole = encode(head + moved_continuation);
    EncodedPair pair;
    pair.context = encode(head);
    const size_t split = std::min(pair.context.size(), whole.size());
    pair.continuation.assign(whole.begin() + static_cast<std::ptrdiff_t>(split), whole.end());
    return pair;
}

size_t first_stop(std::string_view text, const std::vector<std::string>& stop) {
    size_t first = std::string_view::npos;
    for (const std::string& s : stop) {
        const size_t at = text.find(s);
        if (at < first) first = at;
    }
    return first;
}

std::string strip_whitespace(std::string_view text) {
    const std::string_view head = text.substr(0, end_without_trailing_space(text));
    size_t begin = 0;
    while (begin < head.size()) {
        const size_t n = utf8_sequence_at(head, begin);
        if (n == 0 || !is_python_space(decode_at(head, begin, n))) break;
        begin += n;
    }
    return std::string(head.substr(begin));
}

GenerationScore score_generation(std::string_view generated, std::string_view target, bool strip) {
    const std::string g = strip ? strip_whitespace(generated) : std::string(generated);
    const std::string t = strip ? strip_whitespace(target) : std::string(target);
    return {g == t, g.compare(0, t.size(), t) == 0};
}

double PerplexitySums::mean_nll() const {
    return tokens > 0 ? nll_sum / static_cast<double>(tokens) : 0.0;
}

double PerplexitySums::perplexity() const {
    return std::exp(mean_nll());
}

}  // namespace slipway::eval
