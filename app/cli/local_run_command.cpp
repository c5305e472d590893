// `slipway run RUN.json [-- FLAGS]`: a run on This computer through the run service
// (service/local_executor.h), the same code as the app's Run button: its folder, run.json and engine.log
// under the local runs folder, its row in the history the app lists (the Runs page shows it; the monitor can
// follow its log), its progress printed as `slipway follow` prints a cluster run's. Ctrl-C (or SIGTERM) asks
// the engine to stop: it saves a checkpoint, and it and its ranks are killed when it has not exited 10 s
// later.
#include <signal.h>

#include <array>
#include <atomic>
#include <chrono>
#include <thread>

#include "cli/remote_connect.h"
#include "contract/mllog_keys.h"
#include "core/engine_command.h"
#include "history/history_run_store.h"
#include "history/run_history.h"
#include "remote/runlog/log_follower.h"
#include "service/local_executor.h"

namespace slipway::app {
namespace {

std::atomic<bool> g_stop_asked{false};

void ask_stop(int) {
    g_stop_asked = true;
}

static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

// Ctrl-C, SIGTERM and a closed terminal (SIGHUP) set the flag for the loop: the engine, in a process group
// of its own, does not get them itself. A signal ignored when slipway started (nohup) stays ignored. A
// reader that went away (`| head`) must not kill slipway before it stops the engine and stores the end:
// SIGPIPE is ignored meanwhile. The old handlers come back when the run ends.
class StopSignals {
public:
    StopSignals() {
        g_stop_asked = false;
        struct sigaction action = {};
        action.sa_handler = ask_stop;
        action.sa_flags = SA_RESTART;  // a write to stdout is not cut short
        sigemptyset(&action.sa_mask);
        for (size_t i = 0; i < kSignals.size(); ++i) {
            sigaction(kSignals[i], nullptr, &old_[i]);
            if (old_[i].sa_handler != SIG_IGN) sigaction(kSignals[i], &action, nullptr);
        }
        struct sigaction ignore = {};
        ignore.sa_handler = SIG_IGN;
        sigemptyset(&ignore.sa_mask);
        sigaction(SIGPIPE, &ignore, &old_pipe_);
    }
    ~StopSignals() {
        for (size_t i = 0; i < kSignals.size(); ++i)
            sigaction(kSignals[i], &old_[i], nullptr);
        sigaction(SIGPIPE, &old_pipe_, nullptr);
    }
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

private:
    static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
    std::array<struct sigaction, 3> old_ = {};
    struct sigaction old_pipe_ = {};
};

}  // namespace

int run_local(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<RunConfig> config = load_run_file(c.run_file);
    if (!config.ok()) return fail(err, config.error(), 2);
    if (!c.run_name.empty()) config->name = c.run_name;
    const std::string engine = c.engine.empty() ? find_engine_binary() : c.engine;
    Result<std::unique_ptr<RunHistory>> history = RunHistory::open_default();
    if (!history.ok()) return fail(err, history.error());
    HistoryRunStore store(**history);
    LocalExecutor executor(store, {input_root_for(*config, c.inputs),
                                   c.runs_dir.empty() ? default_local_runs_dir() : c.runs_dir, engine});
    const StopSignals stop_signals;
    Result<LocalJob> job = executor.submit(*config, c.overrides);
    if (!job.ok()) return fail(err, job.error());
    if (!job->store_problem().empty())
        err << "slipway: warning: run history: " << job->store_problem() << "\n";
    out << "run " << job->run().id << " started: " << command_line(job->plan().engine, job->plan().arguments)
        << "\nlog " << job->plan().mllog_path << "\nengine output " << job->plan().engine_log << std::endl;

    remote::LogFollower log(std::make_unique<remote::LocalFileSource>(job->plan().mllog_path),
                            [&](MllogStreamItem&& item) {
                                if (c.raw) {
                                    out << item.text << "\n";
                                } else if (item.kind == MllogLineKind::kEvent) {
                                    print_metric_event(item.event, out);
                                }
                            });
    std::optional<LocalEnd> end;
    while (!(end = job->poll())) {
        if (g_stop_asked && !job->cancel_asked()) {
            job->cancel(std::chrono::seconds(10));
            err << "slipway: stopping the engine (it saves a checkpoint; killed in 10 s otherwise)"
                << std::endl;
        }
        if (Result<remote::PollResult> read = log.poll(); !read.ok())
            err << "slipway: " << read.error() << std::endl;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    (void)log.read_to_end();  // the engine's last lines
    if (!job->store_problem().empty())
        err << "slipway: warning: run history: " << job->store_problem() << "\n";
    out << "final_state=" << to_db_text(end->state);
    if (!end->detail.empty()) out << " (" << end->detail << ")";
    out << "\n";
    return end->state == RunState::kCompleted ? 0 : 1;
}

}  // namespace slipway::app
