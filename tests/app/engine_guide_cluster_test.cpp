// The Clusters page's first-run guide on the local test cluster (label cluster-engine; run by
// engine_guide_cluster_test.sh, which makes the image): a new apptainer profile that builds its engine is
// added and tested, Build engine runs a real Slurm build job in the image with its log streamed into the
// page, and Run the demo on this cluster submits the demo there, whose first train_loss point is plotted.
// It prints the time from the empty profile to that point. A second window in Russian finds the same engine
// (no build) with the image it remembered. Screenshots of both go to SLIPWAY_GUIDE_SCREENSHOTS.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTranslator>

#include <cstdio>

#include "clusters/engine_build_job.h"
#include "clusters/engine_panel.h"
#include "clusters_page.h"
#include "editor/run_editor.h"
#include "main_window.h"
#include "monitor/monitor_widget.h"
#include "runs/run_tracker.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

struct Guide {
    QString image, standin, workdir, screenshots;
};

Guide guide_from_environment() {
    return {qEnvironmentVariable("SLIPWAY_GUIDE_IMAGE"), qEnvironmentVariable("SLIPWAY_GUIDE_STANDIN"),
            qEnvironmentVariable("SLIPWAY_GUIDE_WORKDIR"), qEnvironmentVariable("SLIPWAY_GUIDE_SCREENSHOTS")};
}

void save_screenshot(MainWindow& window, const QString& dir, const QString& name) {
    window.resize(1280, 860);
    QCoreApplication::processEvents();
    EXPECT_TRUE(window.grab().save(dir + QLatin1Char('/') + name)) << name.toStdString();
}

