// The MLLOG key -> tracker tag table, and the step each event belongs to.
#include "track/metric_points.h"

#include <array>
#include <cmath>
#include <string_view>
#include <utility>

namespace slipway::track {
namespace {

// HF Trainer's names (its log keys with the train/ or eval/ prefix its TensorBoard and W&B callbacks add).
constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kHfTags = {{
    {mllog_key::kTrainLoss, "train/loss"},
    {mllog_key::kLearningRate, "train/learning_rate"},
    {mllog_key::kGradNorm, "train/grad_norm"},
    {mllog_key::kTokensPerSecond, "train/tokens_per_second"},
    {mllog_key::kEvalLoss, "eval/loss"},
    {mllog_key::kEvalAccuracy, "eval/accuracy"},
    {mllog_key::kEvalTokenAccuracy, "eval/token_accuracy"},
}};

// The optimizer step an event belongs to: the engine's step_num; an MLPerf log's samples_count or epoch_num.
int64_t step_of(const MllogEvent& event) {
    if (auto step = event.step_num()) return static_cast<int64_t>(*step);
    if (auto samples = event.samples_count()) return static_cast<int64_t>(*samples);
    if (auto epoch = event.metadata_number("epoch_num")) return static_cast<int64_t>(*epoch);
    return 0;
}

}  // namespace

int64_t unix_ms(double wall_time) {
    return static_cast<int64_t>(std::llround(wall_time * 1000.0));
}

std::string metric_tag(const MllogEvent& event) {
    for (const auto& [key, tag] : kHfTags)
        if (event.key == key) return std::string(tag);
    if (std::optional<std::string> series = eval_task_series(event)) return "eval/" + *series;
    return "mllog/" + event.key;
}

const std::vector<std::string>& summary_metric_tags() {
    static const std::vector<std::string> tags = {"train/loss", "eval/loss", "eval/accuracy"};
    return tags;
}

std::vector<MetricPoint> MetricNamer::points(const MllogEvent& event) {
    if (event.event_type != kPointInTime || !event.value.is_number()) return {};
    const double value = event.value.get<double>();
    if (event.key == mllog_key::kTrainSamples) train_samples_ = value;
    const double wall_time = static_cast<double>(event.time_ms) / 1000.0;
    const int64_t step = step_of(event);
    std::vector<MetricPoint> out = {{metric_tag(event), step, value, wall_time}};
    const std::optional<double> samples = event.samples_count();
    if (event.key == mllog_key::kTrainLoss && samples && train_samples_ && *train_samples_ > 0)
        out.push_back({"train/epoch", step, *samples / *train_samples_, wall_time});
    return out;
}

}  // namespace slipway::track
