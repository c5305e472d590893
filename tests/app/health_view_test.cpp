// GUI test (offscreen) of the Clusters page's Health view: a saved `slipway doctor` report (judged from the
// real-shaped job output in tests/data/doctor) shows one row per node with its verdict in colour, busbw
// against the expected figure and the reasons, and names the nodes submit --exclude-bad leaves out; a
// cluster with no report says how to make one.
#include <gtest/gtest.h>

#include <QFile>
#include <QListWidget>
#include <QTableWidget>

#include "clusters/health_view.h"
#include "clusters_page.h"
#include "main_window.h"
#include "remote/slurm/doctor_report.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

TEST(HealthView, ShowsTheLastDoctorReport) {
    testing_util::IsolatedHome home;
    MainWindow window(home.path() + "/history.sqlite");
    ClustersPage* page = window.clusters_page();
    for (const char* name : {"hpc", "fresh"}) {
        remote::ClusterProfile p;
        p.name = name;
        p.host = "login.example.org";
        ASSERT_TRUE(page->add_profile(p).ok());
    }
    QFile output(QString::fromUtf8(test_paths::source_dir("/tests/data/doctor/job-two-nodes.out")));
    ASSERT_TRUE(output.open(QIODevice::ReadOnly));
    remote::DoctorReport report = remote::judge_doctor_output(output.readAll().toStdString(), {});
    report.cluster = "hpc";
    report.created = "2026-11-23T15:00:00Z";
    ASSERT_TRUE(remote::DoctorReportStore().save(report).ok());

    page->select(QStringLiteral("hpc"));
    HealthView* health = page->health_view();
    ASSERT_TRUE(health->isVisibleTo(page));
    QTableWidget* table = health->table();
    ASSERT_EQ(table->rowCount(), 3);
    EXPECT_EQ(table->item(0, 0)->text(), "n01");
    EXPECT_EQ(table->item(0, 1)->text(), "ok");
    EXPECT_EQ(table->item(0, 2)->text(), "1.26");
    EXPECT_EQ(table->item(0, 4)->text(), "not applicable: no nvidia-smi");
    EXPECT_EQ(table->item(1, 1)->text(), "slow");
    EXPECT_TRUE(table->item(1, 6)->text().contains("intra-node busbw 0.06 GB/s"));
    EXPECT_EQ(table->item(2, 1)->text(), "failed");
    EXPECT_EQ(table->item(2, 6)->text(), "no report");
    EXPECT_NE(table->item(1, 1)->foreground().color(), table->item(0, 1)->foreground().color());
    EXPECT_TRUE(health->summary_text().contains("Exclude: n02, n03")) << health->summary_text().toStdString();
    EXPECT_TRUE(health->summary_text().contains("Job 4711"));

    page->select(QStringLiteral("fresh"));
    EXPECT_EQ(health->table()->rowCount(), 0);
    EXPECT_TRUE(health->summary_text().contains("slipway doctor fresh"));
    page->select(QStringLiteral("This computer"));
    EXPECT_FALSE(health->isVisibleTo(page));
}

}  // namespace
}  // namespace slipway::app
