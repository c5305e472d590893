// MLLOG lines (mlcommons/logging format): the event struct, a byte-exact writer and a non-throwing parser.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/file_system.h"
#include "contract/mllog_keys.h"
#include "contract/status.h"

namespace slipway {

// Ordered so that a parsed line re-formats with its keys where the writer put them (Python dicts keep
// insertion order; mlcommons writes metadata as file, lineno, then the caller's keys).
using MllogJson = nlohmann::ordered_json;

inline constexpr std::string_view kMllogPrefix = ":::MLLOG ";
inline constexpr std::string_view kPointInTime = "POINT_IN_TIME";
inline constexpr std::string_view kIntervalStart = "INTERVAL_START";
inline constexpr std::string_view kIntervalEnd = "INTERVAL_END";

struct MllogEvent {
    std::string ns;          // "namespace" in the JSON; "" in every log we have seen
    int64_t time_ms = 0;     // milliseconds since the Unix epoch; 0 when the line has none
    std::string event_type;  // POINT_IN_TIME | INTERVAL_START | INTERVAL_END (others are kept as given)
    std::string key;
    MllogJson value;                           // any JSON, null by default
    MllogJson metadata = MllogJson::object();  // as given; samples_count() etc. read it if it is an object

    // metadata.samples_count / metadata.step_num when they are JSON numbers.
    std::optional<double> samples_count() const { return metadata_number(mllog_field::kSamplesCount); }
    std::optional<double> step_num() const { return metadata_number(mllog_field::kStepNum); }
    std::optional<double> metadata_number(std::string_view name) const;
    // metadata[name] when it is a string (e.g. run_stop's status).
    std::optional<std::string> metadata_string(std::string_view name) const;
};

// The engine's eval_task lines (/eval/tasks, engine/eval/README.md): one metric of one evaluation task at
// an evaluation; value = the metric, metadata {"task": name, "metric": "acc" | "acc_norm" | "exact_match" |
// "prefix_match" | "perplexity" | "nll", "samples_count", "step_num"}; its key is mllog_key::kEvalTask.
// "task/metric" for an eval_task event with a numeric value and both names; nullopt for any other event.
std::optional<std::string> eval_task_series(const MllogEvent& event);

// JSON text exactly as Python's json.dumps() writes it with default arguments: ", " and ": " separators,
// non-ASCII escaped as \uXXXX, floats in repr() form (0.0004, 1e-05, 1e+16, 1.0). Non-finite numbers
// become null (Python would write NaN, which no JSON parser, ours included, reads back).
std::string format_python_json(const MllogJson& value);

// `:::MLLOG {"namespace": ..., "time_ms": ..., "event_type": ..., "key": ..., "value": ..., "metadata": ...}`
// without a line terminator.
std::string format_mllog_line(const MllogEvent& event);

enum class MllogLineKind {
    kText,      // no ":::MLLOG " in the line
    kBadMllog,  // has the marker, but what follows is not a JSON object (or the line was too long)
    kEvent,
};

struct MllogParseResult {
    MllogLineKind kind = MllogLineKind::kText;
    MllogEvent event;   // kind == kEvent
    std::string error;  // kind == kBadMllog: why, e.g. the JSON parser's message
};

// Parses one line (without its '\n'). Whatever precedes the first ":::MLLOG " (srun's "0: ") is ignored.
// Missing or mistyped fields take the MllogEvent defaults; JSON nested deeper than 512 levels is a bad line
// (Python's json refuses it too). Never throws, whatever the bytes.
MllogParseResult parse_mllog_line(std::string_view line);

// Writes MLLOG lines to one or more streams, one whole line per event, flushed so `tail -f` sees it.
// file/lineno in the metadata name the C++ call site, as mlcommons names the Python one.
class MllogWriter {
public:
    using Clock = std::function<int64_t()>;  // milliseconds since the Unix epoch

    explicit MllogWriter(std::ostream& out, Clock clock = system_clock_ms);

    // Also writes every line to `out` (which must outlive the writer).
    void add_stream(std::ostream& out);
    // Also appends every line to the file at `path` (through `fs`, flushed per line so a follower sees it).
    // The first failed append (a full disk) stops the copy there; file_status() then names the file, the
    // cause and the first line missing from it.
    [[nodiscard]] Status tee_to_file(const std::string& path, FileSystem& fs = default_file_system());
    // Ok while every line reached every tee file; otherwise the first failure, as above.
    [[nodiscard]] Status file_status() const;
    // Closes the tee files, checking the close (a network filesystem may report lost bytes only there).
    [[nodiscard]] Status close_files();
    void set_namespace(std::string ns) { ns_ = std::move(ns); }
    // Also hands every event to `listener`, in order, after its line is written (the run's trackers).
    void add_listener(std::function<void(const MllogEvent&)> listener);

    void point_in_time(std::string_view key, MllogJson value = nullptr,
                       MllogJson metadata = MllogJson::object(), const char* file = __builtin_FILE(),
                       int line = __builtin_LINE());
    void interval_start(std::string_view key, MllogJson value = nullptr,
                        MllogJson metadata = MllogJson::object(), const char* file = __builtin_FILE(),
                        int line = __builtin_LINE());
    void interval_end(std::string_view key, MllogJson value = nullptr,
                      MllogJson metadata = MllogJson::object(), const char* file = __builtin_FILE(),
                      int line = __builtin_LINE());
    // Writes `event` as it is (no call site added, time_ms kept).
    void write(const MllogEvent& event);

    static int64_t system_clock_ms();

private:
    void log(std::string_view event_type, std::string_view key, MllogJson value, MllogJson metadata,
             const char* file, int line);

    Clock clock_;
    std::string ns_;
    std::vector<std::ostream*> streams_;
    struct TeeFile {
        std::string path;
        std::unique_ptr<WritableFile> file;  // null once it failed or was closed
    };
    std::vector<TeeFile> files_;
    std::vector<std::function<void(const MllogEvent&)>> listeners_;
    Status file_status_ = Status::Ok();
    mutable std::mutex mutex_;  // whole lines even when several threads log
};

}  // namespace slipway
