// The Container page's Build image and Import to .sqsh against the local test cluster's real sshd (label
// cluster): the app connects on a worker thread, uploads the Dockerfile and starts the detached job as
// the test user, and the job's output streams into the page while it runs. docker and enroot are
// stand-in scripts in the profile's <workdir>/bin, which the job puts first on PATH (this host has no
// Docker daemon or enroot). Skipped without the cluster.
#include <gtest/gtest.h>
#include <unistd.h>

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>

#include "clusters_page.h"
#include "editor/container_panel.h"
#include "editor/run_editor.h"
#include "images/image_job.h"
#include "main_window.h"
#include "test_util.h"

namespace slipway::app {
namespace {

// A stand-in for docker: says what it was given, takes a few seconds (so its output arrives in several
// polls), fails for tags that contain "fail".
constexpr const char* kFakeDocker = R"sh(#!/bin/sh
echo "fake docker $*"
echo "Dockerfile: $(grep -c '' Dockerfile) lines, $(head -n 1 Dockerfile)"
case "$5" in *fail*) echo "ERROR: failed to solve: a planned failure"; exit 1 ;; esac
for step in 1 2 3 4 5; do echo "Step $step/5"; sleep 0.5; done
echo "Successfully tagged $5"
)sh";

// A stand-in for enroot: `enroot import -o SQSH dockerd://IMAGE` writes a small SQSH.
constexpr const char* kFakeEnroot = R"sh(#!/bin/sh
echo "fake enroot $*"
[ "$1" = import ] && [ "$2" = -o ] && echo "squashfs of $4" > "$3"
echo "[INFO] Creating squashfs filesystem..."
)sh";

class ImageCluster : public ::testing::Test {
protected:
    void SetUp() override {
        const QString env_file = qEnvironmentVariable("SLIPWAY_CLUSTER_ENV");
        if (env_file.isEmpty() || !QFileInfo::exists(env_file))
            GTEST_SKIP() << "no local cluster (SLIPWAY_CLUSTER_ENV)";
        env_ = testing_util::read_env_file(env_file);
        qputenv("SLIPWAY_KNOWN_HOSTS", env_["SLIPWAY_SSH_KNOWN_HOSTS"].toUtf8());
        // The profile's folder on the "cluster" (this machine), owned by the test user, tools in bin/.
        workdir_ = env_["SLIPWAY_REMOTE_DIR"] + QStringLiteral("/gui-image-%1").arg(::getpid());
        ASSERT_TRUE(QDir().mkpath(workdir_ + "/bin"));
        ASSERT_TRUE(testing_util::write_script(workdir_ + "/bin/docker", kFakeDocker));
        ASSERT_TRUE(testing_util::write_script(workdir_ + "/bin/enroot", kFakeEnroot));
        const QString owner = env_["SLIPWAY_SSH_USER"];
        ASSERT_EQ(std::system(("chown -R '" + owner + "' '" + workdir_ + "'").toLocal8Bit().constData()), 0);

        window_ = std::make_unique<MainWindow>(home_.path() + "/history.sqlite");
        remote::ClusterProfile p;
        p.name = "local-slurm";
        p.host = env_["SLIPWAY_SSH_HOST"].toStdString();
        p.port = env_["SLIPWAY_SSH_PORT"].toInt();
        p.user = owner.toStdString();
        p.identity_file = env_["SLIPWAY_SSH_KEY"].toStdString();
        p.remote_workdir = workdir_.toStdString();
        p.container = remote::ContainerMode::kPyxis;
        ASSERT_TRUE(window_->clusters_page()->add_profile(p).ok());
        RunEditor* editor = window_->editor();
        ASSERT_TRUE(editor->load_preset("demo-tiny").ok());
        editor->edit("/container/build_engine", false);  // an empty context: the test is about the path
        editor->edit("/slurm/container_image", (workdir_ + "/demo.sqsh").toStdString());
        editor->edit("/slurm/container_workdir", "/workspace");
        editor->target_box()->setCurrentText("local-slurm");
        panel_ = editor->container_panel();
    }

    void TearDown() override {
        window_.reset();
        if (!workdir_.isEmpty()) QDir(workdir_).removeRecursively();
    }

    // Clicks `button` and waits for the job; returns the number of output batches that arrived.
    int run(QPushButton* button) {
        EXPECT_TRUE(button->isEnabled()) << button->toolTip().toStdString();
        button->click();
        ImageJob* job = window_->image_job();
        if (job == nullptr) return 0;
        int batches = 0;
        QObject::connect(job, &ImageJob::output, [&batches] { ++batches; });
        EXPECT_TRUE(testing_util::wait_until([&] { return !job->running(); }, 60'000));
        return batches;
    }

    testing_util::IsolatedHome home_;
    std::map<QString, QString> env_;
    QString workdir_;
    std::unique_ptr<MainWindow> window_;
    ContainerPanel* panel_ = nullptr;
};

TEST_F(ImageCluster, BuildAndImportStreamIntoThePage) {
    const int batches = run(panel_->build_button());
    const QString build = panel_->output_view()->toPlainText();
    EXPECT_GE(batches, 2) << "the output did not stream (one batch at the end)\n" << build.toStdString();
    EXPECT_TRUE(build.contains("fake docker build -f Dockerfile -t slipway/demo-tiny:24.04 context"))
        << build.toStdString();
    EXPECT_TRUE(build.contains("lines, # Training image of a Slipway run")) << build.toStdString();
    EXPECT_TRUE(build.contains("Step 3/5")) << build.toStdString();
    EXPECT_TRUE(build.contains("Successfully tagged slipway/demo-tiny:24.04")) << build.toStdString();
    EXPECT_TRUE(panel_->result_label()->text().startsWith("Built slipway/demo-tiny:24.04"))
        << panel_->result_label()->text().toStdString();

    run(panel_->import_button());
    const QString import = panel_->output_view()->toPlainText();
    EXPECT_TRUE(
        import.contains("fake enroot import -o " + workdir_ + "/demo.sqsh dockerd://slipway/demo-tiny:24.04"))
        << import.toStdString();
    EXPECT_TRUE(import.contains("Creating squashfs filesystem")) << import.toStdString();
    EXPECT_TRUE(panel_->result_label()->text().startsWith("Imported slipway/demo-tiny:24.04 into"))
        << panel_->result_label()->text().toStdString();
    QFile sqsh(workdir_ + "/demo.sqsh");
    ASSERT_TRUE(sqsh.open(QIODevice::ReadOnly));
    EXPECT_EQ(sqsh.readAll(), "squashfs of dockerd://slipway/demo-tiny:24.04\n");
}

TEST_F(ImageCluster, AFailedBuildSaysSoWithItsLog) {
    panel_->tag_edit()->setText("slipway/demo-fail:1");
    run(panel_->build_button());
    const QString output = panel_->output_view()->toPlainText();
    EXPECT_TRUE(output.contains("ERROR: failed to solve: a planned failure")) << output.toStdString();
    const QString result = panel_->result_label()->text();
    EXPECT_TRUE(result.startsWith("The build failed (exit 1); its log on 127.0.0.1 is " + workdir_ +
                                  "/images/slipway_demo-fail_1-"))
        << result.toStdString();
    EXPECT_TRUE(panel_->build_button()->isEnabled());
}

}  // namespace
}  // namespace slipway::app
