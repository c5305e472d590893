// Debiased exponential moving average (TensorBoard's "smoothing" slider).
#include "monitor/smoothing.h"

#include <cmath>

namespace slipway::app {

std::vector<double> ema_smooth(const std::vector<double>& values, double weight) {
    if (weight <= 0.0) return values;
    if (weight >= 1.0) weight = 0.999;
    std::vector<double> out;
    out.reserve(values.size());
    double last = 0.0;
    double debias = 1.0;  // weight^n: the share of the zero start still in `last`
    for (const double v : values) {
        if (!std::isfinite(v)) {
            out.push_back(v);
            continue;
        }
        last = last * weight + (1.0 - weight) * v;
        debias *= weight;
        out.push_back(last / (1.0 - debias));
    }
    return out;
}

}  // namespace slipway::app
