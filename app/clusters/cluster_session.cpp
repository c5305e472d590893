// ClusterSession: the worker thread that owns one cluster's Session and runs its requests in order.
#include "clusters/cluster_session.h"

#include <QFile>
#include <QMetaObject>
#include <QTimer>

#include <map>
#include <optional>

#include "clusters/cluster_connect.h"
#include "core/install_paths.h"
#include "history/history_run_store.h"
#include "history/run_history.h"
#include "remote/deploy/deploy.h"
#include "remote/runlog/log_follower.h"
#include "remote/slurm/cluster_survey.h"
#include "remote/slurm/slurm_client.h"
#include "remote/ssh/libssh_session.h"
#include "service/slurm_executor.h"

namespace slipway::app {

// The store of a ClusterSession without a run history (tests, a history that cannot be opened): nothing is
// recorded, nothing is found.
class ClusterWorker : public QObject {
    Q_OBJECT

public:
    ClusterWorker(remote::ClusterProfile profile, remote::SessionCallbacks callbacks,
                  ClusterSession::Connector connector)
        : profile_(std::move(profile)), callbacks_(std::move(callbacks)), connect_(std::move(connector)) {}

    ~ClusterWorker() override {
        follows_.clear();  // followers hold a reference to the session
    }

public slots:
    void test(int request) {
        QList<PartitionSummary> partitions;
        remote::Session* s = session();
        if (s == nullptr) {
            emit tested(request, false, last_error_, partitions);
            return;
        }
        const Result<remote::ExecResult> host = s->exec("hostname", std::chrono::seconds(20));
        if (!host.ok()) {
            emit tested(request, false, QString::fromStdString(host.error()), partitions);
            return;
        }
        QString message =
            tr("connected to %1 (%2)")
                .arg(QString::fromStdString(s->describe()), QString::fromStdString(host->out).trimmed());
        remote::SlurmClient slurm(*s);
        const Result<std::vector<remote::NodeRow>> nodes = slurm.nodes();
        if (!nodes.ok()) {
            emit tested(request, false,
                        message + tr("; sinfo failed: ") + QString::fromStdString(nodes.error()), partitions);
            return;
        }
        for (const remote::PartitionInfo& p : remote::summarize_partitions(*nodes)) {
            PartitionSummary out;
            out.name = QString::fromStdString(p.name);
            out.is_default = p.is_default;
            out.nodes = static_cast<int>(p.nodes);
            out.idle_nodes = static_cast<int>(p.idle_nodes);
            out.gpus = p.gpus;
            for (const remote::NodeRow& n : *nodes) {
                if (n.partition == p.name && !n.gpu_type.empty())
                    out.gpu_type = QString::fromStdString(n.gpu_type);
            }
            partitions << out;
        }
        // What the cluster offers (runtimes, accounting): the choices of the profile's environment.
        const Result<remote::ClusterSurvey> survey = remote::survey_cluster(*s, profile_.env_setup);
        if (survey.ok()) {
            for (const std::string& line : remote::describe_survey(*survey))
                message += QLatin1Char('\n') + QString::fromStdString(line);
        } else {
            message += QLatin1Char('\n') + tr("what the cluster offers could not be asked: ") +
                       QString::fromStdString(survey.error());
        }
        emit tested(request, true, message, partitions);
    }

public:  // not slots: called through functors (a RunConfig needs no meta-type)
    // Through the run service on this thread: the row (submitting), deploy, pre-flight, sbatch, and the row
    // again when Slurm has the job (pending) or refused it (failed), written on this thread's own connection
    // the moment it happens, so a crash of the app right after cannot lose the job.
    void submit(int request, const RunConfig& config, const QString& input_root, const QString& engine,
                const QString& run_id, const QString& store_path) {
        RemoteSubmission out;
        RunStore& runs = run_store(store_path);
        std::string store_problem = store_path.isEmpty() ? std::string() : history_error_;
        StoredRun row = begin_submission(runs, config, profile_.name, run_id.toStdString(), store_problem);
        out.run_id = QString::fromStdString(row.run_id);
        out.store_id = row.id;
        out.store_problem = QString::fromStdString(store_problem);
        remote::Session* s = session();
        if (s == nullptr) {
            fail_submission(runs, row, last_error_.toStdString());
            emit submitted(request, false, last_error_, out);
            return;
        }
        SubmitRequest submit;
        submit.config = config;
        submit.input_root = QFile::encodeName(input_root).toStdString();
        submit.engine_binary = QFile::encodeName(engine).toStdString();
        submit.engine_bundle = find_engine_bundle();
        submit.progress = [this, request](const std::string& line) {
            emit submit_progress(request, QString::fromStdString(line));
        };
        SlurmExecutor executor(*s, profile_, runs);
        const Result<Submission> sent = executor.submit(submit, std::move(row), store_problem);
        if (!sent.ok()) {
            emit submitted(request, false, QString::fromStdString(sent.error()), out);
            return;
        }
        out.store_id = sent->run.id;
        out.store_problem = QString::fromStdString(sent->store_problem);
        out.job_id = QString::fromStdString(sent->run.job_id);
        out.remote_dir = QString::fromStdString(sent->run.remote_dir);
        out.log_path = QString::fromStdString(sent->run.log_path);
        emit submitted(request, true, QString(), out);
    }

public slots:
    // The run service's watcher: one squeue for all of them; each answer is a job_state_known of this
    // request, and a running job on several nodes also gets its nodes' states.
    void job_states(int request, const QStringList& job_ids) {
        remote::Session* s = session();
        if (s == nullptr) {
            for (const QString& id : job_ids)
                emit job_state_known(request, false, id, QString(), last_error_);
            return;
        }
        std::vector<std::string> ids;
        for (const QString& id : job_ids)
            ids.push_back(id.toStdString());
        SlurmExecutor executor(*s, profile_, run_store({}));
        for (const JobAnswer& answer : executor.ask(ids, /*node_states=*/true)) {
            const QString job_id = QString::fromStdString(answer.job_id);
            if (!answer.info.ok()) {
                emit job_state_known(request, false, job_id, QString(),
                                     QString::fromStdString(answer.info.error()));
                continue;
            }
            const remote::JobInfo& job = *answer.info;
            emit job_state_known(request, true, job_id, QString::fromStdString(job.state),
                                 QString::fromStdString(job.node_list + job.reason_suffix()));
            if (!answer.nodes.empty()) emit job_nodes_known(job_id, answer.nodes);
        }
    }

