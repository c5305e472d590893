// The main window: a page list (Runs, Editor, Monitor, Clusters, Chat) beside the pages, the menus and their
// shortcuts, settings and window state kept across restarts (QSettings), recent run configs, and
// notifications. It owns the run store, the cluster sessions and the RunTracker, which drives every run's
// life; the window forwards what the user asks for (submit, cancel, open, resume) and shows the answers.
#pragma once

#include <QMainWindow>
#include <QMap>
#include <QString>
#include <QStringList>

#include <memory>

#include "chat/chat_session.h"
#include "clusters/environment_choice.h"
#include "contract/status.h"
#include "core/follow_service.h"
#include "core/run_watch.h"
#include "runs/cluster_sessions.h"

class QListWidget;
class QMenu;
class QStackedWidget;
class QSystemTrayIcon;

namespace slipway::app {

class AdaptPage;
class ChatPage;
class ChatTransport;
class ClustersPage;
class GgufExport;
class ImageJob;
enum class ImageAction;
class MonitorWidget;
class RunEditor;
class RunHistory;
struct StoredRun;
class RunsModel;
class RunsPage;
class RunTracker;

class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    enum Page { kRunsPage = 0, kEditorPage, kMonitorPage, kClustersPage, kChatPage, kAdaptPage };

    // `history_path` empty: the XDG default. The history is optional: without it runs are not kept.
    explicit MainWindow(const QString& history_path = QString(), QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens a log file in the monitor (added to what is shown); the error names the file.
    Status open_log(const QString& path);
    // Follows a log that is being written (e.g. the demo's mllog.txt started from a script).
    void follow_log(const QString& path);
    Status open_run_config(const QString& path);

    // Submits the editor's run to "This computer". `overrides` are engine flags (tests shorten runs).
    // Returns the monitor's key of the new run.
    Result<int> submit_local(const QStringList& overrides = {});
    // Submits the editor's run to a cluster profile: deploy + sbatch on the cluster's session (a worker
    // thread), then its slurm-N.out followed into the monitor and history and its job state polled.
    Result<int> submit_remote(const QString& profile);
    // The Clusters page's "Run the demo on this cluster": the demo preset in the editor, put into `choice`'s
    // environment (the one the page's engine build used), submitted to `profile`.
    Result<int> submit_demo(const QString& profile, const EnvironmentChoice& choice);
    // Where the editor's Submit button sends the run.
    Result<int> submit_current();
    void cancel_run(int monitor_key);

    // Follows a log on a cluster (a slurm-N.out of a job started elsewhere, a finished run's log) in the
    // monitor, over the cluster's session.
    Result<int> open_remote_log(const QString& profile, const QString& path);

    // Builds the editor's image on its target cluster, or imports it to the run's .sqsh (the Container
    // page's buttons): an ImageJob on a worker thread, its output streamed into the page.
    Status start_image_task(ImageAction action, const QString& image);
    ImageJob* image_job() const { return image_job_; }

    // Loads a stored run into the monitor / follows its log again from the stored offset.
    Result<int> show_history_run(int64_t run_id);
    Result<int> resume_history_run(int64_t run_id);
    // Overlays stored runs in the monitor with every other run hidden (the Runs page's Compare selected).
    Status compare_runs(const QList<qint64>& run_ids);

    void show_page(Page page);
    Page current_page() const;

    // Export GGUF... (Runs and Chat pages): asks where and which type, then runs `export gguf` on this
    // computer; the status bar says how it went. A model that is not here is refused, naming it.
    Status export_gguf(const ChatTarget& target, const QString& suggested_name);
    GgufExport* gguf_export() const { return gguf_export_; }

    MonitorWidget* monitor() const { return monitor_; }
    RunEditor* editor() const { return editor_; }
    RunsPage* runs_page() const { return runs_; }
    ClustersPage* clusters_page() const { return clusters_; }
    ChatPage* chat_page() const { return chat_; }
    AdaptPage* adapt_page() const { return adapt_; }
    RunHistory* history() const { return history_.get(); }
    RunTracker* tracker() const { return tracker_.get(); }
    QStringList recent_configs() const { return recent_; }

signals:
    // A run finished, failed, reached its target or stalled (also shown as a tray message when there is
    // a system tray, and always in the status bar).
    void notified(const QString& title, const QString& message);
    void local_run_finished(int monitor_key, int exit_code);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    // The constructor's parts: the run history (what went wrong, "" when it opened), the pages in their
    // order, and each page's wiring to the window.
    QString open_history(const QString& history_path);
    void make_pages(const QString& engine_binary);
    void wire_adaptation_page();
    void wire_editor_and_monitor();
    void wire_runs_page();
    void wire_gguf_export();  // Export GGUF... of the Runs and Chat pages
    void wire_clusters_page();
    void build_menus();
    // The training steps of the pipeline the Adaptation page runs, in the monitor as they start (one that
    // ended between two looks is read once).
    // Where a chat's generator runs: this computer for local runs and model folders (run null), srun on
    // the run's cluster over its session for cluster runs.
    Result<ChatTransport*> chat_transport(const StoredRun* run);
    // View > Language: System / English / Русский, saved for the next start.
    void build_language_menu(QMenu* menu);
    void restore_settings();
    void save_settings() const;
    void add_recent(const QString& path);
    void rebuild_recent_menu();
    void notify(const QString& run_name, const RunAlert& alert);
    void connect_tracker();
    void choose_log();
    void choose_remote_log();
    void choose_config();
    void save_config_as();
    void import_script();
    void export_plot(bool png);
    QString runs_dir() const;

    QString resource_root_;
    // Destroyed in reverse order, after the pages (~MainWindow deletes them first): the tracker stops its
    // follows and processes while the store and the sessions still exist.
    std::unique_ptr<RunHistory> history_;
    FollowService follow_;
    ClusterSessions sessions_;
    std::unique_ptr<RunTracker> tracker_;
    std::unique_ptr<RunsModel> runs_model_;  // the pages' view of the tracker and the store: destroyed first
    QListWidget* nav_;
    QStackedWidget* stack_;
    RunsPage* runs_;
    RunEditor* editor_;
    MonitorWidget* monitor_;
    ClustersPage* clusters_;
    ChatPage* chat_;
    AdaptPage* adapt_;
    QMenu* recent_menu_ = nullptr;
    QStringList recent_;
    QSystemTrayIcon* tray_ = nullptr;
    ImageJob* image_job_ = nullptr;  // the last image build or import
    GgufExport* gguf_export_ = nullptr;
};

}  // namespace slipway::app
