// RunEditor: schema-generated pages, validation feedback, derived values, presets and import/export.
#include "editor/run_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCompleter>
#include <QDialog>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "contract/run_config_schema.h"
#include "editor/container_panel.h"
#include "editor/data_preview_panel.h"
#include "editor/field_editor.h"
#include "editor/model_picker.h"
#include "editor/plan_strip.h"
#include "editor/preset_gallery.h"
#include "editor/presets.h"
#include "editor/script_import.h"
#include "i18n/ui_language.h"
#include "remote/container/dockerfile.h"
#include "remote/slurm/sbatch_script.h"

namespace slipway::app {

RunEditor::RunEditor(const QString& resource_root, QWidget* parent)
    : QWidget(parent), resource_root_(resource_root) {
    doc_.set_base_dir(resource_root.toStdString());
    planner_.set_base_dir(resource_root.toStdString());
    pages_ = new QTabWidget(this);

    // Above the pages: where the run starts from (presets, and their gallery).
    auto* preset_row = new QWidget(this);
    auto* preset_layout = new QHBoxLayout(preset_row);
    preset_layout->setContentsMargins(0, 0, 0, 6);
    presets_ = new QComboBox(preset_row);
    presets_->setMinimumWidth(220);
    presets_->setToolTip(tr("Run configs shipped in resources/presets and your own"));
    auto* load_preset_button = new QPushButton(tr("Load preset"), preset_row);
    auto* gallery_button = new QPushButton(tr("Gallery..."), preset_row);
    gallery_button->setToolTip(tr("Every preset with its description, model and machines"));
    auto* save_preset_button = new QPushButton(tr("Save as preset..."), preset_row);
    preset_layout->addWidget(new QLabel(tr("Preset:"), preset_row));
    preset_layout->addWidget(presets_);
    preset_layout->addWidget(load_preset_button);
    preset_layout->addWidget(gallery_button);
    preset_layout->addWidget(save_preset_button);
    preset_layout->addStretch(1);
    connect(load_preset_button, &QPushButton::clicked, this, [this] {
        if (const Status s = load_preset(presets_->currentText()); !s.ok()) {
            QMessageBox::warning(this, tr("Load preset"), QString::fromStdString(s.message()));
        }
    });
    connect(gallery_button, &QPushButton::clicked, this, &RunEditor::show_preset_gallery);
    gallery_dialog_ = new QDialog(this);
    gallery_dialog_->setWindowTitle(tr("Start from a preset"));
    gallery_dialog_->resize(720, 560);
    gallery_ = new PresetGallery(gallery_dialog_);
    auto* gallery_layout = new QVBoxLayout(gallery_dialog_);
    gallery_layout->addWidget(gallery_);
    connect(gallery_, &PresetGallery::preset_chosen, this, [this](const QString& name) {
        gallery_dialog_->accept();
        if (const Status s = load_preset(name); !s.ok()) {
            QMessageBox::warning(this, tr("Load preset"), QString::fromStdString(s.message()));
        }
    });
    connect(save_preset_button, &QPushButton::clicked, this, [this] {
        bool ok = false;
        const QString name =
            QInputDialog::getText(this, tr("Save as preset"), tr("Preset name:"), QLineEdit::Normal,
                                  QString::fromStdString(doc_.config().name), &ok);
        if (!ok || name.isEmpty()) return;
        if (const Status s = save_preset(name); !s.ok()) {
            QMessageBox::warning(this, tr("Save preset"), QString::fromStdString(s.message()));
        }
    });

    derived_ = new QLabel(this);
    derived_->setTextFormat(Qt::RichText);
    derived_->setWordWrap(true);
    derived_->setFrameShape(QFrame::StyledPanel);
    derived_->setMargin(8);

    // Model & data: the fields, then what the model learns from (the train file as it will be trained on).
    data_preview_ = new DataPreviewPanel(resource_root_, this);
    pages_->addTab(make_page({"", "model", "tokenizer", "data"}, nullptr, data_preview_),
                   tr("Model && data"));
    pages_->addTab(make_page({"training", "eval", "mlperf"}), tr("Hyperparameters"));
    pages_->addTab(make_page({"adapter"}), tr("Adapter"));
    pages_->addTab(make_page({"slurm", "distributed"}, derived_), tr("Resources"));
    QFont mono(QStringLiteral("monospace"));
    mono.setStyleHint(QFont::Monospace);
    mono.setPointSize(9);
    auto make_text_view = [&mono](QWidget* parent) {
        auto* view = new QPlainTextEdit(parent);
        view->setReadOnly(true);
        view->setLineWrapMode(QPlainTextEdit::NoWrap);
        view->setFont(mono);
        return view;
    };

    // Container: the fields, then what the NGC base brings and the Dockerfile they make.
    const QString catalogue_path = resource_root_ + QStringLiteral("/resources/containers/ngc-pytorch.json");
    if (Result<remote::NgcCatalogue> c =
            remote::load_ngc_catalogue(QFile::encodeName(catalogue_path).toStdString());
        c.ok()) {
        catalogue_ = std::move(*c);
    }
    container_ = new ContainerPanel(this);
    pages_->addTab(make_page({"container"}, nullptr, container_), tr("Container"));
    if (FieldEditor* base = field("/container/base"); base != nullptr && catalogue_) {
        QStringList images;
        for (const remote::NgcImage& image : catalogue_->images)
            images << QString::fromStdString(image.image());
        auto* completer = new QCompleter(images, base);
        completer->setFilterMode(Qt::MatchContains);
        if (auto* line = qobject_cast<QLineEdit*>(base->input())) line->setCompleter(completer);
    }

    // The model folder's row: what its config.json says, and its LoRA targets.
    model_picker_ = new ModelPicker(this);
    if (FieldEditor* model = field("/model/path")) {
        auto* button = new QPushButton(tr("Model..."), model);
        button->setObjectName(QStringLiteral("model_picker_button"));
        button->setToolTip(tr("Family, parameters, context and vocabulary from config.json; LoRA targets"));
        model->add_action(button);
        connect(button, &QPushButton::clicked, this, &RunEditor::show_model_picker);
    }
    connect(model_picker_, &ModelPicker::targets_chosen, this, [this](const QStringList& names) {
        nlohmann::json list = nlohmann::json::array();
        for (const QString& name : names)
            list.push_back(name.toStdString());
        edit("/adapter/target_modules", list);
        model_picker_->accept();
    });
    connect(model_picker_, &ModelPicker::local_config_requested, this, [this] {
        if (choose_model_config()) show_model_picker();
    });

    // Preview: exactly what will be uploaded.
    auto* preview_page = new QTabWidget(this);
    auto* json_page = new QWidget(preview_page);
    auto* json_layout = new QVBoxLayout(json_page);
    json_layout->addWidget(new QLabel(tr("run.json exactly as it will be written:"), json_page));
    preview_ = make_text_view(json_page);
    json_layout->addWidget(preview_, 1);
    preview_page->addTab(json_page, QStringLiteral("run.json"));
    auto* sbatch_page = new QWidget(preview_page);
    auto* sbatch_layout = new QVBoxLayout(sbatch_page);
    auto* profile_row = new QHBoxLayout;
    sbatch_profile_ = new QComboBox(sbatch_page);
    sbatch_profile_->setMinimumWidth(220);
    profile_row->addWidget(
        new QLabel(tr("The sbatch script as it will be uploaded to cluster:"), sbatch_page));
    profile_row->addWidget(sbatch_profile_);
    profile_row->addStretch(1);
    sbatch_layout->addLayout(profile_row);
    sbatch_ = make_text_view(sbatch_page);
    sbatch_layout->addWidget(sbatch_, 1);
    preview_page->addTab(sbatch_page, QStringLiteral("sbatch"));
    pages_->addTab(preview_page, tr("Preview"));
    connect(sbatch_profile_, qOverload<int>(&QComboBox::currentIndexChanged), this,
            [this] { refresh_renders(); });
    set_profiles({});

    problem_list_ = new QListWidget(this);
    problem_list_->setMaximumHeight(90);
    problem_list_->setToolTip(tr("Double-click a problem to go to its field"));
    connect(problem_list_, &QListWidget::itemDoubleClicked, this, [this](QListWidgetItem* item) {
        FieldEditor* f = fields_.value(item->data(Qt::UserRole).toString());
        if (f == nullptr) return;
        for (int i = 0; i < pages_->count(); ++i) {
            if (pages_->widget(i)->isAncestorOf(f)) pages_->setCurrentIndex(i);
        }
        f->input()->setFocus();
    });
    problems_summary_ = new QLabel(this);
    submit_ = new QPushButton(tr("Submit"), this);
    submit_->setObjectName(QStringLiteral("submit"));
    connect(submit_, &QPushButton::clicked, this, &RunEditor::request_submit);
    target_ = new QComboBox(this);
    target_->setMinimumWidth(180);
    target_->setToolTip(tr("Where the run goes: this computer, or a cluster profile (Clusters page)"));
    target_->addItem(tr("This computer"));
    connect(target_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] { refresh_container(); });
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(problems_summary_, 1);
    bottom->addWidget(new QLabel(tr("Run on:"), this));
    bottom->addWidget(target_);
    bottom->addWidget(submit_);

