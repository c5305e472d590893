// SlurmExecutor and SlurmJob: the run service's Slurm side over remote/deploy, recording in a RunStore.
#include "service/slurm_executor.h"

#include <filesystem>
#include <system_error>

#include "remote/deploy/run_record.h"

namespace slipway::app {

namespace fs = std::filesystem;

StoredRun begin_submission(RunStore& store, const RunConfig& config, const std::string& cluster,
                           std::string run_id, std::string& problem) {
    StoredRun run;
    run.run_id = run_id.empty() ? remote::make_run_id(config.name) : std::move(run_id);
    run.name = config.name;
    run.cluster = cluster;
    run.state = RunState::kSubmitting;
    run.config_json = to_json(config).dump(2);
    run.created_ms = now_ms();
    if (const Result<int64_t> id = store.add(run); id.ok()) {
        run.id = *id;
    } else {
        problem = id.error();
    }
    return run;
}

void fail_submission(RunStore& store, StoredRun& run, const std::string& why) {
    run.state = RunState::kFailed;
    run.state_detail = "submit: " + why;
    // The submission's own failure is told to the caller; a store that cannot say it too loses nothing more.
    (void)store.set_state(run.id, run.state, run.state_detail, {}, StateWrite::kAlways);
}

Status store_job_state(RunStore& store, int64_t row, const remote::JobInfo& job,
                       const std::string& run_stop_status) {
    std::string detail = job.node_list + job.reason_suffix();
    const RunState state = from_slurm(job.state, run_stop_status);
    if (state != from_slurm(job.state)) detail = fill_text(kSlurmForgotDetail, {run_stop_status});
    return store.set_state(row, state, detail, job.state, StateWrite::kIfNotEnded);
}

SlurmExecutor::SlurmExecutor(remote::Session& session, remote::ClusterProfile profile, RunStore& store)
    : session_(session), profile_(std::move(profile)), store_(store), slurm_(session) {}

Result<Submission> SlurmExecutor::submit(const SubmitRequest& request) {
    std::string problem;
    StoredRun row = begin_submission(store_, request.config, profile_.name, request.run_id, problem);
    return submit(request, std::move(row), std::move(problem));
}

Result<Submission> SlurmExecutor::submit(const SubmitRequest& request, StoredRun row,
                                         std::string store_problem) {
    remote::DeployRequest deploy;
    deploy.config = request.config;
    deploy.input_root = request.input_root;
    deploy.profile = profile_;
    deploy.engine_binary = request.engine_binary;
    deploy.engine_bundle = request.engine_bundle;
    deploy.progress = request.progress;
    deploy.run_id = row.run_id;
    const StoreRunSink sink(store_);
    Result<remote::SubmittedRun> sent = remote::submit_run(session_, slurm_, deploy, sink);
    if (!sent.ok()) {
        fail_submission(store_, row, sent.error());
        return sent.status();
    }
    Submission out;
    const remote::RunRecord& record = sent->record;
    const std::string run_json = to_json(sent->deployment.remote_config).dump(2);
    if (!sink.problem().empty()) {
        // The job is queued either way; a second try (a lock held a moment too long is the usual cause).
        if (const Status again = store_.record_job(record, run_json); !again.ok())
            store_problem = again.message();
    }
    if (row.id == 0) {  // the row could not be added before: sbatch's answer may have made it
        if (const Result<StoredRun> made = store_.find(row.run_id); made.ok()) row.id = made->id;
    }
    out.store_problem = std::move(store_problem);
    row.job_id = record.job_id;
    row.slurm_cluster = record.slurm_cluster;
    row.remote_dir = record.remote_dir;
    row.log_path = record.slurm_log();
    row.config_json = run_json;
    row.state = RunState::kPending;
    out.run = std::move(row);
    out.deployment = std::move(sent->deployment);
    out.test_only = std::move(sent->test_only);
    return out;
}

std::vector<JobAnswer> SlurmExecutor::ask(const std::vector<std::string>& job_ids, bool node_states) {
    std::vector<JobAnswer> answers(job_ids.size());
    for (size_t i = 0; i < job_ids.size(); ++i)
        answers[i].job_id = job_ids[i];
    if (job_ids.empty()) return answers;
    Result<std::vector<remote::JobInfo>> infos = slurm_.jobs(job_ids);
    if (!infos.ok() && infos.code() == StatusCode::kUnavailable) {  // a dropped connection: once more
        const Status reconnected = session_.reconnect();
        infos = reconnected.ok() ? slurm_.jobs(job_ids) : Result<std::vector<remote::JobInfo>>(reconnected);
    }
    for (size_t i = 0; i < answers.size(); ++i) {
        JobAnswer& answer = answers[i];
        if (!infos.ok()) {
            answer.info = infos.status();
            continue;
        }
        const remote::JobInfo& job = (*infos)[i];  // jobs() answers in the order asked
        answer.info = job;
        if (node_states && job.state == "RUNNING" && remote::spans_several_nodes(job.node_list)) {
            if (Result<std::vector<remote::NodeState>> nodes = remote::job_node_states(slurm_, job.node_list);
                nodes.ok())
                answer.nodes = std::move(*nodes);
        }
    }
    return answers;
}

Result<SlurmJob> SlurmExecutor::job(const StoredRun& run) {
    if (run.job_id.empty())
        return Status::Error(
            "run " + (run.run_id.empty() ? std::to_string(run.id) : run.run_id) +
            " has no Slurm job (it was not submitted to a cluster, or its submission failed)");
    return SlurmJob(*this, run);
}

Result<remote::JobInfo> SlurmJob::state() {
    std::vector<JobAnswer> answers = executor_.ask({run_.job_id});
    Result<remote::JobInfo>& info = answers.front().info;
    if (info.ok()) {
        if (const Status s = store_job_state(executor_.store(), run_.id, *info); !s.ok()) return s;
    }
    return std::move(info);
}

Status SlurmJob::cancel() {
    return executor_.slurm().cancel(run_.job_id);
}

Result<remote::RunFollowOutcome> SlurmJob::follow(const remote::RunFollowOptions& options,
                                                  remote::RunFollowCallbacks callbacks) {
    RunStore& store = executor_.store();
    const int64_t row = run_.id;
    auto on_state = std::move(callbacks.on_state);
    callbacks.on_state = [&, on_state](const remote::JobInfo& job) {
        // Live states as they come; an ended-looking one only as the outcome, once follow_run's end rule
        // counted it (a job being requeued looks ended for a moment, and an ended row is never reopened).
        if (is_live(from_slurm(job.state))) {
            if (const Status s = store_job_state(store, row, job); !s.ok() && callbacks.on_notice)
                callbacks.on_notice(s.message());
        }
        if (on_state) on_state(job);
    };
    Result<remote::RunFollowOutcome> outcome =
        remote::follow_run(executor_.session(), executor_.slurm(), run_.remote_record(), options, callbacks);
    if (outcome.ok()) {
        if (const Status s = store_job_state(store, row, outcome->job, outcome->run_stop_status);
            !s.ok() && callbacks.on_notice)
            callbacks.on_notice(s.message());
    }
    return outcome;
}

Result<FetchedRun> SlurmJob::fetch(const std::string& destination, bool checkpoints) {
    const remote::RunRecord record = run_.remote_record();
    remote::Session& session = executor_.session();
    Result<std::vector<std::string>> listing =
        remote::list_run_outputs(session, record.remote_dir, checkpoints);
    if (!listing.ok()) return listing.status();
    FetchedRun fetched;
    const fs::path dest = destination.empty() ? fs::path(record.run_id) : fs::path(destination);
    fetched.destination = dest.string();
    for (const std::string& rel : *listing) {
        const fs::path p(rel);
        bool safe = !rel.empty() && !p.is_absolute();  // the names come from the server
        for (const auto& part : p)
            safe = safe && part != "..";
        if (!safe) continue;
        const fs::path local = dest / p;
        std::error_code ec;
        fs::create_directories(local.parent_path(), ec);
        if (ec) return Status::Error(local.parent_path().string() + ": " + ec.message());
        if (Status s = session.download_file(record.remote_dir + "/" + rel, local.string()); !s.ok())
            return s;
        ++fetched.files;
        fetched.bytes += fs::file_size(local, ec);
    }
    return fetched;
}

}  // namespace slipway::app
