// The lm-eval arithmetic of metrics.h.
#include "eval/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "contract/utf8.h"

namespace slipway::eval {

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
    // n_spaces = len(context) - len(context.rstrip()): Python's rstrip() removes Unicode whitespace; the
    // ASCII whitespace handled here is what task files put there (" ", "\n", "\t").
    size_t end = context.size();
    while (end > 0 && std::string_view(" \t\n\r\v\f").find(context[end - 1]) != std::string_view::npos)
        --end;
    const std::string moved_continuation = std::string(context.substr(end)) + std::string(continuation);
    const std::string_view head = context.substr(0, end);
    std::vector<int32_t> whole = encode(std::string(head) + moved_continuation);
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
    const std::string_view space = " \t\n\r\v\f";
    const size_t begin = text.find_first_not_of(space);
    if (begin == std::string_view::npos) return "";
    const size_t end = text.find_last_not_of(space);
    return std::string(text.substr(begin, end - begin + 1));
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