    plan_strip_ = new PlanStrip(this);
    connect(plan_strip_, &PlanStrip::model_config_requested, this, &RunEditor::choose_model_config);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(preset_row);
    layout->addWidget(pages_, 1);
    layout->addWidget(plan_strip_);
    layout->addWidget(problem_list_);
    layout->addLayout(bottom);

    reload_presets();
    refresh(true);
}

QWidget* RunEditor::make_page(const std::vector<std::string>& sections, QWidget* extra_top,
                              QWidget* extra_bottom) {
    const int page = pages_->count();  // the index this page gets
    auto* content = new QWidget;
    auto* layout = new QVBoxLayout(content);
    if (extra_top != nullptr) layout->addWidget(extra_top);
    AdvancedFold& fold = folds_[page];

    // Groups in the order their first field appears in the schema; one grid each.
    std::vector<std::pair<std::string, QGridLayout*>> grids;
    for (const std::string& section : sections) {
        for (const FieldSpec& spec : run_config_fields()) {
            if (spec.section != section || spec.key == "schema") continue;
            auto found = std::find_if(grids.begin(), grids.end(),
                                      [&spec](const auto& g) { return g.first == spec.group; });
            if (found == grids.end()) {
                auto* box = new QGroupBox(field_group(spec), content);
                auto* grid = new QGridLayout(box);
                grid->setColumnStretch(1, 1);
                grid->setVerticalSpacing(8);
                layout->addWidget(box);
                grids.emplace_back(spec.group, grid);
                found = grids.end() - 1;
            }
            QGridLayout* grid = found->second;
            FieldRow row = make_row(spec, content);
            row.group = qobject_cast<QGroupBox*>(grid->parentWidget());
            rows_.insert(QString::fromStdString(spec.pointer()), row);
            const int r = grid->rowCount();
            grid->addWidget(row.label, r, 0, Qt::AlignTop);
            grid->addWidget(row.editor, r, 1);
            fold.rows.push_back(row);
        }
    }
    // One label column width for every group of the page, so their inputs line up.
    int label_width = 0;
    for (const FieldRow& row : fold.rows)
        label_width = std::max(label_width, row.label->sizeHint().width());
    for (const FieldRow& row : fold.rows)
        row.label->setFixedWidth(label_width);

    const auto advanced =
        std::count_if(fold.rows.begin(), fold.rows.end(), [](const FieldRow& row) { return row.advanced; });
    if (advanced > 0) {
        auto* fold_row = new QHBoxLayout;
        fold.toggle =
            new QCheckBox(tr("Show advanced settings (%n)", nullptr, static_cast<int>(advanced)), content);
        fold.toggle->setObjectName(QStringLiteral("advanced_toggle"));
        fold.toggle->setToolTip(tr("Settings most runs leave at their defaults"));
        fold.note = new QLabel(content);
        fold.note->setStyleSheet(QStringLiteral("color: #c62828;"));
        fold.note->setWordWrap(true);
        fold.note->hide();
        fold_row->addWidget(fold.toggle);
        fold_row->addWidget(fold.note, 1);
        // At the top, where the note about a field kept open is seen without scrolling.
        layout->insertLayout(extra_top != nullptr ? 1 : 0, fold_row);
        connect(fold.toggle, &QCheckBox::toggled, this, [this] { refresh_folds(); });
    }
    if (extra_bottom != nullptr) layout->addWidget(extra_bottom);
    layout->addStretch(1);
    auto* scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(content);
    return scroll;
}

