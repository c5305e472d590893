// Stored points back into events: one per point, with the metadata the monitor folded them from.
#include "core/metrics_export.h"

#include <algorithm>
#include <cmath>

namespace slipway::app {
namespace {

MllogEvent event_of(std::string_view key, const MetricSample& sample) {
    MllogEvent event;
    event.time_ms = sample.time_ms;
    event.event_type = std::string(kPointInTime);
    event.key = std::string(key);
    event.value = sample.value;
    if (!std::isnan(sample.samples)) event.metadata[std::string(mllog_field::kSamplesCount)] = sample.samples;
    if (!std::isnan(sample.step)) event.metadata[std::string(mllog_field::kStepNum)] = sample.step;
    return event;
}

}  // namespace

std::vector<MllogEvent> mllog_events_of(const RunMetrics& metrics) {
    std::vector<MllogEvent> events;
    for (const Metric metric : kAllMetrics)
        for (const MetricSample& sample : metrics.points(metric))
            events.push_back(event_of(metric_key(metric), sample));
    for (const TaskSeries& series : metrics.task_series) {
        const size_t slash = series.name.find('/');
        if (slash == std::string::npos) continue;
        for (const MetricSample& sample : series.points) {
            MllogEvent event = event_of(mllog_key::kEvalTask, sample);
            event.metadata[std::string(mllog_field::kTask)] = series.name.substr(0, slash);
            event.metadata[std::string(mllog_field::kMetric)] = series.name.substr(slash + 1);
            events.push_back(std::move(event));
        }
    }
    std::stable_sort(events.begin(), events.end(),
                     [](const MllogEvent& a, const MllogEvent& b) { return a.time_ms < b.time_ms; });
    return events;
}

Result<track::LogExport> export_run_metrics(const RunMetrics& metrics, std::optional<RunEnd> end,
                                            track::ExportFormat format, const std::string& out,
                                            const std::string& run_name) {
    std::vector<MllogEvent> events = mllog_events_of(metrics);
    if (end && !events.empty()) {
        MllogEvent stop;
        stop.time_ms = end->time_ms != 0 ? static_cast<uint64_t>(end->time_ms) : events.back().time_ms;
        stop.event_type = std::string(kPointInTime);
        stop.key = std::string(mllog_key::kRunStop);
        stop.metadata[std::string(mllog_field::kStatus)] =
            std::string(end->succeeded ? run_stop_status::kSuccess : run_stop_status::kAborted);
        events.push_back(std::move(stop));
    }
    return track::export_events(events, format, out, run_name);
}

}  // namespace slipway::app
