// `slipway submit | status | cancel | follow | fetch`: a run's life on a cluster, from the local run records
// ($XDG_DATA_HOME/slipway/runs) so every command works from a new process.
#include <chrono>
#include <filesystem>
#include <map>

#include "cli/remote_connect.h"
#include "contract/hf_flags.h"
#include "contract/run_config.h"
#include "remote/deploy/deploy.h"
#include "remote/deploy/run_follow.h"
#include "remote/slurm/slurm_client.h"

namespace slipway::app {
namespace {

namespace fs = std::filesystem;

int fail(std::ostream& err, const std::string& message, int code = 1) {
    err << "slipway: " << message << "\n";
    return code;
}

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

// A job query that survives one dropped connection.
Result<remote::JobInfo> query_job(remote::Session& session, remote::SlurmClient& slurm,
                                  const std::string& job_id) {
    Result<remote::JobInfo> info = slurm.job(job_id);
    if (info.ok() || info.code() != StatusCode::kUnavailable) return info;
    if (Status s = session.reconnect(); !s.ok()) return s;
    return slurm.job(job_id);
}

}  // namespace

int run_submit(RemoteCommands& c, std::ostream& out, std::ostream& err) {
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
    Result<Connected> connected = connect_for(c, c.cluster);
    if (!connected.ok()) return fail(err, connected.error());
    remote::DeployRequest request;
    request.config = config;
    request.profile = connected->profile;
    request.input_root = input_root_for(config, c.inputs);
    if (connected->profile.container == remote::ContainerMode::kNone)
        request.engine_binary = c.engine.empty() ? engine_next_to_slipway() : c.engine;
    remote::SlurmClient slurm(*connected->session);
    Result<remote::SubmittedRun> run =
        remote::submit_run(*connected->session, slurm, request, remote::RunRecordStore());
    if (!run.ok()) return fail(err, run.error());
    out << "remote folder: " << run->deployment.remote_dir << "\n";
    out << "pre-flight: " << run->test_only << "\n";
    out << "run_id=" << run->record.run_id << " job_id=" << run->record.job_id << "\n";
    return 0;
}

int run_status(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    const remote::RunRecordStore records;
    std::vector<remote::RunRecord> runs;
    if (c.run_id.empty()) {
        Result<std::vector<remote::RunRecord>> all = records.list();
        if (!all.ok()) return fail(err, all.error());
        runs = *all;
    } else {
        Result<remote::RunRecord> one = records.load(c.run_id);
        if (!one.ok()) return fail(err, one.error());
        runs.push_back(*one);
    }
    if (runs.empty()) {
        out << "no runs in " << records.dir() << "\n";
        return 0;
    }
    int code = 0;
    std::map<std::string, Result<Connected>> sessions;  // one connection per cluster
    std::vector<std::vector<std::string>> rows = {{"RUN_ID", "CLUSTER", "JOB", "STATE", "SUBMITTED"}};
    for (remote::RunRecord& r : runs) {
        auto it = sessions.find(r.cluster);
        if (it == sessions.end()) it = sessions.emplace(r.cluster, connect_for(c, r.cluster)).first;
        std::string state = "?";
        if (!it->second.ok()) {
            err << "slipway: " << r.run_id << ": " << it->second.error() << "\n";
            code = 1;
        } else {
            remote::SlurmClient slurm(*it->second->session);
            Result<remote::JobInfo> info = query_job(*it->second->session, slurm, r.job_id);
            if (info.ok()) {
                state = info->state;
                r.last_state = state;
                if (Status s = records.save(r); !s.ok()) err << "slipway: " << s.message() << "\n";
            } else {
                err << "slipway: " << r.run_id << ": " << info.error() << "\n";
                code = 1;
            }
        }
        rows.push_back({r.run_id, r.cluster, r.job_id, state, r.submitted});
    }
    print_table(out, rows);
    return code;
}

int run_cancel(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<remote::RunRecord> r = remote::RunRecordStore().load(c.run_id);
    if (!r.ok()) return fail(err, r.error());
    Result<Connected> connected = connect_for(c, r->cluster);
    if (!connected.ok()) return fail(err, connected.error());
    remote::SlurmClient slurm(*connected->session);
    if (Status s = slurm.cancel(r->job_id); !s.ok()) return fail(err, s.message());
    out << "cancelled job " << r->job_id << " (run " << r->run_id << ")\n";
    return 0;
}

int run_follow(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    const remote::RunRecordStore records;
    Result<remote::RunRecord> record = records.load(c.run_id);
    if (!record.ok()) return fail(err, record.error());
    Result<Connected> connected = connect_for(c, record->cluster);
    if (!connected.ok()) return fail(err, connected.error());
    remote::SlurmClient slurm(*connected->session);

    remote::RunFollowOptions options;
    options.interval = std::chrono::milliseconds(static_cast<long long>(c.interval_s * 1000));
    options.outage_limit = std::chrono::seconds(c.outage_limit_s);
    remote::RunFollowCallbacks callbacks;
    callbacks.on_line = [&](MllogStreamItem&& item) {
        if (c.raw) out << item.text << "\n";
        if (c.raw || item.kind != MllogLineKind::kEvent) return;
        const MllogEvent& e = item.event;
        if (e.key != "train_loss" && e.key != "eval_accuracy") return;
        out << e.key << " " << format_python_json(e.value);
        if (const auto step = e.step_num()) out << " step " << static_cast<long long>(*step);
        if (const auto samples = e.samples_count()) out << " samples " << static_cast<long long>(*samples);
        out << std::endl;
    };
    callbacks.on_state = [&](const remote::JobInfo& job) {
        out << "state " << job.state
            << (job.reason.empty() || job.reason == "None" ? "" : " (" + job.reason + ")") << std::endl;
    };
    callbacks.on_notice = [&](const std::string& notice) { err << "slipway: " << notice << std::endl; };
    Result<remote::RunFollowOutcome> outcome =
        remote::follow_run(*connected->session, slurm, *record, options, callbacks);
    if (!outcome.ok()) return fail(err, outcome.error());

    remote::RunRecord updated = *record;
    updated.last_state = outcome->job.state;
    if (Status s = records.save(updated); !s.ok()) err << "slipway: " << s.message() << "\n";
    out << "final_state=" << outcome->job.state;
    if (outcome->job.state == "UNKNOWN" && !outcome->run_stop_status.empty())
        out << " (run_stop status " << outcome->run_stop_status << ")";
    out << "\n";
    return outcome->success() ? 0 : 1;
}

int run_fetch(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<remote::RunRecord> record = remote::RunRecordStore().load(c.run_id);
    if (!record.ok()) return fail(err, record.error());
    Result<Connected> connected = connect_for(c, record->cluster);
    if (!connected.ok()) return fail(err, connected.error());
    remote::Session& session = *connected->session;
    Result<std::vector<std::string>> listing =
        remote::list_run_outputs(session, record->remote_dir, c.checkpoints);
    if (!listing.ok()) return fail(err, listing.error());

    const fs::path dest = c.fetch_to.empty() ? fs::path(record->run_id) : fs::path(c.fetch_to);
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
        if (Status s = session.download_file(record->remote_dir + "/" + rel, local.string()); !s.ok())
            return fail(err, s.message());
        ++files;
        bytes += fs::file_size(local, ec);
    }
    out << "fetched " << files << " files (" << bytes << " bytes) of run " << record->run_id << " to "
        << dest.string() << "\n";
    return files > 0 ? 0 : 1;
}

}  // namespace slipway::app
