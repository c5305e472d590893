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
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

TEST(DoctorCluster, RunDoctorFromTheWindow) {
    const QString engine = QString::fromUtf8(test_paths::engine_bin());
    if (!QFileInfo(engine).isExecutable()) GTEST_SKIP() << "no slipway-engine at " << engine.toStdString();
    std::map<QString, QString> env = testing_util::use_local_cluster(engine);
    if (env.empty()) GTEST_SKIP() << "no local cluster (SLIPWAY_CLUSTER_ENV)";
    testing_util::IsolatedHome home;
    const QString workdir = env["SLIPWAY_REMOTE_DIR"] + QStringLiteral("/gui-doctor-%1").arg(::getpid());

    MainWindow window(home.path() + "/history.sqlite");
    window.show();
    const remote::ClusterProfile p = testing_util::local_cluster_profile(env, workdir);
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
    EXPECT_EQ(health->table()->item(0, 1)->text().toStdString(), "ok")
        << health->table()->item(0, 6)->text().toStdString() << "\n"
        << health->summary_text().toStdString();
    EXPECT_TRUE(remote::DoctorReportStore().load("local-slurm").ok());
}

}  // namespace
}  // namespace slipway::app
