// Plot data from a log summary: the (samples_count, value) pairs of a metric that can be drawn.
#pragma once

#include <vector>

#include "contract/log_summary.h"

namespace slipway::app {

struct Series {
    std::vector<double> x;  // samples_count
    std::vector<double> y;  // the metric's value
};

// Points without a samples_count or with a non-numeric value have no place on the samples axis: skipped.
Series metric_series(const std::vector<MetricPoint>& points);

}  // namespace slipway::app
