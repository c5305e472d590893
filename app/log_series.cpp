// Plot data from a log summary.
#include "log_series.h"

namespace slipway::app {

Series metric_series(const std::vector<MetricPoint>& points) {
    Series series;
    for (const MetricPoint& p : points) {
        if (!p.samples_count || !p.value.is_number()) continue;
        series.x.push_back(*p.samples_count);
        series.y.push_back(p.value.get<double>());
    }
    return series;
}

}  // namespace slipway::app
