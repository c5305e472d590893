// Choosing the next token from logits, as transformers' generate does: greedy (argmax), or sampling after
// its warpers in its order (temperature, top-k, top-p). The draw uses our own seeded RNG over fp64
// probabilities, so a seed repeats the same text on every machine and LibTorch version (no torch here).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace slipway::generate {

struct SamplingOptions {
    double temperature = 0;  // 0: greedy
    int64_t top_k = 0;       // keep the k most likely tokens; 0: all
    double top_p = 1.0;      // keep the most likely tokens whose probabilities reach top_p; 1: all
    uint64_t seed = 0;
    bool greedy() const { return temperature <= 0; }
};

class TokenSampler {
public:
    explicit TokenSampler(const SamplingOptions& options);
    // logits: the vocabulary's scores (V) of the next position. Greedy: the first index of the maximum.
    int64_t next(const float* logits, int64_t vocab);

private:
    SamplingOptions options_;
    std::mt19937_64 rng_;
    std::vector<double> scores_;
    std::vector<int64_t> order_;
};

}  // namespace slipway::generate
