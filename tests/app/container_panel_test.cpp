// GUI tests of the editor's Container page (offscreen): lint findings follow the typed packages live and a
// click selects the finding's line in the preview; Build image / Import to .sqsh are enabled only for a
// cluster target, a valid config and a .sqsh path (the reason otherwise in tooltip and hint); a build over
// a FakeSession streams its output into the page and shows its result.
#include "editor/container_panel.h"
#include "test_paths.h"

#include <gtest/gtest.h>

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>

#include "clusters_page.h"
#include "editor/run_editor.h"
#include "images/image_job.h"
#include "main_window.h"
#include "remote/ssh/fake_session.h"
#include "test_util.h"

namespace slipway::app {
namespace {

const QString kRoot = QString::fromUtf8(test_paths::source_dir());

TEST(ContainerPanel, LintFindingsFollowTypedPackagesAndPointAtTheirLine) {
    testing_util::IsolatedHome home;
    RunEditor editor(kRoot);
    ASSERT_TRUE(editor.load_preset("demo-tiny").ok());
    ContainerPanel* panel = editor.container_panel();
    EXPECT_EQ(panel->findings()->count(), 0);
    EXPECT_TRUE(panel->findings_summary()->text().contains("no findings"))
        << panel->findings_summary()->text().toStdString();

    // seed 000's rule: the NGC torch is never replaced; an unpinned package drifts.
    editor.edit("/container/pip_packages", nlohmann::json::array({"transformers", "torch==2.1.0"}));
    ASSERT_EQ(panel->findings()->count(), 2);
    const QString first = panel->findings()->item(0)->text();
    EXPECT_TRUE(first.contains("error") && first.contains("pip-replaces-torch")) << first.toStdString();
    EXPECT_TRUE(panel->findings()->item(1)->text().contains("pip-unpinned"));
    EXPECT_TRUE(panel->findings_summary()->text().contains("1 error(s), 1 warning(s)"));
    EXPECT_TRUE(editor.dockerfile_preview()->toPlainText().contains("torch==2.1.0"));
    EXPECT_FALSE(editor.submit_button()->isEnabled());  // the field problem stands too

    emit panel->findings()->itemClicked(panel->findings()->item(0));
    const QString selected = editor.dockerfile_preview()->textCursor().selectedText();
    EXPECT_TRUE(selected.contains("torch==2.1.0")) << selected.toStdString();

    editor.edit("/container/pip_packages", nlohmann::json::array({"transformers==4.40.0"}));
    EXPECT_EQ(panel->findings()->count(), 0);
    editor.edit("/container/base", "nvcr.io/nvidia/pytorch:latest");
    ASSERT_EQ(panel->findings()->count(), 1);
    EXPECT_TRUE(panel->findings()->item(0)->text().contains("base-tag"));
}

remote::ClusterProfile pyxis_profile(const std::string& name) {
    remote::ClusterProfile p;
    p.name = name;
    p.host = "login.example.org";
    p.user = "researcher";
    p.container = remote::ContainerMode::kPyxis;
    return p;
}

TEST(ContainerPanel, ButtonsNeedAClusterAValidConfigAndASqsh) {
    testing_util::IsolatedHome home;
    MainWindow window(home.path() + "/history.sqlite");
    RunEditor* editor = window.editor();
    ASSERT_TRUE(editor->load_preset("demo-tiny").ok());
    ContainerPanel* panel = editor->container_panel();
    EXPECT_FALSE(panel->build_button()->isEnabled());
    EXPECT_FALSE(panel->import_button()->isEnabled());
    EXPECT_TRUE(panel->build_button()->toolTip().contains("This computer has no build host"));
    EXPECT_TRUE(panel->hint_label()->text().contains("no build host"));
    EXPECT_EQ(panel->image_tag(), "slipway/demo-tiny:24.04");

    ASSERT_TRUE(window.clusters_page()->add_profile(pyxis_profile("gpu")).ok());
    editor->target_box()->setCurrentText("gpu");
    EXPECT_TRUE(panel->build_button()->isEnabled()) << panel->build_button()->toolTip().toStdString();
    EXPECT_FALSE(panel->import_button()->isEnabled());
    EXPECT_TRUE(panel->import_button()->toolTip().contains("container_image is empty"));

    editor->edit("/slurm/container_image", "/scratch/u/demo.sqsh");
    editor->edit("/slurm/container_workdir", "/workspace");
    EXPECT_TRUE(panel->import_button()->isEnabled()) << panel->import_button()->toolTip().toStdString();
    EXPECT_TRUE(panel->hint_label()->isHidden());

    editor->edit("/training/learning_rate", -1.0);
    EXPECT_FALSE(panel->build_button()->isEnabled());
    EXPECT_TRUE(panel->build_button()->toolTip().contains("problems"));
    EXPECT_TRUE(panel->import_button()->isEnabled());  // importing needs no Dockerfile
    editor->edit("/training/learning_rate", 1e-3);

    panel->tag_edit()->setText("Not A Tag");
    EXPECT_FALSE(panel->build_button()->isEnabled());
    EXPECT_TRUE(panel->build_button()->toolTip().contains("Image tag"));
    panel->tag_edit()->clear();
    EXPECT_TRUE(panel->build_button()->isEnabled());

    editor->target_box()->setCurrentIndex(0);  // This computer again
    EXPECT_FALSE(panel->build_button()->isEnabled());
}

// A login host whose docker prints two lines and succeeds; $HOME is /home/u.
Result<std::unique_ptr<remote::Session>> fake_build_host(const remote::ClusterProfile&,
                                                         const remote::SessionCallbacks&) {
    auto fake = std::make_unique<remote::FakeSession>("researcher@login.example.org:22");
    remote::FakeSession* raw = fake.get();
    fake->set_exec_handler([raw](const std::string& command) {
        if (command.find("nohup") == std::string::npos)
            return Result<remote::ExecResult>(remote::ExecResult{"/home/u", "", 0});
        const std::string dir = command.substr(3, command.find(" && ") - 3);
        raw->put_file(dir + "/build.log",
                      "Step 1/12 : FROM nvcr.io/nvidia/pytorch:24.04-py3\n"
                      "Successfully tagged slipway/demo-tiny:24.04\n");
        raw->put_file(dir + "/build.rc", "0\n");
        return Result<remote::ExecResult>(remote::ExecResult{"", "", 0});
    });
    return std::unique_ptr<remote::Session>(std::move(fake));
}

TEST(ContainerPanel, BuildStreamsItsOutputIntoThePage) {
    testing_util::IsolatedHome home;
    MainWindow window(home.path() + "/history.sqlite");
    window.clusters_page()->set_connector(fake_build_host);
    ASSERT_TRUE(window.clusters_page()->add_profile(pyxis_profile("gpu")).ok());
    RunEditor* editor = window.editor();
    ASSERT_TRUE(editor->load_preset("demo-tiny").ok());
    editor->edit("/container/build_engine", false);  // an empty build context: no git archive needed
    editor->target_box()->setCurrentText("gpu");
    ContainerPanel* panel = editor->container_panel();
    ASSERT_TRUE(panel->build_button()->isEnabled()) << panel->build_button()->toolTip().toStdString();
    panel->build_button()->click();
    EXPECT_FALSE(panel->build_button()->isEnabled());  // while it runs
    EXPECT_TRUE(panel->build_button()->toolTip().contains("running"));
    ASSERT_TRUE(testing_util::wait_until([&] { return window.image_job() && !window.image_job()->running(); },
                                         20'000));
    const QString output = panel->output_view()->toPlainText();
    EXPECT_TRUE(output.contains("connecting to login.example.org")) << output.toStdString();
    EXPECT_TRUE(
        output.contains("building slipway/demo-tiny:24.04 on researcher@login.example.org:22 in "
                        "/home/u/slipway/images/slipway_demo-tiny_24.04-"))
        << output.toStdString();
    EXPECT_TRUE(output.contains("Successfully tagged slipway/demo-tiny:24.04")) << output.toStdString();
    EXPECT_TRUE(panel->result_label()->text().startsWith("Built slipway/demo-tiny:24.04"))
        << panel->result_label()->text().toStdString();
    EXPECT_TRUE(panel->build_button()->isEnabled());
}

}  // namespace
}  // namespace slipway::app
