// Debiased exponential moving average (TensorBoard's "smoothing" slider).
#include "monitor/smoothing.h"

#include <cmath>

namespace slipway::app {

double EmaSmoother::push(double value) {
    if (weight_ <= 0.0 || !std::isfinite(value)) return value;
    last_ = last_ * weight_ + (1.0 - weight_) * value;
    debias_ *= weight_;
    return last_ / (1.0 - debias_);
}

std::vector<double> ema_smooth(const std::vector<double>& values, double weight) {
    if (weight <= 0.0) return values;
    EmaSmoother smoother(weight);
    std::vector<double> out;
    out.reserve(values.size());
    for (const double v : values)
        out.push_back(smoother.push(v));
    return out;
}

}  // namespace slipway::app
