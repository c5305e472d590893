// RunMetrics: folds MLLOG events into the monitor's four curves plus what the status line needs.
#include "core/run_metrics.h"
#include "contract/mllog_keys.h"
#include "core/translatable.h"

#include <algorithm>
#include <cmath>

namespace slipway::app {

std::string_view metric_key(Metric metric) {
    switch (metric) {
        case Metric::kTrainLoss:
            return mllog_key::kTrainLoss;
        case Metric::kEvalAccuracy:
            return mllog_key::kEvalAccuracy;
        case Metric::kLearningRate:
            return mllog_key::kLearningRate;
        case Metric::kTokensPerSecond:
            return mllog_key::kTokensPerSecond;
    }
    return {};
}

TaskFamily task_family(std::string_view series) {
    const size_t slash = series.rfind('/');
    const std::string_view metric = slash == std::string_view::npos ? series : series.substr(slash + 1);
    return metric == "perplexity" || metric == "nll" ? TaskFamily::kPerplexity : TaskFamily::kScore;
}

// The titles are English source texts: the monitor shows them through its tr(), hence its context here.
const char* metric_title(Metric metric) {
    switch (metric) {
        case Metric::kTrainLoss:
            return QT_TRANSLATE_NOOP("slipway::app::MonitorWidget", "train_loss");
        case Metric::kEvalAccuracy:
            return QT_TRANSLATE_NOOP("slipway::app::MonitorWidget", "eval_accuracy");
        case Metric::kLearningRate:
            return QT_TRANSLATE_NOOP("slipway::app::MonitorWidget", "learning rate");
        case Metric::kTokensPerSecond:
            return QT_TRANSLATE_NOOP("slipway::app::MonitorWidget", "tokens/s");
    }
    return "";
}

const char* eval_title(EvalMeaning meaning) {
    switch (meaning) {
        case EvalMeaning::kLoss:
            return QT_TRANSLATE_NOOP("slipway::app::MonitorWidget", "eval loss (MLPerf eval_accuracy)");
        case EvalMeaning::kTokenAccuracy:
            return QT_TRANSLATE_NOOP("slipway::app::MonitorWidget", "eval token accuracy");
        case EvalMeaning::kUnknown:
            break;
    }
    return QT_TRANSLATE_NOOP("slipway::app::MonitorWidget", "eval_accuracy");
}

std::optional<Metric> metric_for_key(std::string_view key) {
    for (Metric m : kAllMetrics) {
        if (key == metric_key(m)) return m;
    }
    return std::nullopt;
}

const char* x_axis_title(XAxis axis) {
    switch (axis) {
        case XAxis::kSamples:
            return QT_TRANSLATE_NOOP("slipway::app::MonitorWidget", "samples");
        case XAxis::kSteps:
            return QT_TRANSLATE_NOOP("slipway::app::MonitorWidget", "step");
        case XAxis::kWallTime:
            return QT_TRANSLATE_NOOP("slipway::app::MonitorWidget", "wall time (s)");
    }
    return "";
}

std::optional<double> mlperf_target(std::string_view benchmark, bool* higher_is_better) {
    // MLPerf Training rules, quality targets of the benchmarks whose logs we read.
    if (benchmark == "llama2_70b_lora") {
        if (higher_is_better) *higher_is_better = false;
        return 0.925;
    }
    return std::nullopt;
}

namespace {

// A numeric event's point: its value with every x the log gives.
MetricSample sample_of(const MllogEvent& event) {
    MetricSample sample;
    sample.samples = event.samples_count().value_or(kUnknown);
    sample.step = event.step_num().value_or(kUnknown);
    sample.time_ms = event.time_ms;
    sample.value = event.value.get<double>();
    return sample;
}

}  // namespace

std::optional<Metric> RunMetrics::add(const MllogEvent& event) {
    if (event.time_ms != 0) {
        if (!first_time_ms) first_time_ms = event.time_ms;
        last_time_ms = event.time_ms;
    }
    const std::string& key = event.key;
    if (key == mllog_key::kRunStart) {
        if (!run_start_ms) run_start_ms = event.time_ms;
        return std::nullopt;
    }
    if (key == mllog_key::kResume && event.value.is_number()) {
        resumes.push_back(sample_of(event));
        run_stop_ms.reset();  // the stopped segment's run_stop: the run goes on
        status.reset();
        lost_nodes.clear();
        return std::nullopt;
    }
    if (key == mllog_key::kRunStop) {
        run_stop_ms = event.time_ms;
        status = event.metadata_string(mllog_field::kStatus);
        lost_nodes.clear();
        if (const auto it = event.metadata.find(mllog_field::kLostNodes);
            it != event.metadata.end() && it->is_array())
            for (const MllogJson& node : *it)
                if (node.is_string()) lost_nodes.push_back(node.get<std::string>());
        return std::nullopt;
    }
    if (key == mllog_key::kNodeRanks) {
        if (std::optional<std::vector<NodeRanks>> parsed = node_ranks_from_json(event.value))
            nodes = std::move(*parsed);
        return std::nullopt;
    }
    if (key == mllog_key::kNodeSteps) {
        if (std::optional<std::vector<NodeStep>> parsed = node_steps_from_json(event.value))
            node_steps = std::move(*parsed);
        return std::nullopt;
    }
    if (key == mllog_key::kSubmissionBenchmark && event.value.is_string()) {
        benchmark = event.value.get<std::string>();
        if (!target) target = mlperf_target(benchmark, &target_higher_is_better);
        // MLPerf's rules for this benchmark: eval_accuracy is the evaluation loss.
        if (benchmark == "llama2_70b_lora" && eval_meaning == EvalMeaning::kUnknown)
            eval_meaning = EvalMeaning::kLoss;
        return std::nullopt;
    }
    if (key == mllog_key::kEvalLoss && event.value.is_number()) {
        last_eval_loss = event.value.get<double>();
        return std::nullopt;
    }
    if (key == mllog_key::kEvalTokenAccuracy && event.value.is_number()) {
        last_eval_token_accuracy = event.value.get<double>();
        return std::nullopt;
    }
    if (key == mllog_key::kEvalAccuracy && event.value.is_number()) {
        // The engine logged both measures just before: the equal one is what eval_accuracy is.
        const double v = event.value.get<double>();
        if (last_eval_loss && *last_eval_loss == v) {
            eval_meaning = EvalMeaning::kLoss;
        } else if (last_eval_token_accuracy && *last_eval_token_accuracy == v) {
            eval_meaning = EvalMeaning::kTokenAccuracy;
        }
    }
    if (key == mllog_key::kGlobalBatchSize && event.value.is_number()) {
        global_batch_size = event.value.get<double>();
        return std::nullopt;
    }
    if (key == mllog_key::kOptLearningRateTrainingSteps && event.value.is_number()) {
        total_steps = event.value.get<double>();
        return std::nullopt;
    }
    if (const std::optional<std::string> name = eval_task_series(event)) {
        auto it = std::find_if(task_series.begin(), task_series.end(),
                               [&name](const TaskSeries& s) { return s.name == *name; });
        if (it == task_series.end()) it = task_series.insert(task_series.end(), TaskSeries{*name, {}});
        it->points.push_back(sample_of(event));
        return std::nullopt;
    }
    const std::optional<Metric> metric = metric_for_key(key);
    if (!metric || !event.value.is_number()) return std::nullopt;
    const MetricSample sample = sample_of(event);
    if (!std::isnan(sample.step) && (!last_step || sample.step > *last_step)) last_step = sample.step;
    points(*metric).push_back(sample);
    return metric;
}

size_t RunMetrics::total_points() const {
    size_t n = 0;
    for (const auto& s : series)
        n += s.size();
    return n;
}

double RunMetrics::x_of(const MetricSample& sample, XAxis axis) const {
    switch (axis) {
        case XAxis::kSamples:
            return sample.samples;
        case XAxis::kSteps:
            if (!std::isnan(sample.step)) return sample.step;
            if (global_batch_size && *global_batch_size > 0 && !std::isnan(sample.samples)) {
                return sample.samples / *global_batch_size;
            }
            return kUnknown;
        case XAxis::kWallTime: {
            const std::optional<int64_t> start = run_start_ms ? run_start_ms : first_time_ms;
            if (!start || sample.time_ms == 0) return kUnknown;
            return static_cast<double>(sample.time_ms - *start) / 1000.0;
        }
    }
    return kUnknown;
}

std::optional<double> RunMetrics::progress() const {
    if (!total_steps || *total_steps <= 0 || !last_step) return std::nullopt;
    return std::min(1.0, *last_step / *total_steps);
}

std::optional<int64_t> RunMetrics::elapsed_ms() const {
    const std::optional<int64_t> start = run_start_ms ? run_start_ms : first_time_ms;
    if (!start || !last_time_ms) return std::nullopt;
    return *last_time_ms - *start;
}

std::optional<int64_t> RunMetrics::eta_ms() const {
    if (run_stop_ms) return 0;
    const std::optional<double> done = progress();
    const std::optional<int64_t> elapsed = elapsed_ms();
    if (!done || !elapsed || *done <= 0) return std::nullopt;
    return static_cast<int64_t>(static_cast<double>(*elapsed) * (1.0 - *done) / *done);
}

bool RunMetrics::meets_target(double value) const {
    if (!target) return false;
    return target_higher_is_better ? value >= *target : value <= *target;
}

}  // namespace slipway::app
