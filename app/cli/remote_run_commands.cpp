// `slipway submit | status | cancel | follow | fetch`: the command line over the run service
// (service/slurm_executor.h), which records every run in the history the app uses too
// ($XDG_DATA_HOME/slipway/history.sqlite), so every command works from a new process and a run submitted here
// or in the app is listed, followed and fetched from both. What is here: arguments, connecting, printing. The
// CLI writes states only; points are the app's (a run followed in both is never stored twice).
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <thread>

#include "cli/remote_connect.h"
#include "contract/hf_flags.h"
#include "contract/mllog_keys.h"
#include "contract/node_ranks.h"
#include "contract/run_config.h"
#include "history/history_run_store.h"
#include "history/run_history.h"
#include "service/job_watch.h"
#include "service/slurm_executor.h"

namespace slipway::app {
namespace {

namespace fs = std::filesystem;

// One cluster's connection and the service over it.
struct Connected {
    remote::ClusterProfile profile;
    std::unique_ptr<remote::Session> session;
    std::unique_ptr<SlurmExecutor> executor;
};

Result<Connected> connect_for(RemoteCommands& c, const std::string& cluster, RunStore& store) {
    Result<remote::ClusterProfile> profile = profile_store(c).find(cluster);
    if (!profile.ok()) return profile.status();
    Result<std::unique_ptr<remote::Session>> session = connect_cluster(*profile, c.ssh);
    if (!session.ok()) return session.status();
    Connected out{*profile, std::move(*session), nullptr};
    out.executor = std::make_unique<SlurmExecutor>(*out.session, out.profile, store);
    return out;
}

// The history file and the service's view of it.
struct Store {
    std::unique_ptr<RunHistory> history;
    std::unique_ptr<HistoryRunStore> runs;
};

Result<Store> open_store() {
    Result<std::unique_ptr<RunHistory>> history = RunHistory::open_default();
    if (!history.ok()) return history.status();
    Store out{std::move(*history), nullptr};
    out.runs = std::make_unique<HistoryRunStore>(*out.history);
    return out;
}

// The job of the run named on the command line (a run id, or a row number from the Runs page), connected.
struct NamedJob {
    Connected connected;
    std::optional<SlurmJob> job;
};

Result<NamedJob> job_for(RemoteCommands& c, RunStore& store) {
    Result<StoredRun> stored = store.find(c.run_id);
    if (!stored.ok()) return stored.status();
    if (stored->job_id.empty()) return Status::Error("run " + c.run_id + " has no Slurm job");
    Result<Connected> connected = connect_for(c, stored->cluster, store);
    if (!connected.ok()) return connected.status();
    NamedJob out{std::move(*connected), std::nullopt};
    Result<SlurmJob> job = out.connected.executor->job(*stored);
    if (!job.ok()) return job.status();
    out.job.emplace(std::move(*job));
    return out;
}

// The reason stored with an ended job's last state (" (DependencyNeverSatisfied)" of a chained step), from
// its detail "<node list> (<reason>)"; empty when Slurm gave none.
std::string stored_reason(const std::string& detail) {
    if (detail.empty() || detail.back() != ')') return {};
    const size_t open = detail.rfind(" (");
    if (open == std::string::npos) return {};
    // What reason_suffix leaves out, rows written before it may hold.
    remote::JobInfo job;
    job.reason = detail.substr(open + 2, detail.size() - open - 3);
    return job.reason_suffix();
}

}  // namespace

int run_submit(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    if (is_pipeline_file(c.run_file)) return run_pipeline_submit(c, out, err);
    Result<RunConfig> loaded = load_run_file(c.run_file);
    if (!loaded.ok()) return fail(err, loaded.error());
    RunConfig config = *loaded;
    if (!c.run_name.empty()) config.name = c.run_name;
    if (!c.overrides.empty()) {
        Result<FlagReport> report = apply_hf_flags(config, c.overrides);
        if (!report.ok()) return fail(err, report.error(), 2);
        for (const std::string& note : report->notes)
            err << "slipway: note: " << note << "\n";
    }
    if (c.exclude_bad) {
        if (Status s = exclude_bad_nodes(c.cluster, config, err); !s.ok()) return fail(err, s.message());
    }
    Result<Store> store = open_store();
    if (!store.ok()) return fail(err, store.error());
    Result<Connected> connected = connect_for(c, c.cluster, *store->runs);
    if (!connected.ok()) return fail(err, connected.error());
    SubmitRequest request;
    request.config = config;
    request.input_root = input_root_for(config, c.inputs);
    if (remote::engine_source_of(connected->profile) == remote::EngineSource::kDesktop)
        request.engine_binary = c.engine.empty() ? engine_next_to_slipway() : c.engine;
    request.engine_bundle = find_engine_bundle();
    request.progress = [&err](const std::string& what) { err << "slipway: " << what << std::endl; };
    Result<Submission> run = connected->executor->submit(request);
    if (!run.ok()) return fail(err, run.error());
    if (!run->store_problem.empty())
        err << "slipway: warning: job " << run->run.job_id << " was submitted, but the run history was not "
            << "updated: " << run->store_problem << "\n";
    out << "remote folder: " << run->deployment.remote_dir << "\n";
    out << "pre-flight: " << run->test_only << "\n";
    out << "run_id=" << run->run.run_id << " job_id=" << run->run.job_id << "\n";
    return 0;
}

int run_status(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<Store> store = open_store();
    if (!store.ok()) return fail(err, store.error());
    RunStore& runs_store = *store->runs;
    std::vector<StoredRun> runs;
    if (c.run_id.empty()) {
        Result<std::vector<StoredRun>> all = runs_store.cluster_runs();
        if (!all.ok()) return fail(err, all.error());
        runs = std::move(*all);
    } else {
        Result<StoredRun> one = runs_store.find(c.run_id);
        if (!one.ok()) return fail(err, one.error());
        runs.push_back(std::move(*one));
    }
    if (runs.empty()) {
        out << "no cluster runs in " << runs_store.location() << "\n";
        return 0;
    }
    // The live runs' jobs, asked per cluster: one connection and one squeue for all of a cluster's jobs,
    // kept for a second question when a job looks ended (it may be being requeued).
    std::map<std::string, Result<Connected>> connections;
    const AskJobs ask = [&](const std::string& cluster, const std::vector<std::string>& jobs) {
        auto connection = connections.find(cluster);
        if (connection == connections.end())
            connection = connections.emplace(cluster, connect_for(c, cluster, runs_store)).first;
        std::map<std::string, Result<remote::JobInfo>> out;
        for (const std::string& job : jobs)
            if (!connection->second.ok()) out.emplace(job, connection->second.status());
        if (!connection->second.ok()) return out;
        for (JobAnswer& answer : connection->second->executor->ask(jobs))
            out.emplace(answer.job_id, std::move(answer.info));
        return out;
    };
    const auto wait = [&](std::chrono::milliseconds settle) {
        err << "slipway: a job looks ended; asking Slurm again in " << (settle.count() + 999) / 1000
            << " s (a job being requeued looks ended for a moment)" << std::endl;
        std::this_thread::sleep_for(settle);
    };
    const LiveJobsCheck checked = check_live_jobs(runs_store, runs, ask, wait);
    for (const std::string& problem : checked.store_problems)
        err << "slipway: run history: " << problem << "\n";
    const std::map<JobKey, Result<remote::JobInfo>>& answers = checked.answers;
    int code = 0;
    std::vector<std::vector<std::string>> rows = {{"RUN_ID", "CLUSTER", "JOB", "STATE", "SUBMITTED"}};
    for (const StoredRun& r : runs) {
        remote::RunRecord shown = r.remote_record();
        if (const auto answer = answers.find({r.cluster, r.job_id});
            is_live(r.state) && answer != answers.end()) {
            const Result<remote::JobInfo>& info = answer->second;
            if (info.ok()) {
                // The reason says why a chained step waits or ended (DependencyNeverSatisfied).
                shown.last_state = info->state + info->reason_suffix();
            } else {
                err << "slipway: " << shown.run_id << ": " << info.error() << "\n";
                shown.last_state = "?";
                code = 1;
            }
        }
        if (!is_live(r.state) && !r.slurm_state.empty()) shown.last_state += stored_reason(r.state_detail);
        rows.push_back({shown.run_id, shown.cluster, shown.job_id, shown.last_state, shown.submitted});
    }
    print_table(out, rows);
    return code;
}

int run_cancel(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<Store> store = open_store();
    if (!store.ok()) return fail(err, store.error());
    Result<NamedJob> named = job_for(c, *store->runs);
    if (!named.ok()) return fail(err, named.error());
    if (Status s = named->job->cancel(); !s.ok()) return fail(err, s.message());
    out << "cancelled job " << named->job->run().job_id << " (run " << c.run_id << ")\n";
    return 0;
}

int run_follow(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<Store> store = open_store();
    if (!store.ok()) return fail(err, store.error());
    Result<NamedJob> named = job_for(c, *store->runs);
    if (!named.ok()) return fail(err, named.error());

    remote::RunFollowOptions options;
    options.interval = std::chrono::milliseconds(static_cast<long long>(c.interval_s * 1000));
    options.outage_limit = std::chrono::seconds(c.outage_limit_s);
    remote::RunFollowCallbacks callbacks;
    std::vector<NodeStep> last_node_steps;  // shown beside the nodes' Slurm states
    callbacks.on_line = [&](MllogStreamItem&& item) {
        if (c.raw) out << item.text << "\n";
        if (c.raw || item.kind != MllogLineKind::kEvent) return;
        const MllogEvent& e = item.event;
        // Where the ranks run, and which nodes a failed run lost.
        if (e.key == mllog_key::kNodeRanks) {
            if (const auto nodes = node_ranks_from_json(e.value))
                out << "nodes " << describe_node_ranks(*nodes) << std::endl;
            return;
        }
        if (e.key == mllog_key::kNodeSteps) {  // which node is behind
            if (auto steps = node_steps_from_json(e.value)) {
                out << "node_steps " << describe_node_steps(*steps) << std::endl;
                last_node_steps = std::move(*steps);
            }
            return;
        }
        if (e.key == mllog_key::kRunStop) {
            if (const auto it = e.metadata.find(mllog_field::kLostNodes);
                it != e.metadata.end() && it->is_array() && !it->empty())
                out << "lost_nodes " << it->dump() << std::endl;
            return;
        }
        print_metric_event(e, out);
    };
    callbacks.on_state = [&](const remote::JobInfo& job) {
        out << "state " << job.state << job.reason_suffix() << std::endl;
    };
    callbacks.on_notice = [&](const std::string& notice) { err << "slipway: " << notice << std::endl; };
    callbacks.on_nodes = [&](const std::vector<remote::NodeState>& nodes) {
        out << "node_states " << remote::describe_node_states(nodes, last_node_steps) << std::endl;
    };
    Result<remote::RunFollowOutcome> outcome = named->job->follow(options, std::move(callbacks));
    if (!outcome.ok()) return fail(err, outcome.error());
    out << "final_state=" << outcome->job.state;
    if (outcome->job.state == "UNKNOWN" && !outcome->run_stop_status.empty())
        out << " (run_stop status " << outcome->run_stop_status << ")";
    out << "\n";
    return outcome->success() ? 0 : 1;
}

int run_fetch(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<Store> store = open_store();
    if (!store.ok()) return fail(err, store.error());
    Result<NamedJob> named = job_for(c, *store->runs);
    if (!named.ok()) return fail(err, named.error());
    Result<FetchedRun> fetched = named->job->fetch(c.fetch_to, c.checkpoints);
    if (!fetched.ok()) return fail(err, fetched.error());
    out << "fetched " << fetched->files << " files (" << fetched->bytes << " bytes) of run "
        << named->job->run().remote_record().run_id << " to " << fetched->destination << "\n";
    return fetched->files > 0 ? 0 : 1;
}

}  // namespace slipway::app
