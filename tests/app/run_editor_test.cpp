// GUI tests of the run editor (offscreen): widgets generated from the schema with human labels, groups and
// folded advanced fields, validation messages on the fields and Submit enabling, presets saved and loaded
// back unchanged and their gallery, seed-script import, derived values.
#include "editor/run_editor.h"
#include "test_paths.h"

#include <gtest/gtest.h>

#include <QCheckBox>
#include <QComboBox>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QTabWidget>
#include <QTemporaryDir>

#include <QTextBrowser>

#include "contract/run_config_schema.h"
#include "editor/data_preview_panel.h"
#include "editor/field_editor.h"
#include "editor/model_picker.h"
#include "editor/preset_gallery.h"
#include "editor/presets.h"
#include "editor/script_import.h"
#include "test_util.h"

namespace slipway::app {
namespace {

const QString kRoot = QString::fromUtf8(test_paths::source_dir());

class RunEditorTest : public ::testing::Test {
protected:
    testing_util::IsolatedHome home;
};

// Types into a line-edit field the way a person does (textEdited fires only for user edits).
void type_into(FieldEditor* field, const QString& text) {
    auto* line = qobject_cast<QLineEdit*>(field->input());
    ASSERT_NE(line, nullptr) << field->pointer();
    line->setText(text);
    emit line->textEdited(text);
}

TEST_F(RunEditorTest, EverySchemaFieldHasAWidgetWithHelpAndRange) {
    RunEditor editor(kRoot);
    for (const FieldSpec& spec : run_config_fields()) {
        if (spec.key == "schema") continue;
        const FieldEditor* f = editor.field(spec.pointer());
        ASSERT_NE(f, nullptr) << spec.pointer();
        EXPECT_TRUE(f->toolTip().contains(QString::fromStdString(spec.help).toHtmlEscaped().left(20)))
            << spec.pointer();
        if (!spec.range_text().empty()) {
            EXPECT_TRUE(f->toolTip().contains("Range:")) << spec.pointer();
        }
    }
    EXPECT_EQ(editor.pages()->count(), 6);
    EXPECT_TRUE(editor.field("/data/block_size")->toolTip().contains("Unit: tokens"));
}

TEST_F(RunEditorTest, InvalidFieldsAreHighlightedAndSubmitWaitsForAValidConfig) {
    RunEditor editor(kRoot);
    ASSERT_TRUE(editor.load_preset("demo-tiny").ok());
    EXPECT_TRUE(editor.document().valid()) << format_problems(editor.document().problems());
    EXPECT_TRUE(editor.submit_button()->isEnabled());

    FieldEditor* lr = editor.field("/training/learning_rate");
    type_into(lr, "abc");
    EXPECT_FALSE(editor.submit_button()->isEnabled());
    EXPECT_TRUE(lr->problem().contains("must be a number")) << lr->problem().toStdString();
    type_into(lr, "-1");
    EXPECT_TRUE(lr->problem().contains("must be > 0")) << lr->problem().toStdString();
    EXPECT_FALSE(editor.submit_button()->isEnabled());

    // A cross-field rule: warmup must be shorter than the run.
    FieldEditor* warmup = editor.field("/training/warmup_steps");
    type_into(warmup, "1000");
    EXPECT_FALSE(warmup->problem().isEmpty());
    type_into(lr, "0.0005");
    EXPECT_TRUE(lr->problem().isEmpty());
    EXPECT_FALSE(editor.submit_button()->isEnabled());  // warmup is still wrong
    type_into(warmup, "10");
    EXPECT_TRUE(warmup->problem().isEmpty());
    EXPECT_TRUE(editor.submit_button()->isEnabled());
    EXPECT_EQ(editor.document().config().training.learning_rate, 0.0005);
    EXPECT_TRUE(editor.preview()->toPlainText().contains("\"learning_rate\": 0.0005"));

    // A choice outside the list and an emptied required number (its default applies).
    editor.edit("/training/lr_scheduler_type", "cosine_typo");
    EXPECT_TRUE(editor.field("/training/lr_scheduler_type")->problem().contains("must be one of"));
    editor.edit("/training/lr_scheduler_type", "linear");
    type_into(editor.field("/training/seed"), "");
    EXPECT_EQ(editor.document().config().training.seed, 42);
    EXPECT_TRUE(editor.submit_button()->isEnabled());
}

// The Model & data page shows what the model learns from: the chat demo's first conversations rendered by
// the demo model's template, the answers (through the end-of-turn token) trained, the headers not; a bad
// line typed into the data is named by its number, and the preview follows the edit.
TEST_F(RunEditorTest, DataPageShowsTheConversationsAsTrained) {
    RunEditor editor(kRoot);
    ASSERT_TRUE(editor.load_preset("demo-chat").ok());
    DataPreviewPanel* panel = editor.data_preview();
    ASSERT_NE(panel, nullptr);
    const data::DataPreview& p = panel->preview();
    ASSERT_EQ(p.documents.size(), 3u) << panel->summary()->text().toStdString();
    EXPECT_EQ(p.format, "messages");
    EXPECT_TRUE(p.whole_file);
    EXPECT_EQ(p.kept, 79u);
    EXPECT_TRUE(p.bad_lines.empty());
    const data::PreviewDocument& first = p.documents.front();
    EXPECT_EQ(first.line, 1u);
    std::string trained, untrained;
    for (const data::PreviewSpan& span : first.spans)
        (span.trained ? trained : untrained) += span.text;
    EXPECT_NE(trained.find("In Russian, \"water\" is \"вода\".<|end_of_text|>"), std::string::npos)
        << trained;
    EXPECT_NE(untrained.find("<|user|>\nTranslate into Russian: water<|end_of_text|>"), std::string::npos)
        << untrained;
    EXPECT_EQ(untrained.find("вода\""), std::string::npos) << "the answer is not in the untrained spans";
    EXPECT_NE(panel->view()->toHtml().indexOf(QStringLiteral("background-color:#c8f0d0")), -1);

    QTemporaryDir dir;
    QFile data(dir.filePath("chat.jsonl"));
    ASSERT_TRUE(data.open(QIODevice::WriteOnly));
    data.write(
        R"({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]})"
        "\n{\"messages\": [{\"role\": \"robot\", \"content\": \"beep\"}]}\n");
    data.close();
    editor.edit("/data/train_file", data.fileName().toStdString());
    editor.set_document(editor.document());  // loads as a file does: the preview at once, no debounce
    ASSERT_EQ(panel->preview().kept, 1u);
    ASSERT_EQ(panel->preview().bad_lines.size(), 1u);
    EXPECT_NE(panel->preview().bad_lines[0].find("chat.jsonl:2: "), std::string::npos)
        << panel->preview().bad_lines[0];
    EXPECT_NE(panel->preview().bad_lines[0].find("robot"), std::string::npos)
        << panel->preview().bad_lines[0];
}

TEST_F(RunEditorTest, PreviewIsExactlyTheSavedFile) {
    RunEditor editor(kRoot);
    ASSERT_TRUE(editor.load_preset("saiga-lora").ok());
    QTemporaryDir dir;
    const QString path = dir.filePath("run.json");
    ASSERT_TRUE(editor.save_file(path).ok());
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::ReadOnly));
    const std::string saved = f.readAll().toStdString();
    EXPECT_EQ(saved, editor.document().text());
    EXPECT_EQ(saved, editor.preview()->toPlainText().toStdString());
    editor.edit("/training/learning_rate", -1);
    EXPECT_FALSE(editor.save_file(dir.filePath("bad.json")).ok());
}

