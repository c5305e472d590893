// LogSummary: folds MLLOG stream items into counts, run timing and the eval_accuracy/train_loss curves.
#include "contract/log_summary.h"
#include "contract/mllog_keys.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

namespace slipway {
namespace {

constexpr size_t kReadChunkBytes = size_t{256} << 10;

nlohmann::ordered_json optional_json(const std::optional<int64_t>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json samples_json(const std::optional<double>& v) {
    if (!v) return nullptr;
    // 1536, not 1536.0: counts are integers; only a fractional (or huge) value stays a float.
    if (std::isfinite(*v) && std::floor(*v) == *v && std::fabs(*v) < 9.007199254740992e15) {
        return static_cast<int64_t>(*v);
    }
    return *v;
}

nlohmann::ordered_json points_json(const std::vector<MetricPoint>& points) {
    auto out = nlohmann::ordered_json::array();
    for (const MetricPoint& p : points)
        out.push_back({samples_json(p.samples_count), p.value});
    return out;
}

}  // namespace

LogSummaryBuilder::LogSummaryBuilder(std::string file) {
    summary_.file = std::move(file);
}

void LogSummaryBuilder::add(const MllogStreamItem& item) {
    LogSummary& s = summary_;
    ++s.lines;
    if (item.kind == MllogLineKind::kText) return;
    ++s.mllog_lines;
    if (item.kind == MllogLineKind::kBadMllog) {
        ++s.bad_lines;
        return;
    }

    const MllogEvent& event = item.event;
    if (event.key == mllog_key::kRunStart) {
        if (!s.run_start_ms) s.run_start_ms = event.time_ms;
    } else if (event.key == mllog_key::kRunStop) {
        s.run_stop_ms = event.time_ms;
        s.status = event.metadata_string(mllog_field::kStatus);
    } else if (event.key == mllog_key::kEvalAccuracy) {
        s.eval_accuracy.push_back({event.samples_count(), event.value});
    } else if (event.key == mllog_key::kTrainLoss) {
        s.train_loss.push_back({event.samples_count(), event.value});
    } else if (const std::optional<std::string> series = eval_task_series(event)) {
        auto it = std::find_if(s.eval_tasks.begin(), s.eval_tasks.end(),
                               [&series](const auto& named) { return named.first == *series; });
        if (it == s.eval_tasks.end()) it = s.eval_tasks.insert(s.eval_tasks.end(), {*series, {}});
        it->second.push_back({event.samples_count(), event.value});
    } else {
        return;
    }
    if (s.run_start_ms && s.run_stop_ms) s.time_to_train_ms = *s.run_stop_ms - *s.run_start_ms;
}

LogSummary summarize_log_text(std::string_view bytes, std::string file) {
    LogSummaryBuilder builder(std::move(file));
    MllogStream stream([&builder](MllogStreamItem&& item) { builder.add(item); });
    stream.feed(bytes);
    stream.finish();
    return builder.summary();
}

Result<LogSummary> summarize_log_file(const std::string& path) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file)
        return Result<LogSummary>::Error("cannot open log file '" + path + "': " + std::strerror(errno));

    LogSummaryBuilder builder(path);
    MllogStream stream([&builder](MllogStreamItem&& item) { builder.add(item); });
    std::string buffer(kReadChunkBytes, '\0');
    while (true) {
        const size_t n = std::fread(buffer.data(), 1, buffer.size(), file.get());
        if (n > 0) stream.feed(std::string_view(buffer.data(), n));
        if (n < buffer.size()) break;
    }
    // fopen succeeds on a directory on Linux; the read is what fails (EISDIR).
    if (std::ferror(file.get())) {
        return Result<LogSummary>::Error("cannot read log file '" + path + "': " + std::strerror(errno));
    }
    stream.finish();
    return builder.summary();
}

nlohmann::ordered_json to_json(const LogSummary& s) {
    nlohmann::ordered_json j;
    j["file"] = s.file;
    j["lines"] = s.lines;
    j["mllog_lines"] = s.mllog_lines;
    j["bad_lines"] = s.bad_lines;
    j["status"] = s.status ? nlohmann::ordered_json(*s.status) : nlohmann::ordered_json(nullptr);
    j["run_start_ms"] = optional_json(s.run_start_ms);
    j["run_stop_ms"] = optional_json(s.run_stop_ms);
    j["time_to_train_ms"] = optional_json(s.time_to_train_ms);
    j["eval_accuracy"] = points_json(s.eval_accuracy);
    j["train_loss"] = points_json(s.train_loss);
    if (!s.eval_tasks.empty()) {
        nlohmann::ordered_json tasks = nlohmann::ordered_json::object();
        for (const auto& [series, points] : s.eval_tasks)
            tasks[series] = points_json(points);
        j["eval_task"] = std::move(tasks);
    }
    return j;
}

}  // namespace slipway
