// GUI test (offscreen) of the Clusters page's first-run guide (EnginePanel) over FakeSession clusters: its
// inputs follow the selected profile (the image only under a container runtime, Build only where the engine
// is built on the cluster), the image typed is remembered per cluster, the demo preset is put into the
// chosen environment, a build streams its job's log into the page and Cancel cancels the build job.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>

#include <memory>

#include "clusters/engine_build_job.h"
#include "clusters/engine_panel.h"
#include "clusters_page.h"
#include "core/install_paths.h"
#include "editor/presets.h"
#include "main_window.h"
#include "remote/ssh/fake_session.h"
#include "test_util.h"

namespace slipway::app {
namespace {

constexpr const char* kImage = "/scratch/images/pytorch.sif";

// A cluster whose build job runs and writes its log until it is cancelled; `scancels` counts the cancels.
ClusterSession::Connector building_cluster(std::shared_ptr<std::atomic<int>> scancels) {
    return [scancels](const remote::ClusterProfile&, const remote::SessionCallbacks&) {
        auto fake = std::make_unique<remote::FakeSession>("me@login.example.org:22");
        remote::FakeSession* raw = fake.get();
        fake->put_file(kImage, "an image");
        fake->set_exec_handler([raw, scancels](const std::string& command) -> Result<remote::ExecResult> {
            if (command.find("sbatch --parsable") != std::string::npos) {
                const std::string dir = command.substr(3, command.find(" && ") - 3);
                raw->put_file(dir + "/build-41.out",
                              "build.sh: torch 2.6.0 (/usr/bin/python3)\n[ 50%] Building\n");
                return remote::ExecResult{"41\n", "", 0};
            }
            if (command.rfind("squeue", 0) == 0)
                return remote::ExecResult{"41|RUNNING|None|0:01|1|node1\n", "", 0};
            if (command.rfind("scancel", 0) == 0) {
                ++*scancels;
                return remote::ExecResult{"", "", 0};
            }
            return remote::ExecResult{"", "not known here", 1};
        });
        return Result<std::unique_ptr<remote::Session>>(std::unique_ptr<remote::Session>(std::move(fake)));
    };
}

class EngineGuidePanel : public ::testing::Test {
protected:
    void SetUp() override {
        window_ = std::make_unique<MainWindow>(home_.path() + "/history.sqlite");
        page_ = window_->clusters_page();
        add("hpc", remote::ContainerMode::kApptainer, remote::EngineSource::kBuild);
        add("bare", remote::ContainerMode::kNone, remote::EngineSource::kBuild);
        add("ngc", remote::ContainerMode::kPyxis, remote::EngineSource::kImage);
        panel_ = page_->engine_panel();
    }

    void add(const char* name, remote::ContainerMode container, remote::EngineSource source) {
        remote::ClusterProfile p;
        p.name = name;
        p.host = "login.example.org";
        p.remote_workdir = "/scratch/u/slipway";
        p.default_partition = "gpu";
        p.container = container;
        p.engine_source = source;
        ASSERT_TRUE(page_->add_profile(p).ok());
    }

