// Every run the app shows while it is open, as Qt signals: the Qt side of the run service's RunBoard
// (service/run_board.h), which holds the runs and every rule of their life. The tracker gives the board its
// seams over Qt (the file follower, the clusters' sessions, the history writer, timers) and says what the
// board tells in signals and in the user's language. No widgets: the pages draw TrackedRun and forward
// what the user asks for.
//
// Connections: one set per ClusterSession, made the first time a run uses it (or when ClusterSessions makes
// it) and handed to the board by profile; dropped when ClusterSessions replaces or removes the session.
#pragma once

#include <QMetaObject>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"
#include "core/follow_service.h"
#include "core/run_metrics.h"
#include "core/run_state.h"
#include "core/run_watch.h"
#include "history/history_run_store.h"
#include "history/history_writer.h"
#include "history/run_history.h"
#include "remote/deploy/job_end_rule.h"
#include "service/local_executor.h"
#include "service/run_board.h"

namespace slipway::app {

class ClusterSession;
class ClusterSessions;

class RunTracker : public QObject {
    Q_OBJECT

public:
    struct Options {
        QString resource_root;   // resolves a run config's relative inputs
        QString local_runs_dir;  // where runs on This computer get their folder
        QString engine_binary;   // slipway-engine (local runs; deployed to clusters)
        double stall_factor = 5.0;
        int64_t stall_min_ms = 60'000;
        int stall_check_ms = 5000;
        int job_poll_ms = 10'000;      // Slurm state of live cluster runs (one timer for all)
        int after_run_stop_ms = 1500;  // ask Slurm this soon after the log's run_stop
        int store_watch_ms = 2000;     // how often rows written by another process are looked for
        int local_poll_ms = 200;       // how soon a local engine's exit is seen
        int local_cancel_grace_ms =
            static_cast<int>(kStopGrace.count());  // a cancelled engine's time to save
        // When an ended-looking Slurm state is the run's end (a requeued job looks ended for a moment).
        remote::JobEndRule::Options end_rule;
    };

    // None owned; `store` and `sessions` may be null (nothing stored / no clusters). The store's writer
    // retries on this tracker's event loop and tells it its failures while the tracker lives: one tracker
    // per store.
    RunTracker(RunHistory* store, FollowService* follow, ClusterSessions* sessions, Options options,
               QObject* parent = nullptr);
    ~RunTracker() override;  // stops follows and processes, closes writer queues, disconnects sessions

    // Starts slipway-engine on `config` here. `overrides` are engine flags (tests shorten runs).
    [[nodiscard]] Result<int> submit_local(const RunConfig& config, const QStringList& overrides = {});
    // Deploys and sbatches `config` on a cluster profile; its log is followed and its state polled.
    [[nodiscard]] Result<int> submit_cluster(const RunConfig& config, const QString& profile);
    // Reads a whole log file once (stored as a run, one per file; state from its run_stop). Fails at once
    // when the file is missing.
    [[nodiscard]] Result<int> open_log(const QString& path);
    // Follows a log file that is being written (e.g. the demo's mllog.txt started from a script).
    int follow_log(const QString& path, const QString& name);
    // Follows a log on a cluster opened by hand; stored once per file and resumed from its offset.
    [[nodiscard]] Result<int> open_cluster_log(const QString& profile, const QString& path);
    // Curves that are not stored anywhere (an import, a benchmark), shown as a finished run.
    int show_curves(const QString& name, RunMetrics metrics, RunState state = RunState::kCompleted);
    // A stored run's curves, not live. A run shown already is returned as it is.
    [[nodiscard]] Result<int> show_stored(int64_t store_id);
    // Follows a stored run's log again from its stored offset (and asks Slurm about its job).
    [[nodiscard]] Result<int> resume(int64_t store_id);
    // SIGTERM / scancel; the result arrives as run_changed (and message() when scancel fails).
    [[nodiscard]] Status cancel(int key);
    // No longer shown: its follow stops, its writer queue is closed, the entry goes (run_released).
    void release(int key);
    // Deletes a stored run (a shown one is released first).
    [[nodiscard]] Status delete_stored(int64_t store_id);
    // The startup sweep: a local run left "running" died with the last session (interrupted); a cluster log
    // left "following" is no longer followed (incomplete).
    void recover_after_restart();

    void set_target(int key, std::optional<double> target, bool higher_is_better);
    // A live run stalls after `factor` x its median step interval without a new step, never sooner than
    // min_ms; checked every check_ms. Applies to runs added afterwards.
    void set_stall_policy(double factor, int64_t min_ms, int check_ms = 5000);

    const TrackedRun* run(int key) const;
    int run_for_store(int64_t store_id) const;
    // A tracked run still waiting for its submission's answer has this Slipway run id.
    bool submitting_run_id(const QString& run_id) const;
    std::vector<int> keys() const;
    int local_runs_active() const;
    // Connections the tracker holds on ClusterSessions (tests: one set per session, whatever the run count).
    int session_connections() const;
    RunHistory* store() const { return store_; }
    // The store's writer cannot write at the moment (it keeps what it was given and retries).
    bool store_failing() const;

signals:
    void run_added(int key);
    void run_changed(int key);  // state, detail, cancellable, job id, target, node states
    // A batch was folded in: `first_new` is, per metric, the index of its first new point. A reset batch
    // (the log was rewritten) comes with every series restarted.
    void batch_applied(int key, const slipway::app::FollowBatch& batch,
                       const std::array<size_t, kMetricCount>& first_new);
    void loaded(int key);  // an opened file was read to its end
    void run_released(int key);
    void alert(int key, const slipway::app::RunAlert& alert);
    void local_run_finished(int key, int exit_code);
    // A cluster's connection went down or came back: once per change, however many runs use it.
    void connection_changed(const QString& profile, bool up, const QString& message);
    void message(const QString& text);          // "Submitted job 12 to hpc (...)", a failed scancel
    void history_problem(const QString& text);  // the store's writer failed or recovered
    // A run row was added, changed or removed, here or by another process (the CLI, another window).
    void store_changed();

private:
    class QtSeams;  // the board's seams over Qt, and its events as signals (run_tracker.cpp)
    friend class QtSeams;

    // A notice of the board's in the user's language.
    static QString words(const Notice& notice);

public:
    // The run history's writer failing or writing again, worded for the user (history_problem's text).
    static QString words(const HistoryWriter::Change& change);

private:
    ClusterSession* session_for(const std::string& profile);
    // The session's signals go to the board, by profile (once per session).
    void attach(ClusterSession* session);
    void detach(ClusterSession* session);
    void on_session_gone(const QString& profile, ClusterSession* old_session, bool replaced);
    void poll_local();

    RunHistory* store_;
    FollowService* follow_;
    ClusterSessions* sessions_;
    Options options_;
    std::map<ClusterSession*, std::vector<QMetaObject::Connection>> links_;
    std::unique_ptr<HistoryRunStore> stored_runs_;  // the run service's view of store_
    std::unique_ptr<QtSeams> seams_;
    // Declared after what it talks to: destroyed first (the destructor ends it before the links go).
    std::unique_ptr<RunBoard> board_;
    QTimer stall_timer_;
    QTimer poll_timer_;
    QTimer store_timer_;
    QTimer local_timer_;
};

}  // namespace slipway::app
