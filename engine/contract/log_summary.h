// The summary of one training log: line counts, run status and timing, and the eval/train curves.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "contract/mllog.h"
#include "contract/mllog_stream.h"
#include "contract/status.h"

namespace slipway {

struct MetricPoint {
    std::optional<double> samples_count;  // metadata.samples_count; nullopt when absent or not a number
    MllogJson value;                      // the event's value as given (a number in every real log)
};

struct LogSummary {
    std::string file;
    int64_t lines = 0;
    int64_t mllog_lines = 0;
    int64_t bad_lines = 0;
    std::optional<std::string> status;        // metadata.status of the last run_stop
    std::optional<int64_t> run_start_ms;      // the first run_start
    std::optional<int64_t> run_stop_ms;       // the last run_stop
    std::optional<int64_t> time_to_train_ms;  // run_stop_ms - run_start_ms when both are known
    std::vector<MetricPoint> eval_accuracy;
    std::vector<MetricPoint> train_loss;
    // eval_task lines (mllog_key::kEvalTask) per series "task/metric", in the order the log first names them.
    std::vector<std::pair<std::string, std::vector<MetricPoint>>> eval_tasks;
};

// Builds a LogSummary from stream items, so a growing log can be summarized as it arrives.
class LogSummaryBuilder {
public:
    explicit LogSummaryBuilder(std::string file);
    void add(const MllogStreamItem& item);
    const LogSummary& summary() const { return summary_; }

private:
    LogSummary summary_;
};

// Summarizes log bytes held in memory; `file` only names them in the result.
LogSummary summarize_log_text(std::string_view bytes, std::string file);
// Reads the file in chunks (memory does not grow with its size). The error names the file.
Result<LogSummary> summarize_log_file(const std::string& path);

// {"file", "lines", "mllog_lines", "bad_lines", "status", "run_start_ms", "run_stop_ms", "time_to_train_ms",
//  "eval_accuracy": [[samples_count, value], ...], "train_loss": [...]} in that order, null where unknown,
// then "eval_task": {"task/metric": [[samples_count, value], ...], ...} when the log has eval_task lines;
// an integral samples_count is written as an integer.
nlohmann::ordered_json to_json(const LogSummary& summary);

}  // namespace slipway
