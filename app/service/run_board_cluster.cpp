// RunBoard, the cluster half: submitting to a profile, Slurm state polls (one question per cluster for
// every live job), following job logs and hand-opened cluster logs over the cluster links, scancel, and
// what happens when a connection drops or a profile is edited or removed.
#include <filesystem>

#include "remote/deploy/run_record.h"
#include "service/lost_submission.h"
#include "service/run_board.h"

namespace slipway::app {

Result<int> RunBoard::submit_cluster(const RunConfig& config, const std::string& profile) {
    if (seams_.clusters == nullptr || !seams_.clusters->has_profile(profile))
        return Result<int>::Error("no cluster profile named " + profile);
    // The session's worker writes the run's row (the run service): submitting now, then its job or its
    // failure.
    const std::string run_id = remote::make_run_id(config.name);
    TrackedRun& run =
        registry_.add(RunKind::kClusterJob, config.name + " @ " + profile, RunState::kSubmitting);
    const int key = run.key;
    run.profile = profile;
    run.live = true;
    if (config.eval.target) {
        run.metrics.target = config.eval.target;
        run.metrics.target_higher_is_better = config.eval_higher_is_better();
    }
    run.run_id = run_id;
    run.submit_request = seams_.clusters->submit(profile, config, run_id);
    if (run.submit_request == 0) {  // the profile went meanwhile: nothing was sent, nothing will answer
        registry_.remove(key);
        return Result<int>::Error("no cluster profile named " + profile);
    }
    events_.added(key);
    events_.notice({Notice::Kind::kSubmitting, {config.name, profile}});
    return key;
}

TrackedRun* RunBoard::submitting(const std::string& profile, int request) {
    for (auto& [key, r] : registry_) {
        if (r.source == RunKind::kClusterJob && r.submit_request == request && r.profile == profile)
            return &r;
    }
    return nullptr;
}

void RunBoard::submit_progress(const std::string& profile, int request, const std::string& line) {
    TrackedRun* run = submitting(profile, request);
    if (run == nullptr || run->state != RunState::kSubmitting) return;
    run->state_detail = line;
    events_.changed(run->key);
}

void RunBoard::submitted(const std::string& profile, int request, const SubmissionAnswer& answer) {
    TrackedRun* run = submitting(profile, request);
    if (run == nullptr) return;  // released meanwhile
    const int key = run->key;
    run->submit_request = 0;
    if (!answer.store_problem.empty()) events_.store_problem(answer.store_problem);
    // The worker wrote the row's state already: the board's copy follows it, then links to the row.
    if (!answer.ok) {
        set_state(*run, RunState::kFailed, "submit: " + answer.error);
        if (TrackedRun* r = registry_.find(key)) r->store_id = answer.store_id;
        events_.store_changed();
        alert(key, RunAlertKind::kFailed, {Notice::Kind::kSubmitFailed, {answer.error}});
        return;
    }
    run->job_id = answer.job_id;
    run->log_path = answer.log_path;
    run->cancellable = true;
    set_state(*run, RunState::kPending);
    run = registry_.find(key);  // a listener may have released it
    if (run == nullptr) return;
    run->store_id = answer.store_id;
    events_.store_changed();
    events_.notice({Notice::Kind::kSubmitted, {answer.job_id, profile, answer.remote_dir}});
    if ((run = registry_.find(key)) == nullptr) return;
    run->follow_id = seams_.clusters->follow(profile, answer.log_path, 0);
    ask_state(*run);
}

bool RunBoard::has_live_job(const TrackedRun& run) {
    return run.source == RunKind::kClusterJob && !run.job_id.empty() && !is_terminal(run.state);
}

void RunBoard::ask_state(const TrackedRun& run) {
    if (!has_live_job(run) || seams_.clusters == nullptr || !seams_.clusters->has_profile(run.profile))
        return;
    if (jobs_.ask(run.profile, run.job_id)) seams_.clusters->ask(run.profile, {run.job_id});
}

void RunBoard::poll_jobs() {
    if (seams_.clusters == nullptr) return;
    // The shown runs' live jobs, per cluster.
    std::map<std::string, std::vector<std::string>> followed;
    for (const auto& [key, run] : registry_) {
        if (has_live_job(run) && seams_.clusters->has_profile(run.profile))
            followed[run.profile].push_back(run.job_id);
    }
    // The store's other live jobs join the question of a cluster whose connection is up already.
    std::optional<std::vector<StoredRun>> rows;
    if (seams_.store != nullptr) {
        if (Result<std::vector<StoredRun>> all = seams_.store->cluster_runs(); all.ok())
            rows = std::move(*all);
    }
    // A row whose submission's answer is on its way is the board's already.
    const auto is_followed = [this](const StoredRun& row) {
        return registry_.run_for_store(row.id) != 0 || registry_.submitting_run_id(row.run_id);
    };
    std::map<std::string, bool> clusters;  // profile -> its connection is up
    for (const auto& [profile, jobs] : followed)
        clusters[profile] = false;
    for (const auto& [profile, link] : links_) {
        if (link.up == 1) clusters[profile] = true;
    }
    for (const auto& [profile, up] : clusters) {
        const std::vector<std::string> jobs =
            jobs_.to_ask(profile, followed[profile], up && rows ? &*rows : nullptr, is_followed);
        if (!jobs.empty()) seams_.clusters->ask(profile, jobs);
    }
}

void RunBoard::job_state(const std::string& profile, bool ok, const std::string& job, const std::string& word,
                         const std::string& detail) {
    const JobWatch::Clock::time_point now = JobWatch::Clock::now();
    std::optional<remote::JobInfo> answer;
    if (ok) {
        answer.emplace();
        answer->job_id = job;
        answer->state = word;
        answer->node_list = detail;  // node list and reason, as the session wrote them
    }
    if (jobs_.answered(seams_.store, profile, job, answer, now,
                       [this](int64_t row) { return registry_.run_for_store(row) != 0; }))
        events_.store_changed();
    for (const JobAnswerForRun& a :
         registry_.job_answered(profile, job, answer, ok ? std::string() : detail, now)) {
        if (a.failed_anew) events_.notice({Notice::Kind::kJobQuestion, {job, detail}});
        if (a.requeued) events_.notice({Notice::Kind::kJobRequeued, {job, word}});
        report(a.key, a.change);
        const int key = a.key;
        if (a.settling) {
            // Asked again once an ended-looking word could count.
            seams_.timer->later(static_cast<int>(options_.end_rule.settle.count()), [this, key] {
                if (const TrackedRun* r = registry_.find(key); r != nullptr && !is_terminal(r->state))
                    ask_state(*r);
            });
        }
        const TrackedRun* run = registry_.find(key);  // a listener may have released it
        if (!a.ended || run == nullptr) continue;
        if (run->follow_id != 0)
            seams_.clusters->finish_follow(run->profile,
                                           run->follow_id);  // the log's tail is read to its end
        if (a.end_alert) {
            alert(key, is_success(a.end) ? RunAlertKind::kFinished : RunAlertKind::kFailed,
                  {Notice::Kind::kJobEnded, {job, word}});
        }
    }
}

void RunBoard::job_nodes(const std::string& profile, const std::string& job,
                         const std::vector<remote::NodeState>& nodes) {
    std::vector<int> changed;
    for (auto& [key, run] : registry_) {
        if (run.source != RunKind::kClusterJob || run.profile != profile || run.job_id != job) continue;
        if ((run.state != RunState::kRunning && run.state != RunState::kStalled) || run.node_states == nodes)
            continue;
        run.node_states = nodes;
        changed.push_back(key);
    }
    for (const int key : changed)  // told after the loop: a listener may release a run
        events_.changed(key);
}

void RunBoard::cancelled(const std::string& profile, int request, bool ok, const std::string& answer) {
    const auto link = links_.find(profile);
    if (link == links_.end()) return;
    const auto it = link->second.cancel_to_key.find(request);
    if (it == link->second.cancel_to_key.end()) return;
    const int key = it->second;
    link->second.cancel_to_key.erase(it);
    TrackedRun* run = registry_.find(key);
    if (run == nullptr) return;
    if (!ok) {
        events_.notice({Notice::Kind::kScancelFailed, {run->job_id, answer}});
        return;
    }
    run->watch.mark_ended();  // the engine's run_stop "aborted" is the cancel, not a failure
    ask_state(*run);          // Slurm's word (CANCELLED) ends it
}

void RunBoard::cluster_batch(const std::string& profile, const LogBatch& batch) {
    if (batch.follow_id == 0) return;
    for (auto& [key, run] : registry_) {
        if ((run.source == RunKind::kClusterJob || run.source == RunKind::kClusterLog) &&
            run.profile == profile && run.follow_id == batch.follow_id) {
            apply(run, batch);
            return;
        }
    }
}

void RunBoard::connection(const std::string& profile, bool up, const std::string& why) {
    ClusterLink& link = links_[profile];
    if (link.up == int(up)) return;  // one notice per change, however many runs and polls
    link.up = int(up);
    events_.connection(profile, up, why);
}

void RunBoard::cluster_gone(const std::string& profile, bool replaced) {
    links_.erase(profile);  // its connection state and cancels went with the session
    // A submission's answer died with the session: the store says whether sbatch got the job (refollow
    // below for a replaced profile; a removed one cannot be followed any more).
    for (const RunChange& changed : registry_.cluster_gone(profile, !replaced))
        report(changed.key, changed.change);
    jobs_.forget_cluster(profile);  // answers that will not come
    // The new session exists only once the old one is gone: follow again from where each run stopped.
    if (replaced) seams_.timer->later(0, [this, profile] { refollow(profile); });
}

void RunBoard::refollow(const std::string& profile) {
    if (seams_.clusters == nullptr || !seams_.clusters->has_profile(profile)) return;
    std::vector<int> to_follow;
    for (auto& [key, run] : registry_) {
        if (run.profile != profile) continue;
        if (run.source == RunKind::kClusterJob && run.submit_request != 0)
            to_follow.push_back(key);
        else if (run.follow_id == 0 && run.live && !run.log_path.empty())
            to_follow.push_back(key);
    }
    // Told one run at a time, each looked up again: a listener may release a run.
    for (const int key : to_follow) {
        TrackedRun* run = registry_.find(key);
        if (run != nullptr && run->source == RunKind::kClusterJob && run->submit_request != 0) {
            adopt_lost_submission(*run);
            run = registry_.find(key);
        }
        if (run == nullptr || run->follow_id != 0 || !run->live || run->log_path.empty()) continue;
        if (run->source == RunKind::kClusterJob && is_terminal(run->state)) continue;
        if (run->source != RunKind::kClusterJob && run->source != RunKind::kClusterLog) continue;
        run->follow_id = seams_.clusters->follow(profile, run->log_path, run->log_offset);
        ask_state(*run);
    }
}

void RunBoard::adopt_lost_submission(TrackedRun& run) {
    // The old session's worker finished the submission (its destructor waited) and recorded the outcome in
    // the store, but its answer went with it.
    run.submit_request = 0;
    const LostSubmission fate =
        lost_submission(seams_.store != nullptr ? seams_.store->find(run.run_id)
                                                : Result<StoredRun>(Status::Error("no run history")));
    if (!fate.job_id.empty()) {
        run.job_id = fate.job_id;
        run.log_path = fate.log_path;
    }
    run.cancellable = fate.cancellable;
    // Linked to the row after taking its word over, so nothing is written over it; before, when the row is
    // to be told.
    const int key = run.key;
    if (fate.write_to_row) run.store_id = fate.row;
    set_state(run, fate.state, fate.detail);
    if (TrackedRun* r = registry_.find(key)) r->store_id = fate.row;
}

Result<int> RunBoard::open_cluster_log(const std::string& profile, const std::string& path) {
    if (seams_.clusters == nullptr || !seams_.clusters->has_profile(profile))
        return Result<int>::Error("no cluster profile named " + profile);
    const std::string name = std::filesystem::path(path).filename().string() + " @ " + profile;
    // Stored like a run (one per remote file): opened again, it shows its stored points and reads on from the
    // stored offset, so nothing is read or stored twice.
    int64_t store_id = 0;
    uint64_t offset = 0;
    RunMetrics stored;
    if (seams_.store != nullptr) {
        RunStore& store = *seams_.store;
        if (const Result<int64_t> before = store.find_log_run(profile, path); before.ok()) {
            if (const int shown = registry_.run_for_store(*before)) release(shown);
        }
        if (const Result<int64_t> id = store.record_remote_log(profile, path, name); id.ok()) {
            const Result<StoredRun> record = store.row(*id);
            Result<RunMetrics> metrics = store.metrics(*id);
            if (record.ok() && metrics.ok()) {
                store_id = *id;
                offset = record->log_offset;
                stored = std::move(*metrics);
            }
        }
    }
    TrackedRun& run = registry_.add(RunKind::kClusterLog, name, RunState::kFollowing);
    run.profile = profile;
    run.log_path = path;
    run.log_offset = offset;
    run.store_id = store_id;
    run.live = true;
    run.metrics = std::move(stored);
    run.follow_id = seams_.clusters->follow(profile, path, offset);
    const int key = run.key;
    events_.added(key);
    events_.store_changed();
    return key;
}

}  // namespace slipway::app
