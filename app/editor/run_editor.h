// The run editor: pages Model & data, Hyperparameters, Adapter, Resources, Container and Preview, their
// fields generated from the run config schema (nothing listed twice): human labels with the JSON key under
// them, related fields in titled groups whose label columns line up, advanced fields folded per page
// (unfolded where one holds a problem). Every change is validated at once with the problem shown on its
// field; derived values (global batch, tokens per step); the planner's verdict
// (peak memory per device, fits or not, time to train) under every page; presets, JSON import/export and
// seed-style script import; a gallery of the presets with their descriptions. Submit is enabled only for a
// valid config, and asks first when the plan says the run does not fit.
#pragma once

#include <QMap>
#include <QString>
#include <QWidget>

#include <optional>
#include <string>

#include "contract/run_config_schema.h"
#include "contract/status.h"
#include "editor/model_info.h"
#include "editor/run_document.h"
#include "editor/run_plan.h"
#include "remote/container/ngc_catalogue.h"
#include "remote/slurm/cluster_profile.h"

class QCheckBox;
class QComboBox;
class QDialog;
class QGroupBox;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QTabWidget;

namespace slipway::app {

class ContainerPanel;
class FieldEditor;
class ModelPicker;
class PlanStrip;
class DataPreviewPanel;
class PresetGallery;

class RunEditor : public QWidget {
    Q_OBJECT

public:
    enum Page { kModelData = 0, kHyperparameters, kAdapter, kResources, kContainer, kPreview };

    // `resource_root` resolves the presets' relative paths (model config for modules and memory).
    explicit RunEditor(const QString& resource_root, QWidget* parent = nullptr);

    const RunDocument& document() const { return doc_; }
    void set_document(const RunDocument& doc);
    Status load_file(const QString& path);  // a run config or run.json
    Status save_file(const QString& path);  // fails (saying why) while the config has errors
    // Imports a seed-style shell script; returns the importer's notes.
    Result<QStringList> import_script(const QString& path);
    Status load_preset(const QString& name);
    Status save_preset(const QString& name);
    void reload_presets();

    // Sets a field as the user would (tests, and the derived-value links).
    void edit(const std::string& pointer, const nlohmann::json& value);

    FieldEditor* field(const std::string& pointer) const {
        return fields_.value(QString::fromStdString(pointer));
    }
    // A field's row label: its human label, and the JSON key (and seed flag) in small grey text.
    QLabel* field_title(const std::string& pointer) const;
    QLabel* field_key(const std::string& pointer) const;
    // The page's "Show advanced settings" toggle (nullptr on a page without advanced fields), and the note
    // that names the advanced fields a problem keeps unfolded.
    QCheckBox* advanced_toggle(Page page) const;
    QLabel* advanced_note(Page page) const;
    QTabWidget* pages() const { return pages_; }
    QPushButton* submit_button() const { return submit_; }
    // Submit as the button does: straight to submit_requested, or, when the plan says the run does not
    // fit, after a confirmation that names the reason (window-modal, not blocking; Cancel drops it).
    void request_submit();
    // The plan of the current config (refreshed with the validation), and the strip that shows it.
    const RunPlanResult& plan() const { return plan_; }
    PlanStrip* plan_strip() const { return plan_strip_; }
    // A local copy of the model's config.json for the plan while model.path is on the cluster; "" forgets it.
    void set_model_config(const QString& config_json);
    QPlainTextEdit* preview() const { return preview_; }
    QComboBox* preset_box() const { return presets_; }
    // The presets with their descriptions; choosing one loads it. show_preset_gallery() opens it.
    PresetGallery* preset_gallery() const { return gallery_; }
    void show_preset_gallery();
    // What model.path's config.json says (family, parameters, context, vocabulary) and its LoRA targets.
    ModelPicker* model_picker() const { return model_picker_; }
    void show_model_picker();
    QString derived_text() const;
    QPlainTextEdit* dockerfile_preview() const;
    // The Container page's Dockerfile, lint findings and image build/import actions.
    ContainerPanel* container_panel() const { return container_; }
    DataPreviewPanel* data_preview() const { return data_preview_; }
    QPlainTextEdit* sbatch_preview() const { return sbatch_; }
    QComboBox* sbatch_profile_box() const { return sbatch_profile_; }
    QComboBox* target_box() const { return target_; }
    // Where Submit sends the run: "" for This computer, else a cluster profile's name.
    QString submit_target() const;
    // That profile, or nothing for This computer.
    std::optional<remote::ClusterProfile> target_profile() const;