RunEditor::FieldRow RunEditor::make_row(const FieldSpec& spec, QWidget* parent) {
    FieldRow row;
    row.advanced = spec.advanced;
    row.editor = new FieldEditor(spec, parent);
    row.label = new QWidget(parent);
    row.label->setToolTip(row.editor->toolTip());
    auto* label_column = new QVBoxLayout(row.label);
    label_column->setContentsMargins(0, 0, 12, 0);
    label_column->setSpacing(0);
    row.title = new QLabel(field_label(spec), row.label);
    row.title->setObjectName(QStringLiteral("field_title"));
    row.title->setBuddy(row.editor->input());
    row.key = new QLabel(field_key_text(spec), row.label);
    row.key->setObjectName(QStringLiteral("field_key"));
    QFont small = row.key->font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    row.key->setFont(small);
    row.key->setStyleSheet(QStringLiteral("color: #757575;"));
    row.key->setTextInteractionFlags(Qt::TextSelectableByMouse);  // to copy into a script or JSON
    label_column->addWidget(row.title);
    label_column->addWidget(row.key);

    fields_.insert(QString::fromStdString(spec.pointer()), row.editor);
    FieldEditor* editor = row.editor;
    connect(editor, &FieldEditor::edited, this, &RunEditor::on_edited);
    connect(editor, &FieldEditor::browse_requested, this,
            [this, editor](const std::string& pointer, bool folder) {
                // A run for a cluster reads absolute paths there: browse the cluster over SSH.
                if (!submit_target().isEmpty()) {
                    emit remote_browse_requested(submit_target(), pointer, folder);
                    return;
                }
                editor->set_browsed(folder ? QFileDialog::getExistingDirectory(this, tr("Choose a folder"))
                                           : QFileDialog::getOpenFileName(this, tr("Choose a file")));
            });
    return row;
}