    void cancel(int request, const QString& job_id) {
        remote::Session* s = session();
        if (s == nullptr) {
            emit cancelled(request, false, last_error_);
            return;
        }
        remote::SlurmClient slurm(*s);
        const Status st = slurm.cancel(job_id.toStdString());
        emit cancelled(request, st.ok(), QString::fromStdString(st.message()));
    }

    void start_process(int request, const QString& command) {
        remote::Session* s = session();
        if (s == nullptr) {
            emit process_started(request, false, last_error_, {});
            return;
        }
        Result<std::unique_ptr<remote::RemoteProcess>> process = s->start_process(command.toStdString());
        if (!process.ok()) {
            emit process_started(request, false, QString::fromStdString(process.error()), {});
            return;
        }
        emit process_started(request, true, {}, std::shared_ptr<remote::RemoteProcess>(std::move(*process)));
    }

    void list_dir(int request, const QString& path) {
        remote::Session* s = session();
        if (s == nullptr) {
            emit listed(request, false, path, {}, last_error_);
            return;
        }
        const Result<std::string> dir =
            remote::resolve_remote_path(*s, path.isEmpty() ? "." : path.toStdString());
        if (!dir.ok()) {
            emit listed(request, false, path, {}, QString::fromStdString(dir.error()));
            return;
        }
        // Over SFTP, not `ls` in a shell: names arrive as they are (newlines included) and nothing is run.
        const Result<std::vector<remote::RemoteDirEntry>> listing = s->list_directory(*dir);
        if (!listing.ok()) {
            emit listed(request, false, QString::fromStdString(*dir), {},
                        QString::fromStdString(listing.error()));
            return;
        }
        QStringList entries;
        for (const remote::RemoteDirEntry& entry : *listing) {
            bool folder = entry.type == remote::RemoteEntryType::kDirectory;
            if (entry.type == remote::RemoteEntryType::kSymlink) {  // e.g. ~/scratch -> /lustre/...
                const Result<remote::RemoteStat> target =
                    s->stat((*dir == "/" ? std::string() : *dir) + "/" + entry.name);
                folder = target.ok() && target->is_dir;
            }
            entries.push_back(QString::fromStdString(entry.name) +
                              (folder ? QStringLiteral("/") : QString()));
        }
        emit listed(request, true, QString::fromStdString(*dir), entries, QString());
    }

    void follow(int id, const QString& path, quint64 offset, int poll_ms) {
        remote::Session* s = session();
        if (s == nullptr) {
            FollowBatch b;
            b.follow_id = id;
            b.error = last_error_;
            emit follow_batch(b);
            return;
        }
        auto f = std::make_unique<Follow>();
        Follow* raw = f.get();
        f->follower = std::make_unique<remote::LogFollower>(
            std::make_unique<remote::SessionFileSource>(*s, path.toStdString()),
            [raw](MllogStreamItem&& item) { raw->items.push_back(std::move(item)); }, offset);
        f->timer = new QTimer(this);
        f->timer->setInterval(poll_ms);
        connect(f->timer, &QTimer::timeout, this, [this, id] { poll(id, false); });
        f->timer->start();
        follows_[id] = std::move(f);
        poll(id, false);
    }

