// The run service on This computer: a run config made self-contained (relative inputs resolved against the
// resource root, outputs under the run's own folder), written as run.json, and slipway-engine started on it
// as a ChildProcess, its output in the run's engine.log. The run's row is written once per state change:
// running with the engine's pid (or failed with why it could not start) when it starts, its end when it
// exits. Qt-free: the app's RunTracker polls a LocalJob from a timer; the monitor follows
// <output_dir>/mllog.txt exactly as it follows a cluster log.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"
#include "service/child_process.h"
#include "service/run_store.h"

namespace slipway::app {

struct LocalRunPlan {
    RunConfig config;        // as it will be run: absolute paths
    std::string run_dir;     // <runs dir>/<name>-<local time>
    std::string run_json;    // <run_dir>/run.json, the file the engine reads
    std::string mllog_path;  // <output_dir>/mllog.txt
    std::string engine_log;  // <run_dir>/engine.log: the engine's stdout and stderr
    std::string engine;      // the slipway-engine binary
    std::vector<std::string> arguments;
};

// Resolves paths, writes run.json and chooses the command. `overrides` are HF-style flags appended to the
// engine's command line (tests use --max_steps). Fails when there is no engine or run.json cannot be written.
[[nodiscard]] Result<LocalRunPlan> plan_local_run(const RunConfig& config, const std::string& resource_root,
                                                  const std::string& runs_dir, const std::string& engine,
                                                  const std::vector<std::string>& overrides = {});

// How a local run ended.
struct LocalEnd {
    RunState state = RunState::kCompleted;  // completed, failed, cancelled or interrupted
    ProcessExit exit;
    std::string detail;  // "exit code 1: <the engine's last line>"; empty when it completed
};

// A started engine. Movable; one still running when it is destroyed is stopped (its row is not written:
// interrupt() is the way to say why).
class LocalJob {
public:
    const StoredRun& run() const { return run_; }
    const LocalRunPlan& plan() const { return plan_; }
    pid_t pid() const { return process_.pid(); }
    // Why the store could not take the run's row or its end; empty when it did (the run goes on regardless).
    const std::string& store_problem() const { return store_problem_; }

    // Its end, once the engine has exited: stored in its row, the same answer when asked again. A cancel
    // that was not obeyed within its grace turns into SIGKILL for the engine and its ranks here.
    std::optional<LocalEnd> poll();
    // SIGTERM to the engine (it saves a checkpoint; `launch` passes it to every rank); SIGKILL to all of
    // them when it has not exited `grace` later (checked by poll()).
    void cancel(std::chrono::milliseconds grace);
    bool cancel_asked() const { return cancel_deadline_.has_value(); }
    // Stops it now and waits (slipway is closing): its row says interrupted, with `why`.
    LocalEnd interrupt(const std::string& why, std::chrono::milliseconds grace);

private:
    friend class LocalExecutor;
    LocalJob(RunStore& store, StoredRun run, LocalRunPlan plan, ChildProcess process)
        : store_(&store), run_(std::move(run)), plan_(std::move(plan)), process_(std::move(process)) {}
    LocalEnd end_of(const ProcessExit& exit) const;
    void store_end(const LocalEnd& end);

    RunStore* store_;
    StoredRun run_;
    LocalRunPlan plan_;
    ChildProcess process_;
    std::optional<std::chrono::steady_clock::time_point> cancel_deadline_;
    std::optional<LocalEnd> end_;
    std::string store_problem_;
};

class LocalExecutor {
public:
    struct Options {
        std::string resource_root;  // relative inputs are relative to it
        std::string runs_dir;       // each run gets its folder here
        std::string engine;         // slipway-engine
    };
    // `store` outlives the executor and its jobs.
    LocalExecutor(RunStore& store, Options options) : store_(store), options_(std::move(options)) {}
    const Options& options() const { return options_; }

    // Plans the run and starts the engine. A run that has its folder but cannot start is stored failed with
    // why, and the error says the same.
    [[nodiscard]] Result<LocalJob> submit(const RunConfig& config,
                                          const std::vector<std::string>& overrides = {});

private:
    RunStore& store_;
    Options options_;
};

}  // namespace slipway::app
