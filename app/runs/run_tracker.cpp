// RunTracker: the board's seams over Qt (FollowService, ClusterSessions, HistoryWriter, QTimer), its events
// as signals in the user's language, and the public calls handed to it.
#include "runs/run_tracker.h"

#include <QCoreApplication>
#include <QFile>
#include <QtDebug>

#include <utility>

#include "clusters/cluster_session.h"
#include "history/history_writer.h"
#include "runs/cluster_sessions.h"

namespace slipway::app {
namespace {

QString text(const std::string& s) {
    return QString::fromStdString(s);
}

// A follower's batch as the board reads it (the events are not copied). Only a cluster's log can announce a
// Slurm requeue in its text: a file's lines are not converted on the ingest path.
LogBatch log_batch(const FollowBatch& batch, bool with_lines) {
    LogBatch out;
    out.follow_id = batch.follow_id;
    out.reset = batch.reset;
    out.missing = batch.missing;
    out.finished = batch.finished;
    out.behind = batch.behind;
    out.offset = batch.offset;
    out.bad_lines = batch.bad_lines;
    out.events = &batch.events;
    if (!with_lines) return out;
    out.lines.reserve(static_cast<size_t>(batch.lines.size()));
    for (const QString& line : batch.lines)
        out.lines.push_back(line.toStdString());
    return out;
}

}  // namespace

class RunTracker::QtSeams : public LogFollows, public ClusterLinks, public BoardTimer, public RunEvents {
public:
    explicit QtSeams(RunTracker& tracker) : tracker_(tracker) {}

    // The batch being handed to the board: batch_folded says it with its first new points.
    const FollowBatch* batch_in_flight = nullptr;

    // ---- LogFollows ----
    int follow(const std::string& path, uint64_t offset) override {
        return tracker_.follow_->follow(text(path), offset);
    }
    void finish(int follow_id) override { tracker_.follow_->finish(follow_id); }
    void stop(int follow_id) override { tracker_.follow_->stop(follow_id); }

    // ---- ClusterLinks ----
    bool has_profile(const std::string& profile) override { return tracker_.session_for(profile) != nullptr; }
    int submit(const std::string& profile, const RunConfig& config, const std::string& run_id) override {
        ClusterSession* session = tracker_.session_for(profile);
        return session == nullptr ? 0
                                  : session->submit(config, tracker_.options_.resource_root,
                                                    tracker_.options_.engine_binary, text(run_id));
    }
    void ask(const std::string& profile, const std::vector<std::string>& jobs) override {
        QStringList ids;
        for (const std::string& job : jobs)
            ids << text(job);
        if (ClusterSession* session = tracker_.session_for(profile)) session->job_states(ids);
    }
    int cancel(const std::string& profile, const std::string& job) override {
        ClusterSession* session = tracker_.session_for(profile);
        return session == nullptr ? 0 : session->cancel(text(job));
    }
    int follow(const std::string& profile, const std::string& path, uint64_t offset) override {
        ClusterSession* session = tracker_.session_for(profile);
        return session == nullptr ? 0 : session->follow(text(path), offset);
    }
    void finish_follow(const std::string& profile, int follow_id) override {
        if (ClusterSession* s = tracker_.session_for(profile)) s->finish_follow(follow_id);
    }
    void stop_follow(const std::string& profile, int follow_id) override {
        if (tracker_.sessions_ == nullptr) return;
        if (ClusterSession* s = tracker_.sessions_->existing(profile)) s->stop_follow(follow_id);
    }

    // ---- BoardTimer ----
    void later(int ms, std::function<void()> fn) override {
        QTimer::singleShot(ms, &tracker_, std::move(fn));
    }