    void finish_follow(int id) {
        poll(id, true);
        follows_.erase(id);
    }

    void stop_follow(int id) { follows_.erase(id); }

signals:
    void tested(int request, bool ok, const QString& message,
                const QList<slipway::app::PartitionSummary>& partitions);
    void submitted(int request, bool ok, const QString& error,
                   const slipway::app::RemoteSubmission& submission);
    void submit_progress(int request, const QString& line);
    void job_state_known(int request, bool ok, const QString& job_id, const QString& state,
                         const QString& detail);
    void job_nodes_known(const QString& job_id, const std::vector<slipway::remote::NodeState>& nodes);
    void cancelled(int request, bool ok, const QString& message);
    void listed(int request, bool ok, const QString& path, const QStringList& entries, const QString& error);
    void follow_batch(const slipway::app::FollowBatch& batch);
    void process_started(int request, bool ok, const QString& error,
                         const std::shared_ptr<slipway::remote::RemoteProcess>& process);
    void connection_changed(bool connected, const QString& message);

private:
    struct Follow {
        std::unique_ptr<remote::LogFollower> follower;
        std::vector<MllogStreamItem> items;
        QTimer* timer = nullptr;
        ~Follow() { delete timer; }
    };

    // The session, opened (or reopened) on demand; null with last_error_ set when that failed.
    remote::Session* session() {
        if (session_ && session_->is_connected()) return session_.get();
        if (session_) {
            const Status s = session_->reconnect();
            emit connection_changed(s.ok(),
                                    QString::fromStdString(s.ok() ? session_->describe() : s.message()));
            if (s.ok()) return session_.get();
            last_error_ = QString::fromStdString(s.message());
            return nullptr;
        }
        Result<std::unique_ptr<remote::Session>> opened =
            connect_ ? connect_(profile_, callbacks_)
                     : remote::connect_ssh(connect_options(profile_), callbacks_);
        if (!opened.ok()) {
            last_error_ = QString::fromStdString(opened.error());
            emit connection_changed(false, last_error_);
            return nullptr;
        }
        session_ = std::move(*opened);
        emit connection_changed(true, QString::fromStdString(session_->describe()));
        return session_.get();
    }

    void poll(int id, bool finishing) {
        const auto it = follows_.find(id);
        if (it == follows_.end()) return;
        Follow& f = *it->second;
        FollowBatch out;
        out.follow_id = id;
        out.finished = finishing;
        const Result<remote::PollResult> r = f.follower->poll();
        if (!r.ok()) {
            out.error = QString::fromStdString(r.error());
            emit connection_changed(false, out.error);
        } else {
            out.reset = r->restarted;
            out.missing = !r->file_exists;
        }
        if (finishing) f.follower->finish();
        out.offset = f.follower->offset();
        const size_t n = f.items.size();
        const size_t first_text =
            n > FollowService::kMaxLinesPerBatch ? n - FollowService::kMaxLinesPerBatch : 0;
        out.lines_skipped = static_cast<qint64>(first_text);
        for (size_t i = 0; i < n; ++i) {
            MllogStreamItem& item = f.items[i];
            if (i >= first_text) out.lines << QString::fromStdString(item.text);
            if (item.kind == MllogLineKind::kEvent) out.events.push_back(std::move(item.event));
            if (item.kind == MllogLineKind::kBadMllog) ++out.bad_lines;
        }
        f.items.clear();
        if (n > 0 || out.reset || finishing || !out.error.isEmpty()) emit follow_batch(out);
    }

    // The run history at `path` on this thread's own connection, opened on first use; without a path (or
    // when it cannot be opened: history_error_ says why) a store that records nothing.
    RunStore& run_store(const QString& store_path) {
        if (store_path.isEmpty()) return no_store_;
        const std::string path = store_path.toStdString();
        if (!history_ || history_->path() != path) {
            runs_.reset();
            Result<std::unique_ptr<RunHistory>> opened = RunHistory::open(path);
            history_ = opened.ok() ? std::move(*opened) : nullptr;
            history_error_ = opened.ok() ? std::string() : "cannot open the run history: " + opened.error();
            if (history_) runs_ = std::make_unique<HistoryRunStore>(*history_);
        }
        return runs_ ? static_cast<RunStore&>(*runs_) : no_store_;
    }