TEST_F(RunEditorTest, EveryPresetSurvivesASaveAndLoadRoundTrip) {
    RunEditor editor(kRoot);
    const QList<Preset> shipped = list_presets(kRoot);
    ASSERT_GE(shipped.size(), 5);
    for (const Preset& p : shipped) {
        ASSERT_TRUE(editor.load_preset(p.name).ok()) << p.name.toStdString();
        const nlohmann::ordered_json before = editor.document().json();
        ASSERT_TRUE(editor.save_preset("copy of " + p.name).ok()) << p.name.toStdString();
        editor.set_document(RunDocument());
        ASSERT_TRUE(editor.load_preset("copy of " + p.name + " (mine)").ok());
        EXPECT_EQ(editor.document().json(), before) << p.name.toStdString();
        // The widgets show the loaded values.
        EXPECT_EQ(
            qobject_cast<QLineEdit*>(editor.field("/training/learning_rate")->input())->text().toDouble(),
            editor.document().config().training.learning_rate);
    }
    EXPECT_EQ(list_presets(kRoot).size(), 2 * shipped.size());
}

TEST_F(RunEditorTest, TargetModulesChecklistComesFromTheModelConfig) {
    RunEditor editor(kRoot);
    ASSERT_TRUE(editor.load_preset("demo-tiny").ok());
    editor.edit("/adapter/method", "lora");
    auto* list = qobject_cast<QListWidget*>(editor.field("/adapter/target_modules")->input());
    ASSERT_NE(list, nullptr);
    QStringList names;
    QStringList checked;
    for (int i = 0; i < list->count(); ++i) {
        names << list->item(i)->text();
        if (list->item(i)->checkState() == Qt::Checked) checked << list->item(i)->text();
    }
    EXPECT_EQ(names, (QStringList{"all-linear", "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                                  "up_proj", "down_proj"}));
    EXPECT_EQ(checked, (QStringList{"q_proj", "v_proj"}));
    list->item(7)->setCheckState(Qt::Checked);  // down_proj
    EXPECT_EQ(editor.document().config().adapter.target_modules,
              (std::vector<std::string>{"q_proj", "v_proj", "down_proj"}));
    EXPECT_TRUE(editor.derived_text().contains("trainable (lora)"));
}

TEST_F(RunEditorTest, DerivedGlobalBatchTokensAndModelSize) {
    RunEditor editor(kRoot);
    ASSERT_TRUE(editor.load_preset("demo-tiny").ok());
    // 8 per device x 1 accumulation x (1 node x 2 tasks).
    EXPECT_TRUE(editor.derived_text().contains("<b>16 sequences</b>")) << editor.derived_text().toStdString();
    EXPECT_TRUE(editor.derived_text().contains("16 x 128 = <b>2.0 k</b>"));
    editor.edit("/training/gradient_accumulation_steps", 4);
    editor.edit("/slurm/nodes", 2);
    EXPECT_TRUE(editor.derived_text().contains("<b>128 sequences</b>"))
        << editor.derived_text().toStdString();
    // Memory and time are the plan strip's (plan_strip_test.cpp).
    EXPECT_TRUE(
        editor.derived_text().contains("trainable (full); memory per device and time: the plan below"))
        << editor.derived_text().toStdString();
}

TEST_F(RunEditorTest, ImportsASeedStyleTrainingScript) {
    QTemporaryDir dir;
    const QString script = dir.filePath("run.sh");
    QFile f(script);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(
        "#!/bin/bash\n"
        "NNODES=2\nGPUS_PER_NODE=8\nexport LR=2e-4\nlora_rank=32\n"
        "torchrun --nnodes=$NNODES --nproc-per-node=$GPUS_PER_NODE --rdzv-backend=c10d "
        "--rdzv-endpoint=$head_node_ip:29500 train_trainer.py \\\n"
        "--model_name_or_path /scratch/models/llama3-8b \\\n"
        "--learning_rate $LR \\\n"
        "--block_size 4096 --bf16 \\\n"
        "--per_device_train_batch_size 1 --gradient_accumulation_steps 4 \\\n"
        "--lora_rank ${lora_rank} --lora_alpha ${lora_alpha} \\\n"
        "--do_train\n");
    f.close();
    RunEditor editor(kRoot);
    const Result<QStringList> notes = editor.import_script(script);
    ASSERT_TRUE(notes.ok()) << notes.error();
    const RunConfig& c = editor.document().config();
    EXPECT_EQ(c.slurm.nodes, 2);
    EXPECT_EQ(c.slurm.gpus_per_node, 8);
    EXPECT_EQ(c.model.path, "/scratch/models/llama3-8b");
    EXPECT_DOUBLE_EQ(c.training.learning_rate, 2e-4);
    EXPECT_EQ(c.data.block_size, 4096);
    EXPECT_TRUE(c.training.bf16);
    EXPECT_EQ(c.training.gradient_accumulation_steps, 4);
    EXPECT_EQ(c.adapter.r, 32);
    // lora_alpha is never set in the script: skipped, and said so.
    EXPECT_TRUE(notes->join("\n").contains("--lora_alpha skipped: ${lora_alpha} is not set"))
        << notes->join("\n").toStdString();
    EXPECT_TRUE(notes->join("\n").contains("--do_train ignored"));
    EXPECT_EQ(qobject_cast<QLineEdit*>(editor.field("/data/block_size")->input())->text(), "4096");

    EXPECT_FALSE(import_training_script("echo hello\n", RunConfig()).ok());
    EXPECT_FALSE(import_training_script("python train.py --no_such_flag 1\n", RunConfig()).ok());
}

TEST_F(RunEditorTest, DockerfileAndSbatchPreviewsFollowTheConfig) {
    RunEditor editor(kRoot);
    ASSERT_TRUE(editor.load_preset("demo-tiny").ok());
    EXPECT_TRUE(editor.dockerfile_preview()->toPlainText().contains("FROM nvcr.io/nvidia/pytorch:24.04-py3"));
    editor.edit("/container/apt_packages", nlohmann::json::array({"htop"}));
    EXPECT_TRUE(editor.dockerfile_preview()->toPlainText().contains("htop"));
    // torch must never be reinstalled over the image's own (seed 000): the field says why, the preview shows
    // the package where the linter points at it (container_panel_test.cpp), and nothing can be submitted.
    editor.edit("/container/pip_packages", nlohmann::json::array({"torch==2.1.0"}));
    EXPECT_NE(editor.document().problems_at("/container/pip_packages/0").find("must not be reinstalled"),
              std::string::npos);
    EXPECT_TRUE(editor.dockerfile_preview()->toPlainText().contains("torch==2.1.0"));
    EXPECT_FALSE(editor.submit_button()->isEnabled());
    // What cannot be rendered at all (an env value on two lines) says so in the preview.
    editor.edit("/container/env", nlohmann::json::object({{"NOTE", "two\nlines"}}));
    EXPECT_TRUE(editor.dockerfile_preview()->toPlainText().startsWith("# Cannot render the Dockerfile"));
    editor.edit("/container/env", nlohmann::json::object());
    editor.edit("/container/pip_packages", nlohmann::json::array());

    EXPECT_TRUE(editor.sbatch_preview()->toPlainText().contains("#SBATCH --nodes=1"));
    editor.edit("/slurm/nodes", 2);
    EXPECT_TRUE(editor.sbatch_preview()->toPlainText().contains("#SBATCH --nodes=2"));
    remote::ClusterProfile profile;
    profile.name = "gpu-cluster";
    profile.host = "login.gpu.example";
    profile.default_partition = "a100";
    editor.set_profiles({profile});
    EXPECT_EQ(editor.sbatch_profile_box()->currentText(), "gpu-cluster");
    EXPECT_TRUE(editor.sbatch_preview()->toPlainText().contains("--partition=a100"))
        << editor.sbatch_preview()->toPlainText().toStdString();
}

TEST_F(RunEditorTest, RowsShowHumanLabelsWithTheJsonKeyUnderThem) {
    RunEditor editor(kRoot);
    const QRegularExpression snake_case(QStringLiteral("^[a-z0-9]+(_[a-z0-9]+)+$"));
    for (const FieldSpec& spec : run_config_fields()) {
        if (spec.key == "schema") continue;
        const QLabel* title = editor.field_title(spec.pointer());
        const QLabel* key = editor.field_key(spec.pointer());
        ASSERT_NE(title, nullptr) << spec.pointer();
        ASSERT_NE(key, nullptr) << spec.pointer();
        EXPECT_EQ(title->text(), QString::fromStdString(spec.label)) << spec.pointer();
        EXPECT_FALSE(snake_case.match(title->text()).hasMatch()) << spec.pointer();
        EXPECT_TRUE(key->text().startsWith(QString::fromStdString(spec.key))) << spec.pointer();
        // The tooltip names the field for people who write the JSON.
        EXPECT_TRUE(editor.field(spec.pointer())->toolTip().contains(QString::fromStdString(spec.pointer())));
    }
    EXPECT_EQ(editor.field_title("/data/validation_split_percentage")->text(), "Validation split");
    EXPECT_EQ(editor.field_key("/data/validation_split_percentage")->text(), "validation_split_percentage");
    // The seed's flag where its name differs from the JSON key.
    EXPECT_EQ(editor.field_key("/adapter/r")->text(), "r  --lora_rank");
    EXPECT_TRUE(editor.field("/adapter/r")->toolTip().contains("--lora_rank"));
    // Related fields share a titled group.
    auto group_of = [&editor](const char* pointer) {
        QWidget* w = editor.field(pointer)->parentWidget();
        return qobject_cast<QGroupBox*>(w) ? qobject_cast<QGroupBox*>(w)->title() : QString();
    };
    EXPECT_EQ(group_of("/training/per_device_train_batch_size"), "Batch");
    EXPECT_EQ(group_of("/training/gradient_accumulation_steps"), "Batch");
    EXPECT_EQ(group_of("/training/learning_rate"), "Optimizer");
    // One label column per page: every label of a page is as wide as the others.
    EXPECT_EQ(editor.field_title("/training/learning_rate")->parentWidget()->width(),
              editor.field_title("/mlperf/benchmark")->parentWidget()->width());
}

TEST_F(RunEditorTest, AdvancedFieldsAreFoldedUntilAskedForOrWrong) {
    RunEditor editor(kRoot);
    ASSERT_TRUE(editor.load_preset("demo-tiny").ok());
    QCheckBox* toggle = editor.advanced_toggle(RunEditor::kHyperparameters);
    ASSERT_NE(toggle, nullptr);
    EXPECT_FALSE(toggle->isChecked());
    FieldEditor* beta1 = editor.field("/training/adam_beta1");
    EXPECT_TRUE(beta1->isHidden());
    EXPECT_TRUE(editor.field_title("/training/adam_beta1")->parentWidget()->isHidden());
    EXPECT_FALSE(editor.field("/training/learning_rate")->isHidden());
    toggle->setChecked(true);
    EXPECT_FALSE(beta1->isHidden());
    toggle->setChecked(false);
    EXPECT_TRUE(beta1->isHidden());

    // A problem on a folded field unfolds it, and the page says why it shows.
    editor.edit("/training/adam_beta1", 2);
    ASSERT_FALSE(beta1->problem().isEmpty());
    EXPECT_FALSE(beta1->isHidden());
    EXPECT_FALSE(beta1->parentWidget()->isHidden());  // its group
    QLabel* note = editor.advanced_note(RunEditor::kHyperparameters);
    EXPECT_FALSE(note->isHidden());
    EXPECT_TRUE(note->text().contains("Adam beta1")) << note->text().toStdString();
    editor.edit("/training/adam_beta1", 0.9);
    EXPECT_TRUE(beta1->isHidden());
    EXPECT_TRUE(note->isHidden());
    // The problem list names fields by their labels, and keeps the pointer.
    editor.edit("/training/learning_rate", -1);
    EXPECT_TRUE(editor.findChild<QListWidget*>()
                    ->findItems("Learning rate: must be > 0", Qt::MatchStartsWith)
                    .size() == 1);
}

TEST_F(RunEditorTest, GalleryListsEveryPresetWithItsDescriptionAndLoadsThePick) {
    RunEditor editor(kRoot);
    const QList<Preset> presets = list_presets(kRoot);
    ASSERT_GE(presets.size(), 5);
    for (const Preset& p : presets) {
        EXPECT_FALSE(p.user) << p.name.toStdString();
        EXPECT_FALSE(p.title.isEmpty()) << p.name.toStdString();
        EXPECT_GT(p.description.size(), 80)
            << p.name.toStdString() << ": a paragraph that says what it is for";
    }
    QListWidget* list = editor.preset_gallery()->list();
    ASSERT_EQ(list->count(), presets.size());
    for (int i = 0; i < list->count(); ++i) {
        EXPECT_EQ(list->item(i)->data(Qt::UserRole).toString(), presets[i].name);
        auto* card = qobject_cast<QLabel*>(list->itemWidget(list->item(i)));
        ASSERT_NE(card, nullptr);
        EXPECT_TRUE(card->text().contains(presets[i].title.toHtmlEscaped()));
        EXPECT_TRUE(card->text().contains(presets[i].description.left(40).toHtmlEscaped()));
    }
    // Key figures come from the preset's own config.
    ASSERT_TRUE(editor.preset_gallery()->select("mlperf-llama2-70b-lora"));
    auto* card = qobject_cast<QLabel*>(list->itemWidget(list->currentItem()));
    EXPECT_TRUE(card->text().contains("LoRA rank 16")) << card->text().toStdString();
    EXPECT_TRUE(card->text().contains("1 node × 8 GPUs")) << card->text().toStdString();

    emit list->itemActivated(list->currentItem());
    EXPECT_EQ(editor.document().config().name, "mlperf-llama2-70b-lora");
    EXPECT_EQ(editor.preset_box()->currentText(), "mlperf-llama2-70b-lora");
    // The demo runs on CPUs: its figures say so.
    ASSERT_TRUE(editor.preset_gallery()->select("demo-tiny"));
    card = qobject_cast<QLabel*>(list->itemWidget(list->currentItem()));
    EXPECT_TRUE(card->text().contains("1 node × 2 CPU ranks")) << card->text().toStdString();
}

TEST_F(RunEditorTest, ModelPickerShowsTheModelAndSetsLoraTargets) {
    RunEditor editor(kRoot);
    ASSERT_TRUE(editor.load_preset("demo-tiny").ok());
    ASSERT_NE(editor.field("/model/path")->findChild<QPushButton*>("model_picker_button"), nullptr);
    editor.show_model_picker();
    ModelPicker* picker = editor.model_picker();
    // resources/demo/model/config.json, counted as the engine counts (tied embeddings once).
    const QString summary = picker->summary()->text();
    EXPECT_TRUE(summary.contains("llama (LlamaForCausalLM)")) << summary.toStdString();
    EXPECT_TRUE(summary.contains("1.26 M")) << summary.toStdString();
    EXPECT_TRUE(summary.contains("256 tokens")) << summary.toStdString();   // context
    EXPECT_TRUE(summary.contains("4096 tokens")) << summary.toStdString();  // vocabulary
    // The demo trains in full: the targets are shown, not offered.
    EXPECT_EQ(picker->targets()->count(), 7);
    EXPECT_FALSE(picker->apply_button()->isEnabled());
    picker->reject();

    editor.edit("/adapter/method", "lora");
    editor.show_model_picker();
    ASSERT_TRUE(picker->apply_button()->isEnabled());
    QListWidget* targets = picker->targets();
    EXPECT_EQ(targets->item(0)->text(), "q_proj");
    EXPECT_EQ(targets->item(0)->checkState(), Qt::Checked);  // the demo's q_proj, v_proj
    EXPECT_EQ(targets->item(1)->checkState(), Qt::Unchecked);
    targets->item(1)->setCheckState(Qt::Checked);    // k_proj
    targets->item(2)->setCheckState(Qt::Unchecked);  // v_proj
    picker->apply_button()->click();
    EXPECT_EQ(editor.document().config().adapter.target_modules,
              (std::vector<std::string>{"q_proj", "k_proj"}));

    // A folder this computer does not have: the error names the config.json it looked for.
    editor.edit("/model/path", "/scratch/nowhere/model");
    editor.show_model_picker();
    EXPECT_TRUE(picker->summary()->text().contains("/scratch/nowhere/model/config.json"))
        << picker->summary()->text().toStdString();
    EXPECT_FALSE(picker->apply_button()->isEnabled());
}

TEST(ShellWords, QuotesEscapesAndVariables) {
    EXPECT_EQ(shell_words(R"(a "b c" 'd $X' e\ f $X ${Y} "$X/z")", {{"X", "1"}}),
              (std::vector<std::string>{"a", "b c", "d $X", "e f", "1", "${Y}", "1/z"}));
}

}  // namespace
}  // namespace slipway::app