void RunEditor::refresh_folds() {
    for (AdvancedFold& fold : folds_) {
        const bool unfolded = fold.toggle != nullptr && fold.toggle->isChecked();
        QStringList kept_open;  // advanced fields shown only because they hold a problem
        QMap<QGroupBox*, bool> group_shown;
        for (const FieldRow& row : fold.rows) {
            const bool has_problem = !row.editor->problem().isEmpty();
            const bool shown = !row.advanced || unfolded || has_problem;
            if (row.advanced && !unfolded && has_problem) kept_open << row.title->text();
            row.label->setHidden(!shown);
            row.editor->setHidden(!shown);
            group_shown[row.group] = group_shown.value(row.group) || shown;
        }
        for (auto it = group_shown.begin(); it != group_shown.end(); ++it)
            it.key()->setHidden(!it.value());
        if (fold.note != nullptr) {
            fold.note->setText(tr("Shown although folded, because of a problem: %1")
                                   .arg(kept_open.join(QStringLiteral(", "))));
            fold.note->setVisible(!kept_open.isEmpty());
        }
    }
}

QLabel* RunEditor::field_title(const std::string& pointer) const {
    return rows_.value(QString::fromStdString(pointer)).title;
}

QLabel* RunEditor::field_key(const std::string& pointer) const {
    return rows_.value(QString::fromStdString(pointer)).key;
}

