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

// How long a stopped engine (a run, a pipeline step) has to save a checkpoint and exit before it and its
// ranks are killed; and the shorter time it has when slipway itself is closing (a window waits for it).
inline constexpr std::chrono::milliseconds kStopGrace{10'000};
inline constexpr std::chrono::milliseconds kClosingGrace{3'000};

struct LocalRunPlan {
    RunConfig config;        // as it will be run: absolute paths
    std::string run_dir;     // <runs dir>/<name>-<local time>
    std::string run_json;    // <run_dir>/run.json, the file the engine reads
    std::string mllog_path;  // <output_dir>/mllog.txt
    std::string engine_log;  // <run_dir>/engine.log: the engine's stdout and stderr
    std::string engine;      // the slipway-engine binary
    std::vector<std::string> arguments;
};

// "<name>-yyyyMMdd-HHmmss-mmm" (local time; the name with only letters, digits, '-' and '_'): a run's or a
// pipeline's folder, two started in one second apart.
std::string run_folder_name(const std::string& name);

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

// The one rule for a local engine's end (a run's, a pipeline step's): cancelled when a stop was asked, or
// when it answered a SIGTERM from elsewhere (exit 143 or the signal: another door's cancel; a logout or a
// shutdown looks the same), completed on exit 0, else failed with its exit and the last line of `log`.
LocalEnd local_end(const ProcessExit& exit, bool stop_asked, const std::string& log);

// A started engine. Movable. Nothing here blocks but wait(): poll() is for a GUI timer. One still running
// when it is destroyed is stopped (its row is not written: interrupt() is the way to say why).
class LocalJob {
public:
    const StoredRun& run() const { return run_; }
    const LocalRunPlan& plan() const { return plan_; }
    pid_t pid() const { return process_.pid(); }
    // Why the store could not take the run's row or its end; empty when it did (the run goes on regardless).
    const std::string& store_problem() const { return store_problem_; }

    // Its end, once the engine has exited: stored in its row, the same answer when asked again. A stop that
    // was not obeyed within its grace turns into SIGKILL for the engine's group here (once).
    std::optional<LocalEnd> poll();
    // poll() until it ends or `timeout` has passed.
    std::optional<LocalEnd> wait(std::chrono::milliseconds timeout);
    // SIGTERM to the engine (it saves a checkpoint; `launch` passes it to every rank); SIGKILL when it has
    // not exited `grace` later (checked by poll()). Its end is stored cancelled.
    void cancel(std::chrono::milliseconds grace);
    bool cancel_asked() const { return stop_deadline_.has_value(); }
    // The same stop when slipway is closing: its end is stored interrupted, with `why` (an engine that had
    // ended already keeps its own end).
    void interrupt(const std::string& why, std::chrono::milliseconds grace);

private:
    friend class LocalExecutor;
    LocalJob(RunStore& store, StoredRun run, LocalRunPlan plan, ChildProcess process)
        : store_(&store), run_(std::move(run)), plan_(std::move(plan)), process_(std::move(process)) {}
    void store_end(const LocalEnd& end);
    void ask_stop(std::chrono::milliseconds grace);

    RunStore* store_;
    StoredRun run_;
    LocalRunPlan plan_;
    ChildProcess process_;
    std::optional<std::chrono::steady_clock::time_point> stop_deadline_;
    bool killed_ = false;
    std::optional<std::string> interrupted_;  // why, when the stop is slipway closing
    std::optional<LocalEnd> end_;
    std::string store_problem_;
};

// The pid in the row of a run on This computer, while that process is still the run's engine: its command
// line names the run's run.json (<run_dir>/run.json, beside output/mllog.txt), or, for a pipeline step whose
// log is <step folder>/engine.log, it runs in that folder. An error says why not (no pid, it has ended, the
// number now belongs to another program).
[[nodiscard]] Result<pid_t> check_local_engine(const StoredRun& run);
// Asks the engine of a run on This computer that another process started (`slipway run`, another window) to
// stop: SIGTERM to the pid in its row, the way that process's own cancel starts (the engine saves a
// checkpoint and exits; that process stores the run cancelled). Refused, naming why, when the row has no pid
// or the process is no longer the run's engine (its command line does not name the run's run.json): a pid
// the system has given to another program since is never signalled.
[[nodiscard]] Status stop_local_run(const StoredRun& run);

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
