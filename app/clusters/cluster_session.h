// One cluster's connection, off the GUI thread: a worker thread owns the profile's SSH Session (opened on
// first use, reconnected when dropped) and runs everything for that cluster on it in order: connection
// tests with sinfo, submitting runs (deploy + sbatch), job state (and the states of a multi-node job's
// nodes), scancel, and following job logs from a
// byte offset (remote::LogFollower). Results come back by queued signals carrying a request id; the GUI
// drops what it no longer waits for. Host keys, passphrases and 2FA codes are asked through the
// SessionCallbacks given at construction (the app's dialogs); nothing secret is stored.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <QThread>

#include <functional>
#include <memory>

#include "contract/run_config.h"
#include "core/follow_service.h"
#include "remote/deploy/job_nodes.h"
#include "remote/slurm/cluster_profile.h"
#include "remote/ssh/session.h"

namespace slipway::app {

class ClusterWorker;

struct PartitionSummary {
    QString name;
    bool is_default = false;
    int nodes = 0;
    int idle_nodes = 0;
    qint64 gpus = 0;
    QString gpu_type;
};

// A submission's answer. The worker has written the run's row already (store_id; 0 without a history).
struct RemoteSubmission {
    QString run_id;
    qint64 store_id = 0;
    QString job_id;
    QString remote_dir;
    QString log_path;       // <remote_dir>/slurm-<job>.out
    QString store_problem;  // why the run history could not record the submission; empty when it did
};

class ClusterSession : public QObject {
    Q_OBJECT

public:
    // Opens `connect` to reach the cluster (tests pass a FakeSession factory); default: libssh.
    using Connector = std::function<Result<std::unique_ptr<remote::Session>>(
        const remote::ClusterProfile&, const remote::SessionCallbacks&)>;

    ClusterSession(remote::ClusterProfile profile, remote::SessionCallbacks callbacks,
                   Connector connector = {}, QObject* parent = nullptr);
    ~ClusterSession() override;

    const remote::ClusterProfile& profile() const { return profile_; }

    // Each returns a request id that the matching signal carries.
    int test();  // connect, `hostname`, sinfo partitions
    // Through the run service (service/slurm_executor.h) on the worker thread. `run_id` empty: one is made.
    // With a store path, the worker writes the run's row in that run history: submitting, then pending with
    // its job the moment sbatch answers, or failed with the reason.
    int submit(const RunConfig& config, const QString& input_root, const QString& engine_binary,
               const QString& run_id = {});
    void set_store_path(const QString& path) { store_path_ = path; }
    int job_state(const QString& job_id);
    // Several jobs' states with one squeue: a job_state_known for each, all with this request id.
    int job_states(const QStringList& job_ids);
    int cancel(const QString& job_id);
    // The entries of a remote folder over SFTP ("~" and relative paths are the remote home's); folders and
    // links to folders end in '/'.
    int list_dir(const QString& path);
    // Follows a remote log from `offset`; batches arrive through follow_batch with this follow id (the
    // same FollowBatch the local follower sends). Polled every poll_ms until stop_follow/finish_follow.
    int follow(const QString& path, quint64 offset, int poll_ms = 2000);
    // Starts `command` on the login node (connecting first if needed) and hands its process over through
    // process_started: its owner talks to it from its own thread, each call a short step under the
    // session's lock (RemoteProcess, session.h), so the worker's other requests go on meanwhile.
    int start_process(const QString& command);
    void finish_follow(int follow_id);  // read the rest, a last unterminated line too, then stop
    void stop_follow(int follow_id);

signals:
    void tested(int request, bool ok, const QString& message,
                const QList<slipway::app::PartitionSummary>& partitions);
    void submitted(int request, bool ok, const QString& error,
                   const slipway::app::RemoteSubmission& submission);
    // While a submission is under way: how it goes (the engine's build on the cluster, its job's states).
    void submit_progress(int request, const QString& line);
    void job_state_known(int request, bool ok, const QString& job_id, const QString& state,
                         const QString& detail);
    // After job_state_known of a job running on several nodes: each node's Slurm state.
    void job_nodes_known(const QString& job_id, const std::vector<slipway::remote::NodeState>& nodes);
    void cancelled(int request, bool ok, const QString& message);
    void listed(int request, bool ok, const QString& path, const QStringList& entries, const QString& error);
    void follow_batch(const slipway::app::FollowBatch& batch);
    void process_started(int request, bool ok, const QString& error,
                         const std::shared_ptr<slipway::remote::RemoteProcess>& process);
    void connection_changed(bool connected, const QString& message);

private:
    remote::ClusterProfile profile_;
    QString store_path_;
    QThread thread_;
    ClusterWorker* worker_;
    int next_request_ = 1;
};

}  // namespace slipway::app

Q_DECLARE_METATYPE(slipway::app::PartitionSummary)
Q_DECLARE_METATYPE(slipway::app::RemoteSubmission)
Q_DECLARE_METATYPE(std::shared_ptr<slipway::remote::RemoteProcess>)
Q_DECLARE_METATYPE(std::vector<slipway::remote::NodeState>)
