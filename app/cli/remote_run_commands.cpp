// `slipway submit | status | cancel | follow | fetch`: a run's life on a cluster, recorded in the run history
// the app uses too ($XDG_DATA_HOME/slipway/history.sqlite), so every command works from a new process and a
// run submitted here or in the app is listed, followed and fetched from both. The CLI writes states only;
// points are the app's (a run followed in both is never stored twice).
#include <chrono>
#include <filesystem>
#include <map>

#include "cli/remote_connect.h"
#include "contract/hf_flags.h"
#include "contract/mllog_keys.h"
#include "contract/node_ranks.h"
#include "contract/run_config.h"
#include "history/history_run_sink.h"
#include "history/run_history.h"
#include "remote/deploy/deploy.h"
#include "remote/deploy/run_follow.h"
#include "remote/slurm/slurm_client.h"

namespace slipway::app {
namespace {

namespace fs = std::filesystem;

// Where relative input paths point: --inputs, else the current folder when it holds them, else the
// resource root (presets name resources/demo/...).
std::string input_root_for(const RunConfig& config, const std::string& given) {
    if (!given.empty()) return given;
    std::error_code ec;
    const std::string cwd = fs::current_path(ec).string();
    for (const std::string* path : {&config.model.path, &config.tokenizer.path, &config.data.train_file}) {
        if (path->empty() || fs::path(*path).is_absolute()) continue;
        if (fs::exists(fs::path(cwd) / *path, ec)) return cwd;
        const std::string root = resource_root();
        if (!root.empty() && fs::exists(fs::path(root) / *path, ec)) return root;
    }
    return cwd;
}

struct Connected {
    remote::ClusterProfile profile;
    std::unique_ptr<remote::Session> session;
};

Result<Connected> connect_for(RemoteCommands& c, const std::string& cluster) {
    Result<remote::ClusterProfile> profile = profile_store(c).find(cluster);
    if (!profile.ok()) return profile.status();
    Result<std::unique_ptr<remote::Session>> session = connect_cluster(*profile, c.ssh);
    if (!session.ok()) return session.status();
    return Connected{*profile, std::move(*session)};
}

Result<std::unique_ptr<RunHistory>> open_store() {
    return RunHistory::open_default();
}

// The record follow and fetch work from. Rows the app wrote before schema 3 have no remote folder: their
// log's folder is it.
remote::RunRecord to_remote_record(const RunRecord& r) {
    remote::RunRecord out;
    out.run_id = (r.run_id.isEmpty() ? QString::number(r.id) : r.run_id).toStdString();
    out.name = r.name.toStdString();
    out.cluster = r.cluster.toStdString();
    out.job_id = r.job_id.toStdString();
    out.slurm_cluster = r.slurm_cluster.toStdString();
    out.remote_dir =
        (r.remote_dir.isEmpty() ? r.log_path.left(r.log_path.lastIndexOf(QLatin1Char('/'))) : r.remote_dir)
            .toStdString();
    out.submitted = remote::utc_timestamp(r.created.isValid() ? r.created.toSecsSinceEpoch() : 0);
    out.last_state = (r.slurm_state.isEmpty() ? QString::fromUtf8(to_db_text(r.state).data()) : r.slurm_state)
                         .toStdString();
    return out;
}

// The stored run named on the command line (a run id, or a row number from the Runs page).
Result<RunRecord> find_stored(RunHistory& store, const std::string& run_id) {
    const Result<int64_t> id = store.find_run(QString::fromStdString(run_id));
    if (!id.ok()) return id.status();
    return store.run(*id);
}

// Slurm's word for a job, stored as the run's state (never reopening an ended run).
void store_job_state(RunHistory& store, int64_t id, const remote::JobInfo& job, std::ostream& err) {
    const RunState state = from_slurm(job.state);
    const Status s = store.set_state(id, state, QString::fromStdString(job.node_list + job.reason_suffix()),
                                     QString::fromStdString(job.state),
                                     is_terminal(state) ? QDateTime::currentDateTime() : QDateTime(),
                                     StateWrite::kIfNotEnded);
    if (!s.ok()) err << "slipway: " << s.message() << "\n";
}

// Several jobs' states with one squeue (SlurmClient::jobs), surviving one dropped connection.
Result<std::vector<remote::JobInfo>> query_jobs(remote::Session& session,
                                                const std::vector<std::string>& job_ids) {
    remote::SlurmClient slurm(session);
    Result<std::vector<remote::JobInfo>> infos = slurm.jobs(job_ids);
    if (infos.ok() || infos.code() != StatusCode::kUnavailable) return infos;
    if (Status s = session.reconnect(); !s.ok()) return s;
    return slurm.jobs(job_ids);
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
    Result<std::unique_ptr<RunHistory>> store = open_store();
    if (!store.ok()) return fail(err, store.error());
    Result<Connected> connected = connect_for(c, c.cluster);
    if (!connected.ok()) return fail(err, connected.error());
    remote::DeployRequest request;
    request.config = config;
    request.profile = connected->profile;
    request.run_id = remote::make_run_id(config.name);
    request.input_root = input_root_for(config, c.inputs);
    if (connected->profile.container == remote::ContainerMode::kNone)
        request.engine_binary = c.engine.empty() ? engine_next_to_slipway() : c.engine;
    // The row exists before anything is uploaded: a submission that fails is listed with its reason.
    RunRecord row;
    row.name = QString::fromStdString(config.name);
    row.cluster = QString::fromStdString(c.cluster);
    row.state = RunState::kSubmitting;
    row.started = QDateTime::currentDateTime();
    row.config_json = QString::fromStdString(to_json(config).dump(2));
    row.run_id = QString::fromStdString(request.run_id);
    const Result<int64_t> id = (*store)->add_run(row);
    if (!id.ok()) return fail(err, id.error());
    remote::SlurmClient slurm(*connected->session);
    const HistoryRunSink sink(**store);
    Result<remote::SubmittedRun> run = remote::submit_run(*connected->session, slurm, request, sink);
    if (!run.ok()) {
        (void)(*store)->set_state(*id, RunState::kFailed, QString::fromStdString("submit: " + run.error()),
                                  {}, QDateTime::currentDateTime());
        return fail(err, run.error());
    }
    if (!sink.problem().empty())
        err << "slipway: warning: job " << run->record.job_id
            << " was submitted, but the run history was not "
            << "updated at once: " << sink.problem() << "\n";
    // The config as it runs there, and the job again should the sink have failed (a second try).
    if (Result<RunRecord> stored = (*store)->run(*id); stored.ok()) {
        stored->config_json = QString::fromStdString(to_json(run->deployment.remote_config).dump(2));
        stored->job_id = QString::fromStdString(run->record.job_id);
        stored->remote_dir = QString::fromStdString(run->record.remote_dir);
        stored->slurm_cluster = QString::fromStdString(run->record.slurm_cluster);
        stored->log_path = QString::fromStdString(run->record.slurm_log());
        if (stored->state == RunState::kSubmitting) stored->state = RunState::kPending;
        if (Status s = (*store)->update_run(*stored); !s.ok()) err << "slipway: " << s.message() << "\n";
    }
    out << "remote folder: " << run->deployment.remote_dir << "\n";
    out << "pre-flight: " << run->test_only << "\n";
    out << "run_id=" << run->record.run_id << " job_id=" << run->record.job_id << "\n";
    return 0;
}

int run_status(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<std::unique_ptr<RunHistory>> store = open_store();
    if (!store.ok()) return fail(err, store.error());
    std::vector<RunRecord> runs;
    if (c.run_id.empty()) {
        Result<std::vector<RunRecord>> all = (*store)->cluster_runs();
        if (!all.ok()) return fail(err, all.error());
        runs = *all;
    } else {
        Result<RunRecord> one = find_stored(**store, c.run_id);
        if (!one.ok()) return fail(err, one.error());
        runs.push_back(*one);
    }
    if (runs.empty()) {
        out << "no cluster runs in " << (*store)->path().toStdString() << "\n";
        return 0;
    }
    // The live runs' jobs, asked per cluster: one connection and one squeue for all of a cluster's jobs.
    std::map<std::string, std::vector<std::string>> live_jobs;  // cluster -> job ids
    for (const RunRecord& r : runs)
        if (is_live(r.state) && !r.job_id.isEmpty())
            live_jobs[r.cluster.toStdString()].push_back(r.job_id.toStdString());
    std::map<std::pair<std::string, std::string>, Result<remote::JobInfo>> answers;  // (cluster, job) ->
    for (const auto& [cluster, job_ids] : live_jobs) {
        Result<Connected> connected = connect_for(c, cluster);
        const Result<std::vector<remote::JobInfo>> infos =
            connected.ok() ? query_jobs(*connected->session, job_ids) : connected.status();
        for (size_t i = 0; i < job_ids.size(); ++i)
            answers.emplace(std::make_pair(cluster, job_ids[i]),
                            infos.ok() ? Result<remote::JobInfo>((*infos)[i]) : infos.status());
    }
    int code = 0;
    std::vector<std::vector<std::string>> rows = {{"RUN_ID", "CLUSTER", "JOB", "STATE", "SUBMITTED"}};
    for (const RunRecord& r : runs) {
        remote::RunRecord shown = to_remote_record(r);
        if (const auto answer = answers.find({shown.cluster, shown.job_id});
            is_live(r.state) && answer != answers.end()) {
            const Result<remote::JobInfo>& info = answer->second;
            if (info.ok()) {
                // The reason says why a chained step waits or ended (DependencyNeverSatisfied).
                shown.last_state = info->state + info->reason_suffix();
                store_job_state(**store, r.id, *info, err);
            } else {
                err << "slipway: " << shown.run_id << ": " << info.error() << "\n";
                shown.last_state = "?";
                code = 1;
            }
        }
        if (!is_live(r.state) && !r.slurm_state.isEmpty() && r.state_detail.endsWith(QLatin1Char(')'))) {
            // An ended job shows the reason stored with its last state (a chained step:
            // DependencyNeverSatisfied).
            const qsizetype open = r.state_detail.lastIndexOf(QStringLiteral(" ("));
            if (open >= 0 && r.state_detail.mid(open) != QStringLiteral(" (None)"))
                shown.last_state += r.state_detail.mid(open).toStdString();
        }
        rows.push_back({shown.run_id, shown.cluster, shown.job_id, shown.last_state, shown.submitted});
    }
    print_table(out, rows);
    return code;
}

int run_cancel(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<std::unique_ptr<RunHistory>> store = open_store();
    if (!store.ok()) return fail(err, store.error());
    Result<RunRecord> r = find_stored(**store, c.run_id);
    if (!r.ok()) return fail(err, r.error());
    if (r->job_id.isEmpty()) return fail(err, "run " + c.run_id + " has no Slurm job");
    Result<Connected> connected = connect_for(c, r->cluster.toStdString());
    if (!connected.ok()) return fail(err, connected.error());
    remote::SlurmClient slurm(*connected->session);
    if (Status s = slurm.cancel(r->job_id.toStdString()); !s.ok()) return fail(err, s.message());
    out << "cancelled job " << r->job_id.toStdString() << " (run " << c.run_id << ")\n";
    return 0;
}

int run_follow(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<std::unique_ptr<RunHistory>> store = open_store();
    if (!store.ok()) return fail(err, store.error());
    Result<RunRecord> stored = find_stored(**store, c.run_id);
    if (!stored.ok()) return fail(err, stored.error());
    if (stored->job_id.isEmpty()) return fail(err, "run " + c.run_id + " has no Slurm job");
    const remote::RunRecord record = to_remote_record(*stored);
    Result<Connected> connected = connect_for(c, record.cluster);
    if (!connected.ok()) return fail(err, connected.error());
    remote::SlurmClient slurm(*connected->session);

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
        if (e.key != mllog_key::kTrainLoss && e.key != mllog_key::kEvalAccuracy) return;
        out << e.key << " " << format_python_json(e.value);
        if (const auto step = e.step_num()) out << " step " << static_cast<long long>(*step);
        if (const auto samples = e.samples_count()) out << " samples " << static_cast<long long>(*samples);
        out << std::endl;
    };
    callbacks.on_state = [&](const remote::JobInfo& job) {
        store_job_state(**store, stored->id, job, err);
        out << "state " << job.state << job.reason_suffix() << std::endl;
    };
    callbacks.on_notice = [&](const std::string& notice) { err << "slipway: " << notice << std::endl; };
    callbacks.on_nodes = [&](const std::vector<remote::NodeState>& nodes) {
        out << "node_states " << remote::describe_node_states(nodes, last_node_steps) << std::endl;
    };
    Result<remote::RunFollowOutcome> outcome =
        remote::follow_run(*connected->session, slurm, record, options, callbacks);
    if (!outcome.ok()) return fail(err, outcome.error());

