// sampling.h: greedy and temperature / top-k / top-p sampling (transformers' TemperatureLogitsWarper,
// TopKLogitsWarper, TopPLogitsWarper, then multinomial).
#include "generate/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace slipway::generate {

TokenSampler::TokenSampler(const SamplingOptions& options) : options_(options), rng_(options.seed) {}

int64_t TokenSampler::next(const float* logits, int64_t vocab) {
    if (options_.greedy()) return std::max_element(logits, logits + vocab) - logits;
    scores_.assign(logits, logits + vocab);
    for (double& s : scores_)
        s /= options_.temperature;
    order_.resize(static_cast<size_t>(vocab));
    std::iota(order_.begin(), order_.end(), 0);
    // Most likely first; ties by id, so the order is the same everywhere.
    std::sort(order_.begin(), order_.end(), [this](int64_t a, int64_t b) {
        return scores_[a] != scores_[b] ? scores_[a] > scores_[b] : a < b;
    });
    int64_t kept = vocab;
    if (options_.top_k > 0 && options_.top_k < vocab) {
        // TopK removes scores below the k-th largest: its ties stay.
        const double kth = scores_[order_[options_.top_k - 1]];
        while (kept > 0 && scores_[order_[kept - 1]] < kth)
            --kept;
    }
    // Probabilities of the kept tokens (softmax over them).
    const double top = scores_[order_[0]];
    std::vector<double> probs(static_cast<size_t>(kept));
    double sum = 0;
    for (int64_t i = 0; i < kept; ++i)
        sum += probs[i] = std::exp(scores_[order_[i]] - top);
    for (double& p : probs)
        p /= sum;
    sum = 1.0;
    if (options_.top_p < 1.0) {
        // TopP: a token goes when the cumulative probability from the least likely up to it is at most
        // 1 - top_p; the most likely one always stays.
        double tail = 0;
        int64_t keep = kept;
        for (int64_t i = kept - 1; i > 0; --i) {
            tail += probs[i];
            if (tail > 1.0 - options_.top_p) break;
            keep = i;
        }
        kept = keep;
        sum = std::accumulate(probs.begin(), probs.begin() + kept, 0.0);
    }
    double u = std::uniform_real_distribution<double>(0.0, sum)(rng_);
    for (int64_t i = 0; i < kept; ++i) {
        u -= probs[i];
        if (u < 0) return order_[i];
    }
    return order_[kept - 1];
}

}  // namespace slipway::generate