QCheckBox* RunEditor::advanced_toggle(Page page) const {
    return folds_.value(page).toggle;
}

QLabel* RunEditor::advanced_note(Page page) const {
    return folds_.value(page).note;
}

void RunEditor::on_edited(const std::string& pointer, const nlohmann::json& value) {
    doc_.set_value(pointer, value);
    refresh(false);
    emit document_changed();
}

void RunEditor::edit(const std::string& pointer, const nlohmann::json& value) {
    if (FieldEditor* f = field(pointer)) f->set_value(value);
    on_edited(pointer, value);
}

void RunEditor::set_document(const RunDocument& doc) {
    doc_ = doc;
    doc_.set_base_dir(resource_root_.toStdString());
    refresh(true);
    emit document_changed();
}

void RunEditor::refresh(bool values) {
    refresh_model_info();
    for (auto it = fields_.begin(); it != fields_.end(); ++it) {
        const std::string pointer = it.key().toStdString();
        if (values) (*it)->set_value(doc_.value(pointer));
        (*it)->set_problem(QString::fromStdString(doc_.problems_at(pointer)));
    }
    problem_list_->clear();
    int errors = 0;
    for (const ConfigProblem& p : doc_.problems()) {
        // People read the label; the pointer stays for those who edit the JSON.
        const FieldSpec* spec = find_field(p.pointer);
        const QString text = spec == nullptr ? QString::fromStdString(p.to_string())
                                             : QStringLiteral("%1: %2  (%3)")
                                                   .arg(field_label(*spec), QString::fromStdString(p.message),
                                                        QString::fromStdString(p.pointer));
        auto* item = new QListWidgetItem(text, problem_list_);
        item->setData(Qt::UserRole, QString::fromStdString(p.pointer));
        item->setForeground(p.is_error() ? QColor(198, 40, 40) : QColor(170, 110, 0));
        if (p.is_error()) ++errors;
    }
    problem_list_->setVisible(!doc_.problems().empty());
    problems_summary_->setText(errors == 0 ? tr("The run config is valid.")
                                           : tr("%n problem(s) to fix before submitting.", nullptr, errors));
    submit_->setEnabled(doc_.valid());
    // LoRA's own fields mean nothing for full or embeddings-only training.
    const bool lora = doc_.config().adapter.uses_lora();
    for (const char* p :
         {"/adapter/r", "/adapter/lora_alpha", "/adapter/lora_dropout", "/adapter/target_modules",
          "/adapter/rank_pattern", "/adapter/alpha_pattern", "/adapter/use_rslora", "/adapter/use_dora"}) {
        if (FieldEditor* f = field(p)) f->setEnabled(lora);
        if (QWidget* label = rows_.value(QString::fromLatin1(p)).label) label->setEnabled(lora);
    }
    refresh_folds();
    preview_->setPlainText(QString::fromStdString(doc_.text()));
    refresh_plan();
    derived_->setText(derived_text());
    refresh_renders();
    if (data_preview_ != nullptr) data_preview_->show_config(doc_.config(), /*now=*/values);
}

QString RunEditor::model_config_json() const {
    QString model = QString::fromStdString(doc_.config().model.path);
    if (model.isEmpty()) return QString();
    if (QDir::isRelativePath(model) && !resource_root_.isEmpty())
        model = QDir(resource_root_).absoluteFilePath(model);
    const QString own = model + QStringLiteral("/config.json");
    const QString copy = QString::fromStdString(planner_.model_config_for(doc_.config()));
    return QFileInfo::exists(own) || copy.isEmpty() ? own : copy;
}

