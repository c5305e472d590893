// `slipway run RUN.json [-- FLAGS]`: a run on This computer through the run service
// (service/local_executor.h), the same code as the app's Run button: its folder, run.json and engine.log
// under the local runs folder, its row in the history the app lists (the Runs page shows it; the monitor can
// follow its log), its progress printed as `slipway follow` prints a cluster run's. Ctrl-C (or SIGTERM) asks
// the engine to stop: it saves a checkpoint, and it and its ranks are killed when it has not exited within
// kStopGrace.
#include <chrono>
#include <thread>

#include "cli/remote_connect.h"
#include "cli/stop_signals.h"
#include "contract/mllog_keys.h"
#include "core/engine_command.h"
#include "history/history_run_store.h"
#include "history/run_history.h"
#include "remote/runlog/log_follower.h"
#include "service/local_executor.h"

namespace slipway::app {

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
        if (stop_signals.asked() && !job->cancel_asked()) {
            job->cancel(kStopGrace);
            err << "slipway: stopping the engine " << stop_grace_text() << std::endl;
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
