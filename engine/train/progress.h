// The human-readable progress line of a training run: step, loss, lr, gradient norm, tokens/s, elapsed
// time and ETA (the MLLOG lines carry the same numbers for machines).
#pragma once

#include <cstdint>
#include <string>

namespace slipway::train {

struct ProgressFigures {
    int64_t step = 0, total_steps = 0;
    double loss = 0, lr = 0, grad_norm = 0, tokens_per_second = 0, elapsed_s = 0;
};

std::string progress_line(const ProgressFigures& f);
// h:mm:ss
std::string duration_text(double seconds);

}  // namespace slipway::train