void RunEditor::refresh_model_info() {
    const QString config = model_config_json();
    if (config == model_info_for_) return;
    model_info_for_ = config;
    if (config.isEmpty()) return;
    const Result<ModelShape> shape = read_model_config(QFile::encodeName(config).toStdString());
    if (!shape.ok()) return;  // the plan strip says why
    QStringList names = {QStringLiteral("all-linear")};
    for (const std::string& n : linear_module_names(*shape))
        names << QString::fromStdString(n);
    if (FieldEditor* f = field("/adapter/target_modules")) {
        f->set_choices(names);
        f->set_value(doc_.value("/adapter/target_modules"));
    }
}

void RunEditor::show_model_picker() {
    const QString config = model_config_json();
    const Result<ModelShape> shape =
        config.isEmpty() ? Result<ModelShape>::Error("model.path is empty: choose the model folder first")
                         : read_model_config(QFile::encodeName(config).toStdString());
    QStringList targets;
    for (const std::string& t : doc_.config().adapter.target_modules)
        targets << QString::fromStdString(t);
    model_picker_->show_model(shape, config, targets, doc_.config().adapter.uses_lora());
    model_picker_->open();
}

QString RunEditor::derived_text() const {
    const RunConfig& c = doc_.config();
    QString text = tr("<b>Derived</b><br>World size: %1 node(s) x %2 task(s) = %3 rank(s)<br>"
                      "Global batch: %4 per device x %5 accumulation x %3 ranks = <b>%6 sequences</b><br>"
                      "Tokens per optimizer step: %6 x %7 = <b>%8</b>")
                       .arg(c.slurm.nodes)
                       .arg(c.tasks_per_node())
                       .arg(c.world_size())
                       .arg(c.training.per_device_train_batch_size)
                       .arg(c.training.gradient_accumulation_steps)
                       .arg(c.global_batch_size())
                       .arg(c.data.block_size)
                       .arg(human_count(static_cast<double>(c.tokens_per_step())));
    // Memory and time: the plan strip under the pages.
    if (plan_.plan) {
        text += tr("<br>Model: %1 parameters, %2 trainable (%3); memory per device and time: the plan below")
                    .arg(human_count(static_cast<double>(plan_.plan->parameters)))
                    .arg(human_count(static_cast<double>(plan_.plan->trainable_parameters)))
                    .arg(QString::fromStdString(c.adapter.method));
    }
    return text + cluster_info_;
}

void RunEditor::refresh_plan() {
    // Arithmetic over the config, and config.json read only when its path or time changed: fast enough
    // for every keystroke. An invalid config has no plan (its numbers may be out of range).
    if (doc_.valid()) {
        plan_ = planner_.plan(doc_.config());
    } else {
        plan_ = RunPlanResult{};
        plan_.problem = tr("none while the run config has problems").toStdString();
    }
    plan_strip_->show_plan(plan_, QString::fromStdString(planner_.model_config_for(doc_.config())));
}

void RunEditor::set_model_config(const QString& config_json) {
    planner_.set_model_config(QFile::encodeName(config_json).toStdString(), doc_.config().model.path);
    refresh_model_info();
    refresh_plan();
    derived_->setText(derived_text());
}

bool RunEditor::choose_model_config() {
    const QString path = QFileDialog::getOpenFileName(this, tr("The model's config.json (a local copy)"),
                                                      QString(), tr("config.json (*.json)"));
    if (path.isEmpty()) return false;
    set_model_config(path);
    return true;
}