    testing_util::IsolatedHome home_;
    std::unique_ptr<MainWindow> window_;
    ClustersPage* page_ = nullptr;
    EnginePanel* panel_ = nullptr;
};

TEST_F(EngineGuidePanel, ItsInputsFollowTheProfile) {
    page_->select(QStringLiteral("hpc"));
    ASSERT_TRUE(panel_->isVisibleTo(page_));
    EXPECT_TRUE(panel_->image_edit()->isVisibleTo(panel_));
    EXPECT_TRUE(panel_->build_button()->isVisibleTo(panel_));
    EXPECT_EQ(panel_->partition_box()->currentText(), "gpu");  // the profile's default
    page_->select(QStringLiteral("bare"));
    EXPECT_FALSE(panel_->image_edit()->isVisibleTo(panel_)) << "bare srun takes no image";
    EXPECT_TRUE(panel_->build_button()->isVisibleTo(panel_));
    EXPECT_TRUE(panel_->choice().image.isEmpty());
    page_->select(QStringLiteral("ngc"));
    EXPECT_FALSE(panel_->build_button()->isVisibleTo(panel_)) << "the image carries its engine";
    EXPECT_TRUE(panel_->demo_button()->isVisibleTo(panel_));
    page_->select(QStringLiteral("This computer"));
    EXPECT_FALSE(panel_->isVisibleTo(page_));
}

TEST_F(EngineGuidePanel, TheDemoGoesIntoTheChosenEnvironment) {
    page_->select(QStringLiteral("hpc"));
    panel_->image_edit()->setText(QString::fromUtf8(kImage));
    panel_->partition_box()->setCurrentText(QStringLiteral("a100"));
    panel_->gpus_box()->setValue(2);
    EnvironmentChoice asked;
    QString asked_of;
    QObject::connect(page_, &ClustersPage::demo_requested,
                     [&](const QString& profile, const EnvironmentChoice& choice) {
                         asked_of = profile;
                         asked = choice;
                     });
    QObject::disconnect(page_, &ClustersPage::demo_requested, window_.get(), nullptr);  // no submission here
    panel_->demo_button()->click();
    EXPECT_EQ(asked_of, "hpc");
    EXPECT_EQ(asked.image, kImage);
    EXPECT_EQ(asked.partition, "a100");
    EXPECT_EQ(asked.gpus_per_node, 2);
    QString demo_path;
    for (const Preset& preset : list_presets(QString::fromStdString(resource_root())))
        if (preset.name == kDemoPreset) demo_path = preset.path;
    const Result<RunConfig> demo = config_in_environment(demo_path.toStdString(), asked);
    ASSERT_TRUE(demo.ok()) << demo.error();
    EXPECT_EQ(demo->name, kDemoPreset);
    EXPECT_EQ(demo->slurm.container_image, kImage);
    EXPECT_EQ(demo->slurm.partition, "a100");
    EXPECT_EQ(demo->slurm.gpus_per_node, 2);

    // The image is remembered for this cluster, and only for it.
    page_->select(QStringLiteral("bare"));
    page_->select(QStringLiteral("hpc"));
    EXPECT_EQ(panel_->image_edit()->text(), kImage);
    EXPECT_EQ(panel_->partition_box()->currentText(), "gpu") << "another visit starts from the profile";
    const std::string nowhere = home_.path().toStdString() + "/missing.json";
    const auto missing = config_in_environment(nowhere, asked);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().find(nowhere), std::string::npos) << missing.error();
}

TEST_F(EngineGuidePanel, ABuildStreamsItsLogAndCancelCancelsTheJob) {
    if (find_engine_bundle().empty()) GTEST_SKIP() << "this build has no engine bundle";
    auto scancels = std::make_shared<std::atomic<int>>(0);
    page_->set_connector(building_cluster(scancels));
    page_->select(QStringLiteral("hpc"));
    panel_->image_edit()->setText(QString::fromUtf8(kImage));
    panel_->build_button()->click();
    ASSERT_NE(page_->engine_job(), nullptr) << panel_->result_label()->text().toStdString();
    EXPECT_FALSE(panel_->build_button()->isEnabled());
    EXPECT_FALSE(panel_->demo_button()->isEnabled());
    const auto output = [&] { return panel_->output_view()->toPlainText(); };
    ASSERT_TRUE(testing_util::wait_until([&] { return output().contains("[ 50%] Building"); }, 20'000))
        << output().toStdString();
    EXPECT_TRUE(output().contains("building the engine in job 41 (log /scratch/u/slipway/engines/"))
        << output().toStdString();
    EXPECT_TRUE(output().contains("build job: RUNNING")) << output().toStdString();
    EXPECT_TRUE(output().contains("build.sh: torch 2.6.0")) << output().toStdString();
    panel_->cancel_button()->click();
    ASSERT_TRUE(testing_util::wait_until([&] { return !page_->engine_job()->running(); }, 20'000));
    EXPECT_EQ(scancels->load(), 1);
    EXPECT_TRUE(panel_->result_label()->text().contains("cancelled"))
        << panel_->result_label()->text().toStdString();
    EXPECT_TRUE(panel_->build_button()->isEnabled());
    EXPECT_FALSE(page_->engine_job()->place().has_value());
}

}  // namespace
}  // namespace slipway::app
