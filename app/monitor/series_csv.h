// CSV of the curves a monitor shows: one row per point, run and metric named, raw and smoothed values.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace slipway::app {

struct ShownSeries {
    std::string run;
    std::string metric;
    std::string x_name;  // "samples", "step", "wall time (s)"
    std::vector<double> x;
    std::vector<double> y;         // raw values
    std::vector<double> smoothed;  // same length as y, or empty when smoothing is off
};

// Header `run,metric,x_name,x,value,smoothed`; fields with commas or quotes are quoted; numbers in the
// shortest form that reads back to the same double.
void write_series_csv(std::ostream& out, const std::vector<ShownSeries>& series);

}  // namespace slipway::app