void RunEditor::request_submit() {
    if (!plan_.plan || plan_.plan->fits) {
        emit submit_requested();
        return;
    }
    const plan::Plan& p = *plan_.plan;
    auto* box =
        new QMessageBox(QMessageBox::Warning, tr("Submit"),
                        tr("The plan says this run does not fit: peak %1 per device, %2 available.")
                            .arg(plan_bytes_text(p.per_device_bytes), plan_bytes_text(p.device_bytes)),
                        QMessageBox::NoButton, this);
    box->setObjectName(QStringLiteral("plan_warning"));
    box->setInformativeText(QString::fromStdString(p.reason));
    box->setDetailedText(QString::fromStdString(plan::format_plan(p)));
    QPushButton* anyway = box->addButton(tr("Submit anyway"), QMessageBox::AcceptRole);
    box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::finished, this, [this, box, anyway] {
        if (box->clickedButton() == anyway) emit submit_requested();
    });
    box->open();
}

QString RunEditor::submit_target() const {
    return target_->currentIndex() <= 0 ? QString() : target_->currentText();
}

void RunEditor::set_profiles(const std::vector<remote::ClusterProfile>& profiles) {
    profiles_ = profiles;
    if (target_ != nullptr) {
        const QString chosen = target_->currentText();
        const QSignalBlocker block(target_);
        target_->clear();
        target_->addItem(tr("This computer"));
        for (const remote::ClusterProfile& p : profiles_)
            target_->addItem(QString::fromStdString(p.name));
        const int i = target_->findText(chosen);
        target_->setCurrentIndex(i >= 0 ? i : 0);
    }
    const QString current = sbatch_profile_->currentText();
    const QSignalBlocker block(sbatch_profile_);
    sbatch_profile_->clear();
    for (const remote::ClusterProfile& p : profiles_)
        sbatch_profile_->addItem(QString::fromStdString(p.name));
    sbatch_profile_->addItem(tr("(example cluster)"));
    // Keep a chosen cluster; otherwise the first real one (the example only when there is none).
    const int i = sbatch_profile_->findText(current);
    sbatch_profile_->setCurrentIndex(i >= 0 && i < static_cast<int>(profiles_.size()) ? i : 0);
    refresh_renders();
}

void RunEditor::set_partitions(const QStringList& partitions, const QString& cluster,
                               const QString& summary) {
    if (!summary.isEmpty()) {
        cluster_info_ =
            tr("<br>Cluster %1 (sinfo): %2").arg(cluster.toHtmlEscaped(), summary.toHtmlEscaped());
        derived_->setText(derived_text());
    }
    FieldEditor* f = field("/slurm/partition");
    auto* line = f != nullptr ? qobject_cast<QLineEdit*>(f->input()) : nullptr;
    if (line == nullptr) return;
    line->setCompleter(new QCompleter(partitions, line));
    line->setPlaceholderText(tr("sinfo: %1").arg(partitions.join(QStringLiteral(", "))));
}

remote::ClusterProfile RunEditor::sbatch_profile() const {
    const int i = sbatch_profile_->currentIndex();
    if (i >= 0 && i < static_cast<int>(profiles_.size())) return profiles_[static_cast<size_t>(i)];
    remote::ClusterProfile example;
    example.name = "example";
    example.host = "login.example.org";
    example.remote_workdir = "~/slipway";
    example.container = doc_.config().slurm.container_image.empty() ? remote::ContainerMode::kNone
                                                                    : remote::ContainerMode::kPyxis;
    return example;
}

void RunEditor::refresh_renders() {
    if (container_ == nullptr || sbatch_ == nullptr) return;  // still being built
    const RunConfig& c = doc_.config();
    refresh_container();
    const Result<std::string> sbatch = remote::render_sbatch_script(c, sbatch_profile());
    sbatch_->setPlainText(sbatch.ok()
                              ? QString::fromStdString(*sbatch)
                              : tr("# Cannot render the sbatch script:\n# %1")
                                    .arg(QString::fromStdString(sbatch.error()).replace('\n', "\n# ")));
}

