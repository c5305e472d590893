// TensorBoard's event file format, encoded: TFRecord framing around serialized `Event` protobufs, with the
// summaries torch.utils.tensorboard's SummaryWriter writes (scalars, text, and the HParams plugin's three).
// Pure functions of their arguments; tensorboard_writer.h puts them in a file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace slipway::track {

// One TFRecord: u64 length, masked CRC-32C of the length, the data, masked CRC-32C of the data
// (little-endian).
std::string tfrecord(std::string_view data);

// The first event of every file: file_version "brain.Event:2".
std::string file_version_event(double wall_time);
// Summary.Value{tag, simple_value} at `step`, as SummaryWriter.add_scalar writes it.
std::string scalar_event(double wall_time, int64_t step, std::string_view tag, float value);
// The text plugin's string tensor, as SummaryWriter.add_text writes it (tag "<tag>/text_summary").
std::string text_event(double wall_time, int64_t step, std::string_view tag, std::string_view text);

// A run's hyperparameters for the HParams plugin: numbers, strings and booleans.
using HParamValue = std::variant<double, std::string, bool>;
using HParams = std::vector<std::pair<std::string, HParamValue>>;

// The HParams plugin's three summaries, as SummaryWriter.add_hparams writes them: the experiment (hparams and
// the metric tags to show beside them), the session's start (the values), and its end (success or failure).
std::string hparams_experiment_event(double wall_time, const HParams& hparams,
                                     const std::vector<std::string>& metric_tags);
std::string hparams_session_start_event(double wall_time, const HParams& hparams);
std::string hparams_session_end_event(double wall_time, bool succeeded);

}  // namespace slipway::track
