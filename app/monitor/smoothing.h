// Exponential moving average of a curve, as TensorBoard draws it (debiased, so the start is not pulled
// toward zero); the monitor draws it over the faint raw curve.
#pragma once

#include <vector>

namespace slipway::app {

// The same average one point at a time, for curves that grow while they are drawn.
class EmaSmoother {
public:
    explicit EmaSmoother(double weight = 0.0) : weight_(weight >= 1.0 ? 0.999 : weight) {}
    double push(double value);

private:
    double weight_;
    double last_ = 0.0;
    double debias_ = 1.0;  // weight^n: the share of the zero start still in last_
};

// weight in [0, 1): 0 returns `values` unchanged; 0.9 averages over roughly the last ten points.
// Non-finite values are passed through and do not enter the average.
std::vector<double> ema_smooth(const std::vector<double>& values, double weight);

}  // namespace slipway::app
