// One run in an MLflow file store (mlruns/<experiment>/<run>/: meta.yaml, params/, metrics/, tags/,
// artifacts/), laid out as MLflow's FileStore lays it out, so MlflowClient reads it, `mlflow ui
// --backend-store-uri` shows it and `mlflow migrate-filestore` moves it into a database. Metric points are
// appended a line at a time ("<ms> <value> <step>"), so a crash loses at most a torn last line; meta.yaml and
// the other small files are replaced atomically.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "contract/file_system.h"
#include "contract/status.h"

namespace slipway::track {

// MLflow's RunStatus numbers, as meta.yaml stores them.
enum class MlflowRunStatus { kRunning = 1, kFinished = 3, kFailed = 4, kKilled = 5 };

// The experiment every run goes to: MLflow's own "Default" (id 0), as HF's MLflowCallback uses without
// MLFLOW_EXPERIMENT_NAME.
inline constexpr std::string_view kMlflowDefaultExperiment = "0";

// A metric or param key MLflow accepts: letters, digits and "_-. /"; anything else becomes '_' (an eval
// task's "acc,none" becomes "acc_none").
std::string mlflow_key(std::string_view key);

class MlflowRun {
public:
    // A new run, RUNNING, named `run_name`, in the Default experiment of the store at `root` (created with
    // the experiment when missing). `start_ms`: milliseconds since the Unix epoch.
    [[nodiscard]] static Result<std::unique_ptr<MlflowRun>> create(const std::string& root,
                                                                   const std::string& run_name,
                                                                   int64_t start_ms,
                                                                   FileSystem& fs = default_file_system());
    // The store's newest run named `run_name` (by start time) set RUNNING again: a resumed run goes on in
    // the run it started. Not found: nullopt.
    [[nodiscard]] static Result<std::optional<std::unique_ptr<MlflowRun>>> reopen_latest(
        const std::string& root, const std::string& run_name, FileSystem& fs = default_file_system());

    [[nodiscard]] Status param(std::string_view key, std::string_view value);
    [[nodiscard]] Status tag(std::string_view key, std::string_view value);
    // Appends "<ms> <value> <step>" to metrics/<key>, which stays open (and is flushed per line) until
    // terminate().
    [[nodiscard]] Status metric(std::string_view key, double value, int64_t timestamp_ms, int64_t step);
    // A file under artifacts/ (the run config, as the run ran it).
    [[nodiscard]] Status artifact(std::string_view name, std::string_view bytes);
    [[nodiscard]] Status terminate(MlflowRunStatus status, int64_t end_ms);

    const std::string& run_id() const { return run_id_; }
    const std::string& run_dir() const { return dir_; }

private:
    MlflowRun(FileSystem& fs, std::string root, std::string run_id, std::string run_name, int64_t start_ms);
    [[nodiscard]] Status write_meta(MlflowRunStatus status, std::optional<int64_t> end_ms);
    [[nodiscard]] Result<WritableFile*> metric_file(const std::string& key);
    [[nodiscard]] Status write_small_file(const std::string& folder, std::string_view key,
                                          std::string_view value);

    FileSystem& fs_;
    std::string root_;  // absolute: meta.yaml's artifact_uri is a file:// URI
    std::string run_id_;
    std::string run_name_;
    std::string dir_;
    int64_t start_ms_ = 0;
    std::map<std::string, std::unique_ptr<WritableFile>> metric_files_;  // by key, open for appending
};

}  // namespace slipway::track
