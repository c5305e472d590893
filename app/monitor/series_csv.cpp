// CSV export of the plotted curves.
#include "monitor/series_csv.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace slipway::app {
namespace {

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string quoted = "\"";
    for (const char c : text) {
        if (c == '"') quoted += '"';
        quoted += c;
    }
    return quoted + "\"";
}

std::string number(double v) {
    if (!std::isfinite(v)) return "";
    char buffer[32];
    // %.17g always reads back exactly; try shorter first so 0.1 stays "0.1".
    for (int precision = 6; precision <= 17; ++precision) {
        std::snprintf(buffer, sizeof buffer, "%.*g", precision, v);
        if (std::strtod(buffer, nullptr) == v) break;
    }
    return buffer;
}

}  // namespace

void write_series_csv(std::ostream& out, const std::vector<ShownSeries>& series) {
    out << "run,metric,x_name,x,value,smoothed\n";
    for (const ShownSeries& s : series) {
        const std::string prefix =
            csv_field(s.run) + "," + csv_field(s.metric) + "," + csv_field(s.x_name) + ",";
        for (size_t i = 0; i < s.y.size() && i < s.x.size(); ++i) {
            out << prefix << number(s.x[i]) << "," << number(s.y[i]) << ","
                << (i < s.smoothed.size() ? number(s.smoothed[i]) : std::string()) << "\n";
        }
    }
}

}  // namespace slipway::app
