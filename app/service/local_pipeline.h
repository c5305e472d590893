// A pipeline (contract/pipeline.h) run on This computer, step by step with the local engine: each step a
// ChildProcess waited for on the calling thread, each a row in the run store (a training step is an ordinary
// local run: plan_local_run's run.json, output folder and mllog). `slipway pipeline run` and the Adaptation
// page both run it in-process and get the same step events; the page runs it on a thread of its own. A stop
// asks the step's engine to stop (SIGTERM), and kills it and its ranks when it has not exited within the
// stop's grace. Qt-free.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "contract/pipeline.h"
#include "contract/status.h"

namespace slipway::app {

class RunStore;

struct LocalPipelineOptions {
    std::string engine;      // slipway-engine
    std::string input_root;  // where the pipeline's relative input paths point
    std::string runs_dir;    // the pipeline's folder is made here: <runs_dir>/<name>-<UTC stamp>
    // Each step's row (not owned; used on the calling thread only). Null: nothing is stored.
    RunStore* store = nullptr;
    // Asked while a step runs: a value stops the step's process and the pipeline, giving the process that
    // long to exit before it is killed (kStopGrace for a user's stop, kClosingGrace for a closing window).
    std::function<std::optional<std::chrono::milliseconds>()> stop_requested;
};

struct LocalPipelineEvent {
    enum class Kind {
        kStarted,       // the pipeline's folder is made: run_dir
        kStepStarted,   // command, store_id, log_path, training
        kStepFinished,  // exit_code, seconds, out (log_path: where a failed step's output is)
    };
    Kind kind = Kind::kStarted;
    std::string pipeline;  // its name
    size_t step = 0;       // 0-based
    size_t steps = 0;
    std::string name;       // the step's
    std::string step_kind;  // the step's kind ("train", "tokenizer", ...)
    std::string run_dir;
    std::string command;    // the program and its arguments, as a shell would show them
    int64_t store_id = 0;   // the step's row in the run history; 0: not stored
    std::string log_path;   // the step's log (a training step's mllog.txt)
    bool training = false;  // its log is MLLOG: followed like any local run
    int exit_code = 0;      // -1: it did not start or crashed
    double seconds = 0;
    std::string out;  // what the step made (its output folder or file)
    // The run history could not take the step's row or its end (the step runs on regardless).
    std::string store_problem;
};

struct LocalPipelineOutcome {
    std::string run_dir;
    double seconds = 0;
};

// Where a pipeline's relative input paths point: `given` (--inputs), else the folder of the pipeline `file`
// when the first of them is there, else `resource_root` (the presets name resources/demo/...), else the
// current folder.
std::string pipeline_input_root(const Pipeline& pipeline, const std::string& file, const std::string& given,
                                const std::string& resource_root);

// What `slipway pipeline run` prints for an event, and the Adaptation page shows: "pipeline NAME: 5 steps in
// DIR", "[2/5] lep (lep): ENGINE ARGS", "    done in 3.2 s; out PATH"; empty for a step that failed (the
// error says it).
std::string describe_pipeline_event(const LocalPipelineEvent& event);
// "pipeline NAME completed in 41.0 s: DIR".
std::string describe_pipeline_completion(const std::string& name, const LocalPipelineOutcome& outcome);

// Runs every step in order; the first step that fails (or a stop) ends it with an error naming the step,
// its exit code and its log.
[[nodiscard]] Result<LocalPipelineOutcome> run_local_pipeline(
    const Pipeline& pipeline, const LocalPipelineOptions& options,
    const std::function<void(const LocalPipelineEvent&)>& on_event);

}  // namespace slipway::app