    store_job_state(**store, stored->id, outcome->job, err);
    out << "final_state=" << outcome->job.state;
    if (outcome->job.state == "UNKNOWN" && !outcome->run_stop_status.empty())
        out << " (run_stop status " << outcome->run_stop_status << ")";
    out << "\n";
    return outcome->success() ? 0 : 1;
}

int run_fetch(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<std::unique_ptr<RunHistory>> store = open_store();
    if (!store.ok()) return fail(err, store.error());
    Result<RunRecord> stored = find_stored(**store, c.run_id);
    if (!stored.ok()) return fail(err, stored.error());
    if (stored->job_id.isEmpty()) return fail(err, "run " + c.run_id + " was not submitted to a cluster");
    const remote::RunRecord record = to_remote_record(*stored);
    Result<Connected> connected = connect_for(c, record.cluster);
    if (!connected.ok()) return fail(err, connected.error());
    remote::Session& session = *connected->session;
    Result<std::vector<std::string>> listing =
        remote::list_run_outputs(session, record.remote_dir, c.checkpoints);
    if (!listing.ok()) return fail(err, listing.error());

    const fs::path dest = c.fetch_to.empty() ? fs::path(record.run_id) : fs::path(c.fetch_to);
    size_t files = 0;
    uintmax_t bytes = 0;
    for (const std::string& rel : *listing) {
        const fs::path p(rel);
        bool safe = !rel.empty() && !p.is_absolute();  // the names come from the server
        for (const auto& part : p)
            safe = safe && part != "..";
        if (!safe) continue;
        const fs::path local = dest / p;
        std::error_code ec;
        fs::create_directories(local.parent_path(), ec);
        if (ec) return fail(err, local.parent_path().string() + ": " + ec.message());
        if (Status s = session.download_file(record.remote_dir + "/" + rel, local.string()); !s.ok())
            return fail(err, s.message());
        ++files;
        bytes += fs::file_size(local, ec);
    }
    out << "fetched " << files << " files (" << bytes << " bytes) of run " << record.run_id << " to "
        << dest.string() << "\n";
    return files > 0 ? 0 : 1;
}

}  // namespace slipway::app