// Tests the selected cluster's connection and waits for its answer.
void test_connection(ClustersPage* page) {
    bool answered = false, ok = false;
    QString said;
    const QMetaObject::Connection c =
        QObject::connect(page, &ClustersPage::tested, [&](const QString&, bool good, const QString& message) {
            answered = true;
            ok = good;
            said = message;
        });
    page->test_selected();
    ASSERT_TRUE(testing_util::wait_until([&] { return answered; }, 60'000)) << "no answer to the test";
    QObject::disconnect(c);
    ASSERT_TRUE(ok) << said.toStdString();
}

// Presses Build engine and waits for its job to end; the job's result line.
QString build_engine(ClustersPage* page, int timeout_ms) {
    EnginePanel* panel = page->engine_panel();
    EXPECT_TRUE(panel->build_button()->isEnabled());
    panel->build_button()->click();
    if (page->engine_job() == nullptr)
        return QStringLiteral("no build job started: ") + panel->result_label()->text();
    EXPECT_TRUE(panel->cancel_button()->isEnabled());
    EXPECT_TRUE(testing_util::wait_until([&] { return !page->engine_job()->running(); }, timeout_ms));
    return panel->result_label()->text();
}

TEST(EngineGuide, FromAnEmptyProfileToTheDemosFirstPlottedPoint) {
    const Guide guide = guide_from_environment();
    if (guide.image.isEmpty()) GTEST_SKIP() << "run by engine_guide_cluster_test.sh, which makes the image";
    std::map<QString, QString> env = testing_util::use_local_cluster(QString());
    if (env.empty()) GTEST_SKIP() << "no local cluster (SLIPWAY_CLUSTER_ENV)";
    testing_util::IsolatedHome home;
    QElapsedTimer from_zero;
    from_zero.start();

    MainWindow window(home.path() + "/history.sqlite");
    window.show();
    ClustersPage* page = window.clusters_page();
    window.show_page(MainWindow::kClustersPage);
    // What the Add dialog's OK stores: host, user, key, the runtime, the engine built there, its setup line.
    remote::ClusterProfile profile = testing_util::local_cluster_profile(env, guide.workdir);
    profile.name = "guide";
    profile.container = remote::ContainerMode::kApptainer;
    profile.engine_source = remote::EngineSource::kBuild;
    profile.env_setup = {"export PATH=" + guide.standin.toStdString() + ":$PATH"};
    ASSERT_TRUE(page->add_profile(profile).ok());
    ASSERT_NO_FATAL_FAILURE(test_connection(page));
    // The survey ran the profile's setup line first, so it finds the runtime that line brings.
    EXPECT_TRUE(page->details_text().contains(QStringLiteral("runtimes: apptainer")))
        << page->details_text().toStdString();

    EnginePanel* panel = page->engine_panel();
    ASSERT_TRUE(panel->isVisibleTo(page));
    ASSERT_TRUE(panel->image_edit()->isVisibleTo(panel)) << "an apptainer cluster's runs need an image";
    EXPECT_EQ(panel->partition_box()->currentText(), env["SLIPWAY_SLURM_PARTITION"]);
    EXPECT_EQ(panel->gpus_box()->value(), 0) << "the local cluster has no GPUs";
    panel->image_edit()->setText(guide.image);
    QElapsedTimer build_timer;
    build_timer.start();
    const QString built = build_engine(page, 1'800'000);
    const qint64 build_s = build_timer.elapsed() / 1000;
    const QString log = panel->output_view()->toPlainText();
    ASSERT_TRUE(built.contains(QStringLiteral("Engine built in"))) << built.toStdString() << "\n"
                                                                   << log.right(3000).toStdString();
    // The build job's own log, streamed while it ran: build.sh's first line names the image's torch.
    EXPECT_TRUE(log.contains(QStringLiteral("build job: RUNNING"))) << log.toStdString();
    EXPECT_TRUE(log.contains(QStringLiteral("build.sh: torch 2.6"))) << log.right(3000).toStdString();
    ASSERT_TRUE(page->engine_job()->place().has_value());
    const std::string engine = page->engine_job()->place()->engine;
    if (!guide.screenshots.isEmpty())
        save_screenshot(window, guide.screenshots, "clusters-engine-built-en.png");

    int key = -1;
    QObject::connect(window.tracker(), &RunTracker::run_changed, [&](int k) {
        if (key < 0) key = k;
    });
    ASSERT_TRUE(panel->demo_button()->isEnabled());
    panel->demo_button()->click();
    ASSERT_TRUE(testing_util::wait_until([&] { return key >= 0; }, 30'000)) << "the demo was not submitted";
    EXPECT_EQ(window.current_page(), MainWindow::kMonitorPage);
    const TrackedRun* run = window.monitor()->run(key);
    ASSERT_NE(run, nullptr);
    const bool plotted =
        testing_util::wait_until([&] { return !run->metrics.points(Metric::kTrainLoss).empty(); }, 900'000);
    const qint64 first_point_s = from_zero.elapsed() / 1000;
    ASSERT_TRUE(plotted) << window.monitor()->log_view()->toPlainText().right(3000).toStdString();
    std::printf(
        "engine_guide: from an empty profile to the demo's first plotted point in %lld s (the engine's "
        "build job %lld s)\n",
        static_cast<long long>(first_point_s), static_cast<long long>(build_s));
    // The demo ran the engine the guide built, in the image.
    ASSERT_TRUE(testing_util::wait_until(
        [&] {
            return window.monitor()->log_view()->toPlainText().contains(
                QStringLiteral("engine: libtorch 2.6"));
        },
        60'000))
        << window.monitor()->log_view()->toPlainText().right(3000).toStdString();
    EXPECT_EQ(window.editor()->document().config().slurm.container_image, guide.image.toStdString());
    ASSERT_TRUE(testing_util::wait_until([&] { return run->metrics.points(Metric::kTrainLoss).size() >= 3; },
                                         300'000));
    if (!guide.screenshots.isEmpty())
        save_screenshot(window, guide.screenshots, "monitor-demo-on-cluster-en.png");
    window.cancel_run(key);
    ASSERT_TRUE(testing_util::wait_until([&] { return is_terminal(run->state); }, 120'000));

    // Russian, a new window: the same cluster, the image it remembered, the engine found without a build.
    QTranslator ru;
    ASSERT_TRUE(ru.load(QStringLiteral("slipway_ru"), QStringLiteral(":/i18n")));
    QCoreApplication::installTranslator(&ru);
    {
        MainWindow russian(home.path() + "/history-ru.sqlite");
        russian.show();
        russian.show_page(MainWindow::kClustersPage);
        ClustersPage* ru_page = russian.clusters_page();
        ru_page->select(QStringLiteral("guide"));
        ASSERT_NO_FATAL_FAILURE(test_connection(ru_page));
        EXPECT_EQ(ru_page->engine_panel()->image_edit()->text(), guide.image);
        const QString found = build_engine(ru_page, 120'000);
        EXPECT_TRUE(found.contains(QString::fromStdString(engine))) << found.toStdString();
        EXPECT_FALSE(
            ru_page->engine_panel()->output_view()->toPlainText().contains(QStringLiteral("build job")));
        if (!guide.screenshots.isEmpty())
            save_screenshot(russian, guide.screenshots, "clusters-engine-found-ru.png");
    }
    QCoreApplication::removeTranslator(&ru);
    qunsetenv("SLIPWAY_ENGINE");
    qunsetenv("SLIPWAY_KNOWN_HOSTS");
}

}  // namespace
}  // namespace slipway::app
