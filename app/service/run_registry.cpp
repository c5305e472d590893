// RunRegistry: the runs by key, and the state rule (see run_registry.h).
#include "service/run_registry.h"

namespace slipway::app {

bool follows_local_file(RunKind source) {
    return source == RunKind::kLocal || source == RunKind::kLogFile;
}

void RunRegistry::set_stall_policy(double factor, int64_t min_ms) {
    options_.stall_factor = factor;
    options_.stall_min_ms = min_ms;
}

TrackedRun& RunRegistry::add(RunKind source, std::string name, RunState state) {
    const int key = next_key_++;
    TrackedRun& run = runs_[key];
    run.key = key;
    run.source = source;
    run.name = std::move(name);
    run.state = state;
    restart_watch(run);
    run.job_watch = JobWatch(options_.end_rule);
    return run;
}

void RunRegistry::restart_watch(TrackedRun& run) const {
    run.watch = RunWatch(options_.stall_factor, options_.stall_min_ms);
}

bool RunRegistry::remove(int key) {
    return runs_.erase(key) > 0;
}

TrackedRun* RunRegistry::find(int key) {
    const auto it = runs_.find(key);
    return it == runs_.end() ? nullptr : &it->second;
}

const TrackedRun* RunRegistry::find(int key) const {
    const auto it = runs_.find(key);
    return it == runs_.end() ? nullptr : &it->second;
}

TrackedRun* RunRegistry::find_by_follow(RunKind source, int follow_id) {
    if (follow_id == 0) return nullptr;
    const bool file_follow = follows_local_file(source);
    for (auto& [key, run] : runs_) {
        if (run.follow_id == follow_id && follows_local_file(run.source) == file_follow) return &run;
    }
    return nullptr;
}

int RunRegistry::run_for_store(int64_t store_id) const {
    for (const auto& [key, run] : runs_) {
        if (store_id != 0 && run.store_id == store_id) return key;
    }
    return 0;
}

bool RunRegistry::submitting_run_id(const std::string& run_id) const {
    for (const auto& [key, run] : runs_) {
        if (!run_id.empty() && run.submit_request != 0 && run.run_id == run_id) return true;
    }
    return false;
}

std::vector<int> RunRegistry::keys() const {
    std::vector<int> keys;
    keys.reserve(runs_.size());
    for (const auto& [key, run] : runs_)
        keys.push_back(key);
    return keys;
}

StateChange RunRegistry::set_state(TrackedRun& run, RunState state, const std::string& detail,
                                   const std::string& slurm_state, StateSource source) {
    StateChange out;
    if (source == StateSource::kPoller) {
        if (is_terminal(run.state)) return out;
        if (run.state == RunState::kStalled && state == RunState::kRunning) state = RunState::kStalled;
    }
    out.changed = run.state != state || run.state_detail != detail ||
                  (!slurm_state.empty() && run.slurm_state != slurm_state);
    if (!out.changed) return out;
    run.state = state;
    run.state_detail = detail;
    if (!slurm_state.empty()) run.slurm_state = slurm_state;
    if (state != RunState::kRunning && state != RunState::kStalled) run.node_states.clear();
    if (is_terminal(state)) run.cancellable = false;
    if (store_ != nullptr && run.store_id != 0 && source != StateSource::kService && !run.state_from_store) {
        const Status s =
            store_->set_state(run.store_id, state, detail, slurm_state,
                              source == StateSource::kPoller ? StateWrite::kIfNotEnded : StateWrite::kAlways);
        out.stored = true;
        if (!s.ok()) out.store_problem = s.message();
    }
    return out;
}

FoldedEvents RunRegistry::fold(TrackedRun& run, const std::vector<MllogEvent>& events, bool reset,
                               int64_t now) const {
    if (reset) {
        RunMetrics fresh;
        fresh.target = run.metrics.target;
        fresh.target_higher_is_better = run.metrics.target_higher_is_better;
        run.metrics = std::move(fresh);
        restart_watch(run);
    }
    FoldedEvents out;
    for (Metric m : kAllMetrics)
        out.first_new[static_cast<size_t>(m)] = run.metrics.points(m).size();
    const std::optional<double> step_before = run.metrics.last_step;
    out.stopped_before = run.metrics.run_stop_ms.has_value();
    for (const MllogEvent& event : events) {
        if (const std::optional<Metric> m = run.metrics.add(event); m && run.store_id != 0)
            out.rows.emplace_back(*m, run.metrics.points(*m).back());
        if (run.live) {
            for (RunAlert& a : run.watch.on_event(event, run.metrics, now))
                out.alerts.push_back(std::move(a));
        }
    }
    out.new_steps = run.metrics.last_step != step_before;
    return out;
}

LogVerdict RunRegistry::log_verdict(const TrackedRun& run, const FoldedEvents& folded, bool read_to_end) {
    LogReading reading;
    reading.followed_as = run.source;
    reading.state = run.state;
    reading.live = run.live;
    reading.state_from_store = run.state_from_store;
    reading.new_steps = folded.new_steps;
    reading.stopped_before = folded.stopped_before;
    reading.stopped = run.metrics.run_stop_ms.has_value();
    reading.stop_status = run.metrics.status.value_or(std::string());
    reading.read_to_end = read_to_end;
    return read_log_state(reading);
}

std::vector<OwnersWord> RunRegistry::read_owners_rows() {
    std::vector<OwnersWord> out;
    if (store_ == nullptr) return out;
    for (auto& [key, run] : runs_) {
        if (!run.state_from_store || run.store_id == 0) continue;
        const Result<StoredRun> row = store_->row(run.store_id);
        if (!row.ok()) continue;
        const StateChange change = set_state(run, row->state, row->state_detail, {}, StateSource::kService);
        out.push_back(OwnersWord{key, change.changed, is_terminal(row->state)});
    }
    return out;
}

std::vector<RunChange> RunRegistry::take_over_orphans() {
    std::vector<RunChange> out;
    if (store_ == nullptr) return out;
    for (auto& [key, run] : runs_) {
        if (!run.state_from_store || is_terminal(run.state)) continue;
        const Result<StoredRun> row = store_->row(run.store_id);
        if (!row.ok()) continue;
        const std::optional<std::string> log_stop =
            run.metrics.run_stop_ms ? std::optional(run.metrics.status.value_or(std::string()))
                                    : std::nullopt;
        const std::optional<OrphanEnd> end = run.orphan_check.check(*row, log_stop);
        if (!end) continue;
        run.state_from_store = false;
        run.cancellable = false;
        out.push_back(RunChange{key, set_state(run, end->state, end->detail)});
    }
    return out;
}

std::vector<JobAnswerForRun> RunRegistry::job_answered(const std::string& cluster, const std::string& job,
                                                       const std::optional<remote::JobInfo>& answer,
                                                       const std::string& error,
                                                       JobWatch::Clock::time_point now) {
    std::vector<JobAnswerForRun> out;
    for (auto& [key, run] : runs_) {
        if (run.source != RunKind::kClusterJob || run.profile != cluster || run.job_id != job) continue;
        JobAnswerForRun a;
        a.key = key;
        if (!answer) {
            a.failed_anew = error != run.last_poll_error;
            run.last_poll_error = error;
            out.push_back(std::move(a));
            continue;
        }
        run.last_poll_error.clear();
        const JobWatch::Judgment judged =
            run.job_watch.saw(answer->state, run.metrics.status.value_or(""), now);
        a.requeued = judged.verdict == JobWatch::Verdict::kBack;
        if (!judged.counts()) {
            a.settling = !is_terminal(run.state);
        } else if (!is_terminal(judged.state) || !is_terminal(run.state)) {
            a.change = set_state(run, judged.state, answer->node_list, answer->state, StateSource::kPoller);
            if (is_terminal(judged.state)) {
                a.ended = true;
                a.end = judged.state;
                a.end_alert = !run.watch.ended();
                run.watch.mark_ended();  // at most one end alert per run
            }
        }
        out.push_back(std::move(a));
    }
    return out;
}

std::vector<RunChange> RunRegistry::cluster_gone(const std::string& cluster, bool removed) {
    std::vector<RunChange> out;
    for (auto& [key, run] : runs_) {
        if (run.profile != cluster ||
            (run.source != RunKind::kClusterJob && run.source != RunKind::kClusterLog))
            continue;
        run.follow_id = 0;
        if (!removed) continue;
        if (run.submit_request != 0) {
            run.submit_request = 0;
            out.push_back(
                RunChange{key, set_state(run, RunState::kUnknown, kProfileRemovedDuringSubmitDetail)});
        } else if (is_live(run.state)) {
            // Its state is the last one known; it is not written, since nobody knows it changed.
            run.cancellable = false;
            run.state_detail = kProfileRemovedNotFollowedDetail;
            out.push_back(RunChange{key, StateChange{true, false, {}}});
        }
    }
    return out;
}

std::vector<Stall> RunRegistry::check_stalls(int64_t now) {
    std::vector<Stall> stalls;
    for (auto& [key, run] : runs_) {
        if (!run.live || is_terminal(run.state)) continue;
        if (std::optional<RunAlert> alert = run.watch.check_stall(now)) {
            Stall stall{key, std::move(*alert), {}};
            stall.change = set_state(run, RunState::kStalled, stall.alert.message);
            stalls.push_back(std::move(stall));
        }
    }
    return stalls;
}

}  // namespace slipway::app