    remote::ClusterProfile profile_;
    remote::SessionCallbacks callbacks_;
    ClusterSession::Connector connect_;
    std::unique_ptr<RunHistory> history_;
    std::unique_ptr<HistoryRunStore> runs_;
    std::string history_error_;  // why the history at the store path could not be opened
    NoRunStore no_store_;
    std::unique_ptr<remote::Session> session_;
    QString last_error_;
    std::map<int, std::unique_ptr<Follow>> follows_;
};

ClusterSession::ClusterSession(remote::ClusterProfile profile, remote::SessionCallbacks callbacks,
                               Connector connector, QObject* parent)
    : QObject(parent),
      profile_(profile),
      worker_(new ClusterWorker(std::move(profile), std::move(callbacks), std::move(connector))) {
    qRegisterMetaType<slipway::app::PartitionSummary>();
    qRegisterMetaType<QList<slipway::app::PartitionSummary>>();
    qRegisterMetaType<slipway::app::RemoteSubmission>();
    qRegisterMetaType<slipway::app::FollowBatch>();
    qRegisterMetaType<std::shared_ptr<slipway::remote::RemoteProcess>>();
    qRegisterMetaType<std::vector<slipway::remote::NodeState>>();
    worker_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
    connect(worker_, &ClusterWorker::tested, this, &ClusterSession::tested);
    connect(worker_, &ClusterWorker::submitted, this, &ClusterSession::submitted);
    connect(worker_, &ClusterWorker::submit_progress, this, &ClusterSession::submit_progress);
    connect(worker_, &ClusterWorker::job_state_known, this, &ClusterSession::job_state_known);
    connect(worker_, &ClusterWorker::job_nodes_known, this, &ClusterSession::job_nodes_known);
    connect(worker_, &ClusterWorker::cancelled, this, &ClusterSession::cancelled);
    connect(worker_, &ClusterWorker::listed, this, &ClusterSession::listed);
    connect(worker_, &ClusterWorker::follow_batch, this, &ClusterSession::follow_batch);
    connect(worker_, &ClusterWorker::process_started, this, &ClusterSession::process_started);
    connect(worker_, &ClusterWorker::connection_changed, this, &ClusterSession::connection_changed);
    thread_.setObjectName(QStringLiteral("slipway-cluster"));
    thread_.start();
}

ClusterSession::~ClusterSession() {
    thread_.quit();
    thread_.wait();
}

int ClusterSession::test() {
    const int id = next_request_++;
    QMetaObject::invokeMethod(worker_, "test", Qt::QueuedConnection, Q_ARG(int, id));
    return id;
}

int ClusterSession::submit(const RunConfig& config, const QString& input_root, const QString& engine_binary,
                           const QString& run_id) {
    const int id = next_request_++;
    ClusterWorker* worker = worker_;
    QMetaObject::invokeMethod(
        worker_,
        [worker, id, config, input_root, engine_binary, run_id, store = store_path_] {
            worker->submit(id, config, input_root, engine_binary, run_id, store);
        },
        Qt::QueuedConnection);
    return id;
}

int ClusterSession::job_state(const QString& job_id) {
    return job_states({job_id});
}

int ClusterSession::job_states(const QStringList& job_ids) {
    const int id = next_request_++;
    QMetaObject::invokeMethod(worker_, "job_states", Qt::QueuedConnection, Q_ARG(int, id),
                              Q_ARG(QStringList, job_ids));
    return id;
}

int ClusterSession::cancel(const QString& job_id) {
    const int id = next_request_++;
    QMetaObject::invokeMethod(worker_, "cancel", Qt::QueuedConnection, Q_ARG(int, id),
                              Q_ARG(QString, job_id));
    return id;
}

int ClusterSession::start_process(const QString& command) {
    const int id = next_request_++;
    QMetaObject::invokeMethod(worker_, "start_process", Qt::QueuedConnection, Q_ARG(int, id),
                              Q_ARG(QString, command));
    return id;
}

int ClusterSession::list_dir(const QString& path) {
    const int id = next_request_++;
    QMetaObject::invokeMethod(worker_, "list_dir", Qt::QueuedConnection, Q_ARG(int, id),
                              Q_ARG(QString, path));
    return id;
}

int ClusterSession::follow(const QString& path, quint64 offset, int poll_ms) {
    const int id = next_request_++;
    QMetaObject::invokeMethod(worker_, "follow", Qt::QueuedConnection, Q_ARG(int, id), Q_ARG(QString, path),
                              Q_ARG(quint64, offset), Q_ARG(int, poll_ms));
    return id;
}

void ClusterSession::finish_follow(int follow_id) {
    QMetaObject::invokeMethod(worker_, "finish_follow", Qt::QueuedConnection, Q_ARG(int, follow_id));
}

void ClusterSession::stop_follow(int follow_id) {
    QMetaObject::invokeMethod(worker_, "stop_follow", Qt::QueuedConnection, Q_ARG(int, follow_id));
}

}  // namespace slipway::app

#include "cluster_session.moc"
