// Run doctor pressed in the offscreen window against the local test cluster's real sshd and Slurm (label
// cluster): the app connects on a worker thread, deploys the engine, submits the real doctor job (Gloo
// bench-comm, rendezvous probe, no nvidia-smi), streams its progress into the Health view and ends with
// localhost "ok" in the saved report. Skipped without the cluster or the engine.
#include <gtest/gtest.h>
#include <unistd.h>

#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>

#include "clusters/doctor_job.h"
#include "clusters/health_view.h"
#include "clusters_page.h"
#include "main_window.h"
#include "test_util.h"

namespace slipway::app {
namespace {

TEST(DoctorCluster, RunDoctorFromTheWindow) {
    const QString env_file = qEnvironmentVariable("SLIPWAY_CLUSTER_ENV");
    if (env_file.isEmpty() || !QFileInfo::exists(env_file))
        GTEST_SKIP() << "no local cluster (SLIPWAY_CLUSTER_ENV)";
    const QString engine = QStringLiteral(SLIPWAY_ENGINE_BIN);
    if (!QFileInfo(engine).isExecutable()) GTEST_SKIP() << "no slipway-engine at " << engine.toStdString();
    std::map<QString, QString> env = testing_util::read_env_file(env_file);
    testing_util::IsolatedHome home;
    qputenv("SLIPWAY_ENGINE", engine.toUtf8());
    qputenv("SLIPWAY_KNOWN_HOSTS", env["SLIPWAY_SSH_KNOWN_HOSTS"].toUtf8());
    const QString workdir = env["SLIPWAY_REMOTE_DIR"] + QStringLiteral("/gui-doctor-%1").arg(::getpid());

    MainWindow window(home.path() + "/history.sqlite");
    window.show();
    remote::ClusterProfile p;
    p.name = "local-slurm";
    p.host = env["SLIPWAY_SSH_HOST"].toStdString();
    p.port = env["SLIPWAY_SSH_PORT"].toInt();
    p.user = env["SLIPWAY_SSH_USER"].toStdString();
    p.identity_file = env["SLIPWAY_SSH_KEY"].toStdString();
    p.remote_workdir = workdir.toStdString();
    p.default_partition = env["SLIPWAY_SLURM_PARTITION"].toStdString();
    ClustersPage* page = window.clusters_page();
    ASSERT_TRUE(page->add_profile(p).ok());
    HealthView* health = page->health_view();
    health->deadline_box()->setValue(300);  // a bound for the test; the job takes seconds

    health->run_button()->click();
    ASSERT_NE(page->doctor_job(), nullptr);
    int batches = 0;
    QObject::connect(page->doctor_job(), &ClusterJob::output, [&batches] { ++batches; });
    EXPECT_TRUE(testing_util::wait_until([&] { return !page->doctor_job()->running(); }, 300'000));
    const QString output = health->output_view()->toPlainText();
    const QString result = health->result_label()->text();
    QDir(workdir).removeRecursively();
    EXPECT_GE(batches, 2) << "the progress did not stream\n" << output.toStdString();
    EXPECT_TRUE(output.contains("submitted doctor job")) << output.toStdString();
    EXPECT_TRUE(result.startsWith("Every node ok")) << result.toStdString() << "\n" << output.toStdString();
    ASSERT_EQ(health->table()->rowCount(), 1);
    EXPECT_EQ(health->table()->item(0, 0)->text(), "localhost");
    EXPECT_EQ(health->table()->item(0, 1)->text(), "ok") << health->table()->item(0, 6)->text().toStdString();
    EXPECT_TRUE(remote::DoctorReportStore().load("local-slurm").ok());
}

}  // namespace
}  // namespace slipway::app
