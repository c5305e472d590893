// GUI tests of the editor's plan strip and Submit's warning (offscreen): the demo preset fits on this
// computer, the 70B LoRA preset fits on 8 x H100 sharded and not unsharded (with a local config.json, its
// model being a cluster path), the strip follows every edit, and Submit on a run that does not fit asks
// first, naming the planner's reason.
#include <gtest/gtest.h>

#include <QAction>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QToolButton>

#include "editor/plan_strip.h"
#include "editor/run_editor.h"
#include "main_window.h"
#include "monitor/monitor_widget.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

const QString kRoot = QString::fromUtf8(test_paths::source_dir());
const QString kLlama70bConfig = QString::fromUtf8(test_paths::test_data_dir("/llama2-70b/config.json"));

class PlanStripTest : public ::testing::Test {
protected:
    // The 70B preset, planned with a local copy of Llama-2-70B's config.json.
    void load_70b(RunEditor& editor) {
        ASSERT_TRUE(editor.load_preset("mlperf-llama2-70b-lora").ok());
        ASSERT_TRUE(editor.document().valid()) << format_problems(editor.document().problems());
        editor.set_model_config(kLlama70bConfig);
        ASSERT_TRUE(editor.plan().plan.has_value()) << editor.plan().problem;
    }

    testing_util::IsolatedHome home;
};

QString summary(const RunEditor& editor) {
    return editor.plan_strip()->summary()->text();
}

TEST_F(PlanStripTest, DemoPresetFitsOnThisComputer) {
    RunEditor editor(kRoot);
    ASSERT_TRUE(editor.load_preset("demo-tiny").ok());
    ASSERT_TRUE(editor.plan().plan.has_value()) << editor.plan().problem;
    const plan::Plan& p = *editor.plan().plan;
    EXPECT_TRUE(p.fits);
    EXPECT_FALSE(p.on_gpu);
    EXPECT_EQ(p.tokens_per_step, 2 * 8 * 128);  // 2 ranks x 8 sequences x 128 tokens
    const QString text = summary(editor);
    EXPECT_TRUE(text.contains(QStringLiteral("peak <b>%1</b> of %2 per device")
                                  .arg(plan_bytes_text(p.per_device_bytes), plan_bytes_text(p.device_bytes))))
        << text.toStdString();
    EXPECT_TRUE(text.contains(">fits</b>")) << text.toStdString();
    EXPECT_TRUE(text.contains("per step")) << text.toStdString();
    EXPECT_TRUE(text.contains("to train (400 steps)")) << text.toStdString();
    EXPECT_TRUE(text.contains("2.0 k tokens per step")) << text.toStdString();
    // The breakdown: in the tooltip, and behind Details.
    EXPECT_TRUE(editor.plan_strip()->summary()->toolTip().contains("Peak memory per device"));
    EXPECT_TRUE(editor.plan_strip()->details()->text().contains("weights"));
    EXPECT_TRUE(editor.plan_strip()->details_button()->isEnabled());
    EXPECT_TRUE(editor.plan_strip()->model_config_button()->isHidden());
    // The Resources page's derived values take the model's size from the plan.
    EXPECT_TRUE(editor.derived_text().contains("trainable (full)")) << editor.derived_text().toStdString();
}

TEST_F(PlanStripTest, ClusterModelPathAsksForALocalConfigJson) {
    RunEditor editor(kRoot);
    ASSERT_TRUE(editor.load_preset("mlperf-llama2-70b-lora").ok());
    EXPECT_FALSE(editor.plan().plan.has_value());
    EXPECT_TRUE(editor.plan().needs_model_config);
    EXPECT_TRUE(
        summary(editor).contains("<b>Plan</b>: needs the model's config.json: /data/model/config.json is not "
                                 "on this computer"))
        << summary(editor).toStdString();
    EXPECT_FALSE(editor.plan_strip()->model_config_button()->isHidden());
    EXPECT_FALSE(editor.plan_strip()->details_button()->isEnabled());

    editor.set_model_config(kLlama70bConfig);
    ASSERT_TRUE(editor.plan().plan.has_value()) << editor.plan().problem;
    EXPECT_EQ(editor.plan().model_config, kLlama70bConfig.toStdString());
    // The picked copy belongs to this model.path: another model reads its own config.json again.
    editor.edit("/model/path", "/scratch/models/other");
    EXPECT_FALSE(editor.plan().plan.has_value());
    EXPECT_TRUE(summary(editor).contains("/scratch/models/other/config.json"))
        << summary(editor).toStdString();
}

