// The clusters page: "This computer" (the embedded default, which runs slipway-engine locally) and the
// cluster profiles of clusters.json: add, edit, remove, and test a connection (host key, passphrase and
// 2FA asked in dialogs; the login node's hostname and its Slurm partitions from sinfo shown), and the
// cluster's last health report (Health view) with Run doctor, which it runs as a DoctorJob (one at a time: a
// second Run cancels the first; a job of a cluster no longer shown goes on, saves its report, and shows again
// when its cluster does). Beside it, the first-run guide (EnginePanel): the environment its runs use, Build
// engine as an EngineBuildJob with the build log streamed, and Run the demo (asked of the window). Its
// sessions are the window's ClusterSessions (one per profile, shared with the run tracker); the page tells it
// when profiles change.
#pragma once

#include <QWidget>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "clusters/cluster_session.h"
#include "clusters/environment_choice.h"
#include "remote/slurm/cluster_profile.h"
#include "runs/cluster_sessions.h"

class QLabel;
class QListWidget;
class QPushButton;
class QTableWidget;

namespace slipway::app {

class DoctorJob;
class EngineBuildJob;
class EnginePanel;
class HealthView;

class ClustersPage : public QWidget {
    Q_OBJECT

public:
    // `sessions` is not owned and must outlive the page.
    ClustersPage(ClusterSessions* sessions, const QString& resource_root, const QString& runs_dir,
                 QWidget* parent = nullptr);
    ~ClustersPage() override;

    // Re-reads clusters.json and what the local profile depends on.
    void refresh();
    const std::vector<remote::ClusterProfile>& profiles() const { return profiles_; }
    // The session of a profile (made on first use); null for an unknown name.
    ClusterSession* session(const std::string& profile_name) { return sessions_->session(profile_name); }
    // Replaces how sessions connect (tests use a FakeSession); applies to sessions made afterwards.
    void set_connector(ClusterSession::Connector connector) {
        sessions_->set_connector(std::move(connector));
    }
    // How sessions connect (empty: libssh); image and doctor jobs open their own connection the same way.
    const ClusterSession::Connector& connector() const { return sessions_->connector(); }

    Status add_profile(const remote::ClusterProfile& profile);  // or replace by name
    Status remove_profile(const std::string& name);
    // Tests the selected profile's connection; the result shows in the details (and tested()).
    void test_selected();
    void select(const QString& name);

    QListWidget* list() const { return list_; }
    QString details_text() const;
    // "a100 (default): 2 nodes, 1 idle, 16 GPUs a100; cpu: ..." from the last test; "" before one.
    QString partition_summary(const std::string& profile) const;
    QTableWidget* partitions_table() const { return partitions_; }
    // The selected cluster's last `slipway doctor` report.
    HealthView* health_view() const { return health_; }
    // Runs the doctor on the selected cluster with the Health view's options (its Run button); the running
    // or last doctor job, null before one.
    void run_doctor();
    DoctorJob* doctor_job() const { return doctor_; }

    // The selected cluster's first-run guide.
    EnginePanel* engine_panel() const { return engine_; }
    // Builds (or finds) the engine for the guide's environment on the selected cluster, from the bundle this
    // app carries, as the demo run would use it (one build at a time: a second one cancels the first); the
    // running or last build job, null before one.
    void build_engine();
    EngineBuildJob* engine_job() const { return engine_job_; }

signals:
    void profiles_changed(const std::vector<remote::ClusterProfile>& profiles);
    void partitions_known(const QString& profile, const QStringList& partitions);
    void tested(const QString& profile, bool ok, const QString& message);
    // The guide's "Run the demo on this cluster": the window submits the demo preset in `choice`.
    void demo_requested(const QString& profile, const EnvironmentChoice& choice);

private:
    void show_details();
    void edit_selected();
    void on_session_created(const QString& profile, ClusterSession* session);

    QString resource_root_;
    QString runs_dir_;
    std::vector<remote::ClusterProfile> profiles_;
    ClusterSessions* sessions_;
    std::map<std::string, QString> last_test_;  // profile -> what its last test said
    std::map<std::string, QList<PartitionSummary>> partitions_by_profile_;
    QListWidget* list_;
    QLabel* details_;
    QTableWidget* partitions_;
    HealthView* health_;
    EnginePanel* engine_;
    QPushButton* edit_;
    QPushButton* remove_;
    QPushButton* test_;
    DoctorJob* doctor_ = nullptr;           // the current doctor; a replaced one deletes itself when it ends
    QStringList doctor_log_;                // its progress, shown again when its cluster is
    EngineBuildJob* engine_job_ = nullptr;  // the current build, replaced as the doctor is
    QStringList engine_log_;                // its output, shown again when its cluster is
};

}  // namespace slipway::app
