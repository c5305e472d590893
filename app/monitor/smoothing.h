// Exponential moving average of a curve, as TensorBoard draws it (debiased, so the start is not pulled
// toward zero); the monitor draws it over the faint raw curve.
#pragma once

#include <vector>

namespace slipway::app {

// weight in [0, 1): 0 returns `values` unchanged; 0.9 averages over roughly the last ten points.
// Non-finite values are passed through and do not enter the average.
std::vector<double> ema_smooth(const std::vector<double>& values, double weight);

}  // namespace slipway::app