TEST_F(PlanStripTest, Llama70bFitsShardedAndNotUnshardedOnH100) {
    RunEditor editor(kRoot);
    ASSERT_NO_FATAL_FAILURE(load_70b(editor));
    const plan::Plan& sharded = *editor.plan().plan;
    EXPECT_TRUE(sharded.on_gpu);
    EXPECT_EQ(sharded.world_size, 8);
    EXPECT_TRUE(sharded.fits) << sharded.reason;
    EXPECT_TRUE(summary(editor).contains(">fits</b>")) << summary(editor).toStdString();
    EXPECT_TRUE(summary(editor).contains("to train (1024 steps)")) << summary(editor).toStdString();

    editor.edit("/distributed/sharding", "none");
    const plan::Plan& unsharded = *editor.plan().plan;
    EXPECT_FALSE(unsharded.fits);
    EXPECT_FALSE(unsharded.reason.empty());
    EXPECT_GT(unsharded.per_device_bytes, unsharded.device_bytes);
    EXPECT_TRUE(summary(editor).contains(">does not fit</b>")) << summary(editor).toStdString();
    // The reason, and what would fit, under the verdict.
    EXPECT_TRUE(summary(editor).contains("/distributed/sharding: full")) << summary(editor).toStdString();
}

TEST_F(PlanStripTest, FollowsEveryEdit) {
    RunEditor editor(kRoot);
    ASSERT_TRUE(editor.load_preset("demo-tiny").ok());
    const int64_t before = editor.plan().plan->per_device_bytes;
    const QString text_before = summary(editor);
    editor.edit("/training/per_device_train_batch_size", 32);
    ASSERT_TRUE(editor.plan().plan.has_value());
    EXPECT_GT(editor.plan().plan->per_device_bytes, before);
    EXPECT_EQ(editor.plan().plan->tokens_per_step, 2 * 32 * 128);
    EXPECT_NE(summary(editor), text_before);
    EXPECT_TRUE(summary(editor).contains("8.2 k tokens per step")) << summary(editor).toStdString();
    // A config with problems has no plan until it is fixed.
    editor.edit("/training/per_device_train_batch_size", 0);
    EXPECT_FALSE(editor.plan().plan.has_value());
    EXPECT_TRUE(summary(editor).contains("<b>Plan</b>: none while the run config has problems"));
    editor.edit("/training/per_device_train_batch_size", 8);
    EXPECT_EQ(editor.plan().plan->per_device_bytes, before);
}

TEST_F(PlanStripTest, SubmitAsksFirstWhenTheRunDoesNotFit) {
    RunEditor editor(kRoot);
    int submitted = 0;
    QObject::connect(&editor, &RunEditor::submit_requested, [&] { ++submitted; });

    // A run that fits goes straight through.
    ASSERT_TRUE(editor.load_preset("demo-tiny").ok());
    editor.submit_button()->click();
    EXPECT_EQ(submitted, 1);
    EXPECT_EQ(editor.findChild<QMessageBox*>("plan_warning"), nullptr);

    ASSERT_NO_FATAL_FAILURE(load_70b(editor));
    editor.edit("/distributed/sharding", "none");
    ASSERT_FALSE(editor.plan().plan->fits);
    const QString reason = QString::fromStdString(editor.plan().plan->reason);

    // Cancel: nothing is submitted.
    editor.submit_button()->click();
    auto* box = editor.findChild<QMessageBox*>("plan_warning");
    ASSERT_NE(box, nullptr);
    EXPECT_TRUE(box->text().contains("does not fit")) << box->text().toStdString();
    EXPECT_EQ(box->informativeText(), reason);
    EXPECT_EQ(submitted, 1);
    box->button(QMessageBox::Cancel)->click();
    ASSERT_TRUE(
        testing_util::wait_until([&] { return editor.findChild<QMessageBox*>("plan_warning") == nullptr; }));
    EXPECT_EQ(submitted, 1);

    // Submit anyway: submitted.
    editor.submit_button()->click();
    box = editor.findChild<QMessageBox*>("plan_warning");
    ASSERT_NE(box, nullptr);
    QPushButton* anyway = nullptr;
    for (QAbstractButton* b : box->buttons()) {
        if (b->text() == "Submit anyway") anyway = qobject_cast<QPushButton*>(b);
    }
    ASSERT_NE(anyway, nullptr);
    anyway->click();
    EXPECT_EQ(submitted, 2);
}

TEST_F(PlanStripTest, RunMenuSubmitAsksTheSameWay) {
    MainWindow window(home.path() + "/history.sqlite");
    RunEditor& editor = *window.editor();
    ASSERT_NO_FATAL_FAILURE(load_70b(editor));
    editor.edit("/distributed/sharding", "none");
    const size_t runs = window.monitor()->run_keys().size();
    QAction* submit = window.menuBar()->actions()[1]->menu()->actions()[0];
    ASSERT_EQ(submit->text(), "&Submit");
    submit->trigger();
    auto* box = editor.findChild<QMessageBox*>("plan_warning");
    ASSERT_NE(box, nullptr);
    EXPECT_EQ(box->informativeText(), QString::fromStdString(editor.plan().plan->reason));
    box->button(QMessageBox::Cancel)->click();
    EXPECT_EQ(window.monitor()->run_keys().size(), runs);
}

}  // namespace
}  // namespace slipway::app
