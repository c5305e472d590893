// RunBoard: runs on This computer, log files, stored runs, and what every run shares (state changes,
// folding log batches into curves and rows, alerts, stalls, release). The cluster half is in
// run_board_cluster.cpp.
#include "service/run_board.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "core/engine_command.h"
#include "service/follow_again.h"
#include "service/stale_runs.h"

namespace slipway::app {
namespace fs = std::filesystem;

RunBoard::RunBoard(Options options, Seams seams)
    : options_(std::move(options)),
      seams_(seams),
      events_(*seams.events),
      jobs_(options_.end_rule),
      registry_({options_.stall_factor, options_.stall_min_ms, options_.end_rule}, seams.store) {
    RunStore* executor_store = seams_.store;
    if (executor_store == nullptr) {
        no_store_ = std::make_unique<NoRunStore>();
        executor_store = no_store_.get();
    }
    local_executor_ = std::make_unique<LocalExecutor>(
        *executor_store,
        LocalExecutor::Options{options_.resource_root, options_.local_runs_dir, options_.engine_binary});
    // The baseline now: a change before the first tick is a change too.
    if (seams_.store != nullptr) {
        if (const Result<int64_t> version = seams_.store->version(); version.ok()) store_version_ = *version;
    }
}

RunBoard::~RunBoard() {
    close();
}

void RunBoard::close() {
    if (closed_) return;
    closed_ = true;
    // Engines still training are stopped with the app, all at once (a few seconds at most: the window is
    // closing); their rows say so, so the next start's sweep need not.
    (void)local_.close_all(kClosedWhileRunningDetail, kClosingGrace);
    std::vector<int64_t> rows;  // closed after the loop: a listener told of a problem may release a run
    for (auto& [key, run] : registry_) {
        if (run.follow_id != 0 && follows_local_file(run.source)) seams_.files->stop(run.follow_id);
        run.follow_id = 0;
        if (run.store_id != 0) rows.push_back(run.store_id);
    }
    for (const int64_t row : rows)
        close_store_queue(row);
}

void RunBoard::set_stall_policy(double factor, int64_t min_ms) {
    registry_.set_stall_policy(factor, min_ms);  // the registry's watches hold the policy
}

void RunBoard::set_target(int key, std::optional<double> target, bool higher_is_better) {
    TrackedRun* run = registry_.find(key);
    if (run == nullptr) return;
    run->metrics.target = target;
    run->metrics.target_higher_is_better = higher_is_better;
    events_.changed(key);
}

void RunBoard::set_state(TrackedRun& run, RunState state, const std::string& detail,
                         const std::string& slurm_state, StateSource source) {
    report(run.key, registry_.set_state(run, state, detail, slurm_state, source));
}

void RunBoard::report(int key, const StateChange& change) {
    if (!change.changed) return;
    if (change.stored) {
        if (!change.store_problem.empty()) events_.store_problem(change.store_problem);
        events_.store_changed();
    }
    events_.changed(key);
}

void RunBoard::alert(int key, RunAlertKind kind, Notice notice) {
    events_.alert(key, RunAlert{kind, events_.wording(notice)});
}

void RunBoard::watch_store() {
    if (seams_.store == nullptr) return;
    const Result<int64_t> version = seams_.store->version();
    if (!version.ok()) return;
    const bool changed = store_version_ >= 0 && *version != store_version_;
    store_version_ = *version;
    if (!changed) return;
    // Runs another process runs here: their rows say how they go.
    for (const OwnersWord& word : registry_.read_owners_rows()) {
        if (word.changed) events_.changed(word.key);
        const TrackedRun* run = registry_.find(word.key);  // a listener may have released it
        if (word.ended && run != nullptr && run->follow_id != 0)
            seams_.files->finish(run->follow_id);  // its last lines
    }
    events_.store_changed();
}

// ---- This computer ----

Result<int> RunBoard::submit_local(const RunConfig& config, const std::vector<std::string>& flags) {
    Result<LocalJob> started = local_executor_->submit(config, flags);
    if (!started.ok()) {
        events_.store_changed();  // a run that could not start is stored failed
        return started.status();
    }
    const LocalRunPlan& plan = started->plan();
    TrackedRun& run = registry_.add(RunKind::kLocal, plan.config.name, RunState::kRunning);
    const int key = run.key;
    run.profile = kLocalCluster;
    run.log_path = plan.mllog_path;
    run.job_id = std::to_string(started->pid());
    run.store_id = started->run().id;
    run.cancellable = true;
    run.live = true;
    if (plan.config.eval.target) {
        run.metrics.target = plan.config.eval.target;
        run.metrics.target_higher_is_better = plan.config.eval_higher_is_better();
    }
    if (!started->store_problem().empty()) events_.store_problem(started->store_problem());
    run.follow_id = seams_.files->follow(run.log_path, 0);
    const std::string command = command_line(plan.engine, plan.arguments);
    const std::string name = run.name;
    local_.add(key, std::move(*started));
    events_.added(key);
    events_.store_changed();
    events_.notice({Notice::Kind::kStarted, {name, command}});
    return key;
}

void RunBoard::poll_local() {
    for (const LocalJobs::Ended& ended : local_.poll()) {
        // The run service stored the end in the run's row.
        if (!ended.store_problem.empty()) events_.store_problem(ended.store_problem);
        events_.store_changed();
        const LocalEnd& end = ended.end;
        // A run removed from the monitor while it trained has no entry: its row learnt how it ended.
        if (TrackedRun* r = registry_.find(ended.key)) {
            if (r->follow_id != 0) seams_.files->finish(r->follow_id);  // the engine's last lines too
            set_state(*r, end.state, end.detail, {}, StateSource::kService);
            // One end alert: none when the log's run_stop gave it, or for a cancel (asked for).
            r = registry_.find(ended.key);  // a listener may have released it
            if (r != nullptr && end.state == RunState::kFailed && !r->watch.ended()) {
                r->watch.mark_ended();
                alert(ended.key, RunAlertKind::kFailed, {Notice::Kind::kEngineEnded, {end.detail}});
            }
        }
        events_.local_finished(ended.key, end.exit.signal == 0 ? end.exit.code : -1);
    }
}

// ---- Log files ----

Result<int> RunBoard::open_log(const std::string& path) {
    std::error_code ec;
    const bool exists = fs::exists(path, ec);
    if (!exists || !fs::is_regular_file(path, ec) || ::access(path.c_str(), R_OK) != 0) {
        return Result<int>::Error("cannot open log file '" + path +
                                  "': " + (exists ? "not a readable file" : "No such file or directory"));
    }
    const std::string absolute = fs::absolute(path, ec).lexically_normal().string();
    const std::string file_name = fs::path(absolute).filename().string();
    // Kept in the history like a run (one per file: opening it again reads it again into the same run).
    int64_t store_id = 0;
    if (seams_.store != nullptr) {
        const std::string canonical = fs::canonical(path, ec).string();
        if (const Result<int64_t> before = seams_.store->find_opened_log(canonical); before.ok()) {
            if (const int shown = registry_.run_for_store(*before)) release(shown);  // before its points go
        }
        if (const Result<int64_t> id = seams_.store->record_opened_log(canonical, file_name); id.ok()) {
            store_id = *id;
        } else {
            events_.store_problem(id.error());
        }
    }
    TrackedRun& run = add_log_file(file_name, RunState::kReading, absolute);
    run.store_id = store_id;
    run.loading = true;
    const int key = run.key;
    events_.added(key);
    events_.store_changed();
    return key;
}

TrackedRun& RunBoard::add_log_file(const std::string& name, RunState state, const std::string& path) {
    TrackedRun& run = registry_.add(RunKind::kLogFile, name, state);
    run.profile = kOpenedLogCluster;
    run.log_path = path;
    run.follow_id = seams_.files->follow(path, 0);
    return run;
}

int RunBoard::follow_log(const std::string& path, const std::string& name) {
    TrackedRun& run = add_log_file(name, RunState::kRunning, path);
    run.live = true;
    const int key = run.key;
    events_.added(key);
    return key;
}

void RunBoard::file_batch(const LogBatch& batch) {
    if (TrackedRun* run = registry_.find_by_follow(RunKind::kLogFile, batch.follow_id)) apply(*run, batch);
}

void RunBoard::apply(TrackedRun& run, const LogBatch& batch) {
    const int key = run.key;
    PointWriter* writer = seams_.points != nullptr && run.store_id != 0 ? seams_.points : nullptr;
    // A rewritten log (a restarted job): its old curves are gone, the stored points too.
    FoldedEvents folded = registry_.fold(run, *batch.events, batch.reset, now_ms());
    if (batch.reset && writer != nullptr) writer->reset(run.store_id);
    if (writer != nullptr && (!folded.rows.empty() || batch.offset > 0))
        writer->append(run.store_id, std::move(folded.rows), run.metrics, batch.offset);
    if (batch.offset > 0) run.log_offset = batch.offset;
    run.bad_lines += batch.bad_lines;
    for (const std::string& line : batch.lines)
        run.job_watch.saw_log_line(line);  // a requeue the job's script announces

    if (run.loading && !batch.behind && !batch.missing) {
        if (batch.finished) {
            run.loading = false;
            run.follow_id = 0;
        } else {
            seams_.files->finish(run.follow_id);  // a last line without '\n' too
        }
    } else if (batch.finished && follows_local_file(run.source)) {
        run.follow_id = 0;
    }
    events_.batch_folded(key, folded.first_new);
    TrackedRun* shown = registry_.find(key);  // a listener may have released it
    if (shown == nullptr) return;

    // What the log itself says of the run's state (the run service's rule).
    const LogVerdict verdict = RunRegistry::log_verdict(*shown, folded, !shown->loading && batch.finished);
    const bool stored = seams_.store != nullptr && shown->store_id != 0;
    if (verdict.state && verdict.ended_by_log && !shown->live) {
        // An opened file read to its end: its state, start and end stored in one write.
        if (stored) {
            if (const Status s = seams_.store->finish_opened_log(shown->store_id, shown->metrics); !s.ok())
                events_.store_problem(s.message());
            events_.store_changed();
        }
        shown->state = *verdict.state;
        shown->state_detail = verdict.detail;
        events_.changed(key);
        events_.loaded(key);
    } else if (verdict.state) {
        set_state(*shown, *verdict.state, verdict.detail);
        if (verdict.ended_by_log && stored) {
            if (TrackedRun* r = registry_.find(key))
                (void)seams_.store->finish_opened_log(r->store_id, r->metrics);
        }
    }
    if (verdict.ask_slurm_now) {
        seams_.timer->later(options_.after_run_stop_ms, [this, key] {
            if (const TrackedRun* r = registry_.find(key); r != nullptr && !is_terminal(r->state))
                ask_state(*r);
        });
    }
    for (const RunAlert& a : folded.alerts)
        events_.alert(key, a);
    if (registry_.find(key) != nullptr) events_.changed(key);
}

void RunBoard::check_stalls() {
    for (const RunChange& taken : registry_.take_over_orphans()) {
        report(taken.key, taken.change);
        const TrackedRun* run = registry_.find(taken.key);  // a listener may have released it
        if (run != nullptr && run->follow_id != 0) seams_.files->finish(run->follow_id);  // its last lines
    }
    for (const Stall& stall : registry_.check_stalls(now_ms())) {
        report(stall.key, stall.change);
        events_.alert(stall.key, stall.alert);
    }
}

// ---- Stored runs ----

int RunBoard::show_curves(const std::string& name, RunMetrics metrics, RunState state) {
    TrackedRun& run = registry_.add(RunKind::kLogFile, name, state);
    run.metrics = std::move(metrics);
    const int key = run.key;
    events_.added(key);
    return key;
}

TrackedRun& RunBoard::add_stored(const StoredRun& record, RunMetrics metrics, RunKind source) {
    TrackedRun& run = registry_.add(source, record.name, record.state);
    run.profile = record.cluster;
    run.state_detail = record.state_detail;
    run.slurm_state = record.slurm_state;
    run.job_id = record.job_id;
    run.log_path = record.log_path;
    run.log_offset = record.log_offset;
    run.store_id = record.id;
    run.metrics = std::move(metrics);
    return run;
}

Result<int> RunBoard::show_stored(int64_t store_id) {
    if (seams_.store == nullptr) return Result<int>::Error("no run history");
    if (const int existing = registry_.run_for_store(store_id)) return existing;
    const Result<StoredRun> record = seams_.store->row(store_id);
    if (!record.ok()) return record.status();
    Result<RunMetrics> metrics = seams_.store->metrics(store_id);
    if (!metrics.ok()) return metrics.status();
    const int key = add_stored(*record, std::move(*metrics), record->kind()).key;
    events_.added(key);
    return key;
}

Result<int> RunBoard::resume(int64_t store_id) {
    if (seams_.store == nullptr) return Result<int>::Error("no run history");
    RunStore& store = *seams_.store;
    const int existing = registry_.run_for_store(store_id);
    if (existing != 0 && local_.find(existing) != nullptr) return existing;  // ours, still training
    const int own_key = local_.key_of_run(store_id);  // ours, released from the monitor while it trained
    // Refused before the shown run goes: a row with no log, a job whose cluster has no profile any more.
    const Result<StoredRun> before = store.row(store_id);
    if (!before.ok()) return before.status();
    if (Result<FollowAgain> refused = plan_follow_again(*before, local_.find(own_key)); !refused.ok())
        return refused.status();
    const bool on_cluster = before->kind() == RunKind::kClusterJob || before->kind() == RunKind::kClusterLog;
    if (on_cluster && (seams_.clusters == nullptr || !seams_.clusters->has_profile(before->cluster))) {
        return Result<int>::Error("run " + std::to_string(store_id) + " ran on cluster " + before->cluster +
                                  ", which has no profile any more");
    }
    // The shown run goes before the offset and points are read: releasing it flushes its queued points
    // (history_writer.h), so the resumed follower neither skips nor repeats a point.
    if (existing != 0) release(existing);
    const Result<StoredRun> record = store.row(store_id);
    if (!record.ok()) return record.status();
    const Result<FollowAgain> plan = plan_follow_again(*record, local_.find(own_key));
    if (!plan.ok()) return plan.status();
    // A log on a cluster opened by hand: followed again there from where it stopped.
    if (plan->followed_as == RunKind::kClusterLog) return open_cluster_log(record->cluster, record->log_path);
    Result<RunMetrics> metrics = store.metrics(store_id);
    if (!metrics.ok()) return metrics.status();
    TrackedRun& run = add_stored(*record, std::move(*metrics), plan->followed_as);
    run.live = plan->live;
    run.cancellable = plan->cancellable;
    run.state_from_store = plan->state_from_store;
    if (plan->followed_as == RunKind::kClusterJob) {
        // Its log is on the login node: followed there from the stored offset (a reconnect after the app or
        // the connection went away); an ended job's is read to its end once, not polled for ever.
        run.name += " @ " + record->cluster;
        run.follow_id = seams_.clusters->follow(record->cluster, record->log_path, record->log_offset);
        if (!plan->live) seams_.clusters->finish_follow(record->cluster, run.follow_id);
    } else {
        run.follow_id = seams_.files->follow(record->log_path, record->log_offset);
    }
    const int key = run.key;
    if (own_key != 0) (void)local_.rekey(own_key, key);
    events_.added(key);
    if (plan->ask_slurm) {
        if (const TrackedRun* shown = registry_.find(key)) ask_state(*shown);
    }
    return key;
}

Status RunBoard::cancel(int key) {
    TrackedRun* run = registry_.find(key);
    if (run == nullptr) return Status::Error("no such run");
    if (LocalJob* job = local_.find(key)) {
        run->watch.mark_ended();  // the engine's run_stop "aborted" answers the cancel: no failure alert
        job->cancel(std::chrono::milliseconds(options_.local_cancel_grace_ms));
        events_.notice({Notice::Kind::kCancelling, {run->name}});
        return Status::Ok();
    }
    if (run->state_from_store && !is_terminal(run->state)) {
        // Another process runs it here: its engine is asked to stop, and that process stores the end.
        const Result<StoredRun> row = seams_.store->row(run->store_id);
        if (!row.ok()) return row.status();
        if (Status s = stop_local_run(*row); !s.ok()) return s;
        run->watch.mark_ended();  // the engine's run_stop "aborted" answers the cancel: no failure alert
        events_.notice({Notice::Kind::kCancelling, {run->name}});
        return Status::Ok();
    }
    if (run->source != RunKind::kClusterJob || run->job_id.empty() || is_terminal(run->state))
        return Status::Error(run->name + " is not a running job");
    if (seams_.clusters == nullptr || !seams_.clusters->has_profile(run->profile))
        return Status::Error("no cluster profile named " + run->profile);
    const int request = seams_.clusters->cancel(run->profile, run->job_id);
    if (request == 0) return Status::Error("no cluster profile named " + run->profile);  // nothing was sent
    links_[run->profile].cancel_to_key[request] = key;
    events_.notice({Notice::Kind::kScancelSent, {run->job_id}});
    return Status::Ok();
}

void RunBoard::close_store_queue(int64_t store_id) {
    if (seams_.points == nullptr || store_id == 0) return;
    if (const Status s = seams_.points->close_run(store_id); !s.ok()) events_.store_problem(s.message());
}

void RunBoard::release(int key) {
    TrackedRun* found = registry_.find(key);
    if (found == nullptr) return;
    TrackedRun& run = *found;
    if (run.follow_id != 0) {
        if (follows_local_file(run.source)) {
            seams_.files->stop(run.follow_id);
        } else if (seams_.clusters != nullptr) {
            seams_.clusters->stop_follow(run.profile, run.follow_id);
        }
    }
    // A log on a cluster no longer followed, which has not said how it ended.
    if (run.source == RunKind::kClusterLog && run.state == RunState::kFollowing && run.store_id != 0 &&
        seams_.store != nullptr) {
        (void)seams_.store->end_unseen(run.store_id, RunState::kIncomplete, {});
        events_.store_changed();
    }
    const int64_t store_id = run.store_id;
    registry_.remove(key);
    close_store_queue(store_id);
    events_.released(key);
}

Status RunBoard::delete_stored(int64_t store_id) {
    if (seams_.store == nullptr) return Status::Error("no run history");
    // Ours and still training (shown, or released from the monitor): its end is still to be stored.
    if (local_.key_of_run(store_id) != 0) return Status::Error("the run is still training; cancel it first");
    if (const int shown = registry_.run_for_store(store_id)) release(shown);
    const Status s = seams_.store->remove(store_id);
    events_.store_changed();
    return s;
}

void RunBoard::recover_after_restart() {
    if (seams_.store == nullptr) return;
    const Result<std::vector<StoredRun>> rows = seams_.store->runs();
    if (!rows.ok()) return;
    if (end_stale_runs(*rows, *seams_.store, now_ms()) > 0) events_.store_changed();
}

}  // namespace slipway::app