void RunEditor::refresh_container() {
    if (container_ == nullptr) return;
    const RunConfig& c = doc_.config();
    QString base;
    if (catalogue_) {
        const std::optional<std::string> tag = remote::ngc_pytorch_tag(c.container.base);
        const remote::NgcImage* image = tag ? catalogue_->find(*tag) : nullptr;
        base = image != nullptr ? tr("<b>%1</b>: %2")
                                      .arg(QString::fromStdString(image->image()),
                                           QString::fromStdString(image->summary()))
                                : tr("%1 is not in the NGC PyTorch catalogue (%2 images known)")
                                      .arg(QString::fromStdString(c.container.base))
                                      .arg(catalogue_->images.size());
    }
    remote::DockerfileOptions options;
    options.catalogue = catalogue_ ? &*catalogue_ : nullptr;
    // Packages as typed, torch or unpinned ones too: the linter points at them. Build stays disabled
    // until the config is valid, and a build renders with validation.
    options.require_valid_config = false;
    container_->show_dockerfile(base, remote::render_dockerfile(c, options));
    container_->update_actions(c, doc_.valid(), target_profile());
}

QPlainTextEdit* RunEditor::dockerfile_preview() const {
    return container_->dockerfile_view();
}

std::optional<remote::ClusterProfile> RunEditor::target_profile() const {
    if (target_ == nullptr) return std::nullopt;  // still being built
    const QString name = submit_target();
    for (const remote::ClusterProfile& p : profiles_) {
        if (!name.isEmpty() && QString::fromStdString(p.name) == name) return p;
    }
    return std::nullopt;
}

Status RunEditor::load_file(const QString& path) {
    Result<RunDocument> doc = RunDocument::from_file(QFile::encodeName(path).toStdString());
    if (!doc.ok()) return doc.status();
    set_document(*doc);
    return Status::Ok();
}

Status RunEditor::save_file(const QString& path) {
    return doc_.save(QFile::encodeName(path).toStdString());
}

Result<QStringList> RunEditor::import_script(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        return Result<QStringList>::Error("cannot read " + path.toStdString() + ": " +
                                          f.errorString().toStdString());
    }
    Result<ScriptImport> imported = import_training_script(f.readAll().toStdString(), doc_.config());
    if (!imported.ok()) return Result<QStringList>::Error(path.toStdString() + ": " + imported.error());
    RunDocument doc(imported->config);
    set_document(doc);
    QStringList notes;
    for (const std::string& n : imported->notes)
        notes << QString::fromStdString(n);
    return notes;
}

void RunEditor::reload_presets() {
    const QString current = presets_->currentText();
    presets_->clear();
    const QList<Preset> presets = list_presets(resource_root_, installed_ui_language());
    QStringList names;
    for (const Preset& p : presets) {
        names << (p.user ? p.name + tr(" (mine)") : p.name);
        presets_->addItem(names.back(), p.path);
    }
    const int i = presets_->findText(current);
    if (i >= 0) presets_->setCurrentIndex(i);
    gallery_->set_presets(presets, names);
}

void RunEditor::show_preset_gallery() {
    gallery_->select(presets_->currentText());
    gallery_dialog_->open();
}

Status RunEditor::load_preset(const QString& name) {
    const int i = presets_->findText(name);
    if (i < 0) return Status::Error("no preset named " + name.toStdString());
    presets_->setCurrentIndex(i);
    return load_file(presets_->itemData(i).toString());
}

Status RunEditor::save_preset(const QString& name) {
    if (!QDir().mkpath(user_preset_dir()))
        return Status::Error("cannot create " + user_preset_dir().toStdString());
    const Status s = save_file(user_preset_dir() + QLatin1Char('/') + name + QStringLiteral(".json"));
    if (s.ok()) {
        reload_presets();
        presets_->setCurrentIndex(presets_->findText(name + tr(" (mine)")));
    }
    return s;
}

}  // namespace slipway::app