    // The cluster profiles the sbatch preview can be rendered for (an example profile is always offered).
    void set_profiles(const std::vector<remote::ClusterProfile>& profiles);
    // Partitions a cluster reported (sinfo), offered while typing /slurm/partition.
    // `summary` (nodes and GPUs per partition) is shown with the derived values on the Resources page.
    void set_partitions(const QStringList& partitions, const QString& cluster = QString(),
                        const QString& summary = QString());

signals:
    void submit_requested();
    // Browse... on a path field while the run goes to a cluster: the window shows the cluster's files.
    void remote_browse_requested(const QString& profile, const std::string& pointer, bool folder);
    void document_changed();

private:
    // One field's row on its page: the label widgets and the editor, in a group box.
    struct FieldRow {
        QWidget* label = nullptr;
        QLabel* title = nullptr;
        QLabel* key = nullptr;
        FieldEditor* editor = nullptr;
        QGroupBox* group = nullptr;
        bool advanced = false;
    };
    // A page's fold of advanced fields.
    struct AdvancedFold {
        QCheckBox* toggle = nullptr;
        QLabel* note = nullptr;
        std::vector<FieldRow> rows;  // every row of the page, to hide empty groups too
    };

    QWidget* make_page(const std::vector<std::string>& sections, QWidget* extra_top = nullptr,
                       QWidget* extra_bottom = nullptr);
    FieldRow make_row(const FieldSpec& spec, QWidget* parent);
    // Shows advanced rows when the toggle is on or they hold a problem; hides groups left empty.
    void refresh_folds();
    void on_edited(const std::string& pointer, const nlohmann::json& value);
    void refresh(bool values);
    void refresh_model_info();
    // The config.json that describes model.path: the folder's own when this computer has it, else the
    // local copy the user picked, else the folder's (whose read error says why). "" without a model.
    QString model_config_json() const;
    // Asks for a local copy of a cluster model's config.json and uses it; false when cancelled.
    bool choose_model_config();
    void refresh_plan();
    void refresh_renders();
    void refresh_container();
    remote::ClusterProfile sbatch_profile() const;

    QString resource_root_;
    RunDocument doc_;
    QMap<QString, FieldEditor*> fields_;
    QMap<QString, FieldRow> rows_;
    QMap<int, AdvancedFold> folds_;  // by page index
    QTabWidget* pages_;
    QComboBox* presets_;
    PresetGallery* gallery_ = nullptr;
    QDialog* gallery_dialog_ = nullptr;
    QLabel* derived_;
    QLabel* problems_summary_;
    QListWidget* problem_list_;
    QPlainTextEdit* preview_;
    QPushButton* submit_;
    PlanStrip* plan_strip_ = nullptr;
    RunPlanner planner_;
    RunPlanResult plan_;
    ContainerPanel* container_ = nullptr;
    DataPreviewPanel* data_preview_ = nullptr;
    QPlainTextEdit* sbatch_ = nullptr;
    QComboBox* sbatch_profile_ = nullptr;
    QComboBox* target_ = nullptr;
    std::vector<remote::ClusterProfile> profiles_;
    std::optional<remote::NgcCatalogue> catalogue_;
    QString model_info_for_;  // the config.json the module checklist was read from
    ModelPicker* model_picker_ = nullptr;
    QString cluster_info_;  // what sinfo said about the last tested cluster
};

}  // namespace slipway::app