    // ---- RunEvents ----
    void added(int key) override { emit tracker_.run_added(key); }
    void changed(int key) override { emit tracker_.run_changed(key); }
    void batch_folded(int key, const std::array<size_t, kMetricCount>& first_new) override {
        if (batch_in_flight != nullptr) emit tracker_.batch_applied(key, *batch_in_flight, first_new);
    }
    void loaded(int key) override { emit tracker_.loaded(key); }
    void released(int key) override { emit tracker_.run_released(key); }
    void alert(int key, const RunAlert& alert) override { emit tracker_.alert(key, alert); }
    void local_finished(int key, int exit_code) override { emit tracker_.local_run_finished(key, exit_code); }
    void connection(const std::string& profile, bool up, const std::string& why) override {
        emit tracker_.connection_changed(text(profile), up, text(why));
    }
    void notice(const Notice& notice) override { emit tracker_.message(RunTracker::words(notice)); }
    std::string wording(const Notice& notice) override { return RunTracker::words(notice).toStdString(); }
    void store_problem(const std::string& why) override {
        qWarning().noquote() << "slipway:" << text(why);
        emit tracker_.history_problem(text(why));
    }
    void store_changed() override { emit tracker_.store_changed(); }

private:
    RunTracker& tracker_;
};

QString RunTracker::words(const Notice& notice) {
    QString s;
    switch (notice.kind) {
        case Notice::Kind::kStarted:
            s = tr("Started %1: %2");
            break;
        case Notice::Kind::kCancelling:
            s = tr("Cancelling %1...");
            break;
        case Notice::Kind::kEngineEnded:
            s = tr("the engine ended with %1");
            break;
        case Notice::Kind::kSubmitting:
            s = tr("Submitting %1 to %2...");
            break;
        case Notice::Kind::kSubmitFailed:
            s = tr("submit: %1");
            break;
        case Notice::Kind::kSubmitted:
            s = tr("Submitted job %1 to %2 (%3)");
            break;
        case Notice::Kind::kScancelSent:
            s = tr("scancel %1 sent");
            break;
        case Notice::Kind::kScancelFailed:
            s = tr("Cancelling job %1 failed: %2");
            break;
        case Notice::Kind::kJobQuestion:
            s = tr("Job %1: %2");
            break;
        case Notice::Kind::kJobRequeued:
            s = tr("Job %1 is %2 again (requeued): following it on");
            break;
        case Notice::Kind::kJobEnded:
            s = tr("job %1 ended %2");
            break;
    }
    // In one arg() call: a name with "%1" in it is not filled in again.
    const std::vector<std::string>& a = notice.args;
    switch (a.size()) {
        case 0:
            return s;
        case 1:
            return s.arg(text(a[0]));
        case 2:
            return s.arg(text(a[0]), text(a[1]));
        default:
            return s.arg(text(a[0]), text(a[1]), text(a[2]));
    }
}

QString RunTracker::words(const HistoryWriter::Change& change) {
    // Their context is the writer's, where they were first written: their Russian stays.
    const QString path = QString::fromStdString(change.path);
    if (change.failing) {
        return QCoreApplication::translate("slipway::app::HistoryWriter",
                                           "cannot write the run history %1: %2")
                   .arg(path, QString::fromStdString(change.reason)) +
               QStringLiteral(". ") +
               QCoreApplication::translate("slipway::app::HistoryWriter",
                                           "Points are kept and written when it works again.");
    }
    if (change.points_waiting == 0)
        return QCoreApplication::translate("slipway::app::HistoryWriter",
                                           "the run history %1 is written again")
            .arg(path);
    return QCoreApplication::translate(
               "slipway::app::HistoryWriter",
               "the run history %1 is written again; the %2 points that waited are stored")
        .arg(path)
        .arg(change.points_waiting);
}

RunTracker::RunTracker(RunHistory* store, FollowService* follow, ClusterSessions* sessions, Options options,
                       QObject* parent)
    : QObject(parent),
      store_(store),
      follow_(follow),
      sessions_(sessions),
      options_(std::move(options)),
      stored_runs_(store_ != nullptr ? std::make_unique<HistoryRunStore>(*store_) : nullptr),
      seams_(std::make_unique<QtSeams>(*this)) {
    RunBoard::Options board;
    board.resource_root = options_.resource_root.toStdString();
    board.local_runs_dir = options_.local_runs_dir.toStdString();
    board.engine_binary = QFile::encodeName(options_.engine_binary).toStdString();
    board.stall_factor = options_.stall_factor;
    board.stall_min_ms = options_.stall_min_ms;
    board.after_run_stop_ms = options_.after_run_stop_ms;
    board.local_cancel_grace_ms = options_.local_cancel_grace_ms;
    board.end_rule = options_.end_rule;
    board_ = std::make_unique<RunBoard>(
        std::move(board),
        RunBoard::Seams{stored_runs_.get(), store_ != nullptr ? &store_->writer() : nullptr, seams_.get(),
                        sessions_ != nullptr ? seams_.get() : nullptr, seams_.get(), seams_.get()});

    connect(follow_, &FollowService::batch, this, [this](const FollowBatch& batch) {
        const FollowBatch* outer = std::exchange(seams_->batch_in_flight, &batch);  // a nested event loop's
        board_->file_batch(log_batch(batch, false));
        seams_->batch_in_flight = outer;
    });
    if (store_ != nullptr) {
        // Its retries wait on this thread's event loop; it says failing and recovering once each.
        store_->writer().set_retry_timer(seams_.get());
        store_->writer().set_listener(
            [this](const HistoryWriter::Change& change) { emit history_problem(words(change)); });
    }
    if (sessions_ != nullptr) {
        connect(sessions_, &ClusterSessions::session_replaced, this,
                [this](const QString& profile, ClusterSession* old) { on_session_gone(profile, old, true); });
        connect(
            sessions_, &ClusterSessions::session_removed, this,
            [this](const QString& profile, ClusterSession* old) { on_session_gone(profile, old, false); });
        // Every session, whoever opened it (the Clusters page's test too): its connection state is known, and
        // runs submitted elsewhere can be asked about over it.
        connect(sessions_, &ClusterSessions::session_created, this,
                [this](const QString&, ClusterSession* session) { attach(session); });
    }
    local_timer_.setInterval(options_.local_poll_ms);
    connect(&local_timer_, &QTimer::timeout, this, &RunTracker::poll_local);
    stall_timer_.setInterval(options_.stall_check_ms);
    connect(&stall_timer_, &QTimer::timeout, this, [this] { board_->check_stalls(); });
    stall_timer_.start();
    poll_timer_.setInterval(options_.job_poll_ms);
    connect(&poll_timer_, &QTimer::timeout, this, [this] { board_->poll_jobs(); });
    poll_timer_.start();
    if (store_ != nullptr) {
        store_timer_.setInterval(options_.store_watch_ms);
        connect(&store_timer_, &QTimer::timeout, this, [this] { board_->watch_store(); });
        store_timer_.start();
    }
}

RunTracker::~RunTracker() {
    for (auto& [session, connections] : links_) {
        for (const QMetaObject::Connection& c : connections)
            disconnect(c);
    }
    links_.clear();
    // Engines stopped, follows stopped, writer queues closed, while the tracker still answers.
    board_->close();
    board_.reset();
    if (store_ != nullptr) {
        store_->writer().set_listener(nullptr);
        store_->writer().set_retry_timer(nullptr);
    }
}

// ---- The cluster sessions ----

ClusterSession* RunTracker::session_for(const std::string& profile) {
    if (sessions_ == nullptr) return nullptr;
    ClusterSession* session = sessions_->session(profile);
    attach(session);
    return session;
}

void RunTracker::attach(ClusterSession* session) {
    if (session == nullptr || links_.count(session) != 0) return;
    const std::string profile = session->profile().name;
    RunBoard& board = *board_;
    links_[session] = {
        connect(session, &ClusterSession::submitted, this,
                [&board, profile](int request, bool ok, const QString& error, const RemoteSubmission& s) {
                    board.submitted(
                        profile, request,
                        SubmissionAnswer{ok, error.toStdString(), s.store_id, s.job_id.toStdString(),
                                         s.remote_dir.toStdString(), s.log_path.toStdString(),
                                         s.store_problem.toStdString()});
                }),
        connect(session, &ClusterSession::submit_progress, this,
                [&board, profile](int request, const QString& line) {
                    board.submit_progress(profile, request, line.toStdString());
                }),
        connect(
            session, &ClusterSession::job_state_known, this,
            [&board, profile](int, bool ok, const QString& job, const QString& word, const QString& detail) {
                board.job_state(profile, ok, job.toStdString(), word.toStdString(), detail.toStdString());
            }),
        connect(session, &ClusterSession::job_nodes_known, this,
                [&board, profile](const QString& job, const std::vector<remote::NodeState>& nodes) {
                    board.job_nodes(profile, job.toStdString(), nodes);
                }),
        connect(session, &ClusterSession::cancelled, this,
                [&board, profile](int request, bool ok, const QString& answer) {
                    board.cancelled(profile, request, ok, answer.toStdString());
                }),
        connect(session, &ClusterSession::follow_batch, this,
                [this, profile](const FollowBatch& batch) {
                    const FollowBatch* outer = std::exchange(seams_->batch_in_flight, &batch);
                    board_->cluster_batch(profile, log_batch(batch, true));
                    seams_->batch_in_flight = outer;
                }),
        connect(session, &ClusterSession::connection_changed, this,
                [&board, profile](bool up, const QString& why) {
                    board.connection(profile, up, why.toStdString());
                }),
    };
}

void RunTracker::detach(ClusterSession* session) {
    const auto it = links_.find(session);
    if (it == links_.end()) return;
    for (const QMetaObject::Connection& c : it->second)
        disconnect(c);
    links_.erase(it);
}

void RunTracker::on_session_gone(const QString& profile, ClusterSession* old_session, bool replaced) {
    detach(old_session);  // the old session's follows die with it
    board_->cluster_gone(profile.toStdString(), replaced);
}

int RunTracker::session_connections() const {
    int n = 0;
    for (const auto& [session, connections] : links_)
        n += static_cast<int>(connections.size());
    return n;
}

// ---- Handed to the board ----

Result<int> RunTracker::submit_local(const RunConfig& config, const QStringList& overrides) {
    std::vector<std::string> flags;
    for (const QString& o : overrides)
        flags.push_back(o.toStdString());
    Result<int> key = board_->submit_local(config, flags);
    if (key.ok() && !local_timer_.isActive()) local_timer_.start();
    return key;
}

void RunTracker::poll_local() {
    board_->poll_local();
    if (board_->local_runs_active() == 0) local_timer_.stop();
}

Result<int> RunTracker::submit_cluster(const RunConfig& config, const QString& profile) {
    return board_->submit_cluster(config, profile.toStdString());
}

Result<int> RunTracker::open_log(const QString& path) {
    return board_->open_log(QFile::encodeName(path).toStdString());
}

int RunTracker::follow_log(const QString& path, const QString& name) {
    return board_->follow_log(QFile::encodeName(path).toStdString(), name.toStdString());
}

Result<int> RunTracker::open_cluster_log(const QString& profile, const QString& path) {
    return board_->open_cluster_log(profile.toStdString(), path.toStdString());
}

int RunTracker::show_curves(const QString& name, RunMetrics metrics, RunState state) {
    return board_->show_curves(name.toStdString(), std::move(metrics), state);
}

Result<int> RunTracker::show_stored(int64_t store_id) {
    return board_->show_stored(store_id);
}

Result<int> RunTracker::resume(int64_t store_id) {
    return board_->resume(store_id);
}

Status RunTracker::cancel(int key) {
    return board_->cancel(key);
}

void RunTracker::release(int key) {
    board_->release(key);
}

Status RunTracker::delete_stored(int64_t store_id) {
    return board_->delete_stored(store_id);
}

void RunTracker::recover_after_restart() {
    board_->recover_after_restart();
}

void RunTracker::set_target(int key, std::optional<double> target, bool higher_is_better) {
    board_->set_target(key, target, higher_is_better);
}

void RunTracker::set_stall_policy(double factor, int64_t min_ms, int check_ms) {
    options_.stall_check_ms = check_ms;
    board_->set_stall_policy(factor, min_ms);
    stall_timer_.setInterval(check_ms);
}

const TrackedRun* RunTracker::run(int key) const {
    return board_->run(key);
}

int RunTracker::run_for_store(int64_t store_id) const {
    return board_->run_for_store(store_id);
}

bool RunTracker::submitting_run_id(const QString& run_id) const {
    return board_->submitting_run_id(run_id.toStdString());
}

std::vector<int> RunTracker::keys() const {
    return board_->keys();
}

int RunTracker::local_runs_active() const {
    return board_->local_runs_active();
}

bool RunTracker::store_failing() const {
    return store_ != nullptr && store_->writer().failing();
}

}  // namespace slipway::app
