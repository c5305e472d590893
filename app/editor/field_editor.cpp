// FieldEditor: schema row -> control; value <-> JSON; problem highlight.
#include "editor/field_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

#include <map>

#include "contract/hf_flags.h"

namespace slipway::app {
namespace {

bool is_path_field(const FieldSpec& s) {
    if (s.type != FieldType::kString) return false;
    const std::string& k = s.key;
    return k == "path" || k.find("_file") != std::string::npos || k.find("_dir") != std::string::npos;
}

QString list_text(const nlohmann::json& v) {
    QStringList parts;
    if (v.is_array()) {
        for (const auto& e : v)
            parts << (e.is_string() ? QString::fromStdString(e.get<std::string>())
                                    : QString::fromStdString(e.dump()));
    }
    return parts.join(QStringLiteral(", "));
}

}  // namespace

QString field_unit(const std::string& pointer) {
    static const std::map<std::string, const char*> units = {
        {"/data/block_size", QT_TRANSLATE_NOOP("FieldUnit", "tokens")},
        {"/data/validation_split_percentage", "%"},
        {"/data/preprocessing_num_workers", QT_TRANSLATE_NOOP("FieldUnit", "threads")},
        {"/training/num_train_epochs", QT_TRANSLATE_NOOP("FieldUnit", "epochs")},
        {"/training/max_steps", QT_TRANSLATE_NOOP("FieldUnit", "steps")},
        {"/training/warmup_steps", QT_TRANSLATE_NOOP("FieldUnit", "steps")},
        {"/training/warmup_ratio", QT_TRANSLATE_NOOP("FieldUnit", "share of steps")},
        {"/training/per_device_train_batch_size", QT_TRANSLATE_NOOP("FieldUnit", "sequences")},
        {"/training/per_device_eval_batch_size", QT_TRANSLATE_NOOP("FieldUnit", "sequences")},
        {"/training/gradient_accumulation_steps", QT_TRANSLATE_NOOP("FieldUnit", "micro-steps")},
        {"/training/logging_steps", QT_TRANSLATE_NOOP("FieldUnit", "steps")},
        {"/training/eval_steps", QT_TRANSLATE_NOOP("FieldUnit", "steps")},
        {"/training/save_steps", QT_TRANSLATE_NOOP("FieldUnit", "steps")},
        {"/training/save_total_limit", QT_TRANSLATE_NOOP("FieldUnit", "checkpoints")},
        {"/training/learning_rate", QT_TRANSLATE_NOOP("FieldUnit", "per step")},
        {"/distributed/bucket_mb", QT_TRANSLATE_NOOP("FieldUnit", "MiB")},
        {"/distributed/timeout_s", QT_TRANSLATE_NOOP("FieldUnit", "s")},
        {"/slurm/nodes", QT_TRANSLATE_NOOP("FieldUnit", "nodes")},
        {"/slurm/gpus_per_node", QT_TRANSLATE_NOOP("FieldUnit", "GPUs")},
        {"/slurm/ntasks_per_node", QT_TRANSLATE_NOOP("FieldUnit", "tasks")},
        {"/slurm/cpus_per_task", QT_TRANSLATE_NOOP("FieldUnit", "CPUs")},
        {"/slurm/time", "[D-]HH:MM:SS"},
    };
    const auto it = units.find(pointer);
    return it == units.end() ? QString() : QCoreApplication::translate("FieldUnit", it->second);
}

QString field_label(const FieldSpec& spec) {
    return QCoreApplication::translate("RunConfigField", spec.label.c_str());
}

QString field_group(const FieldSpec& spec) {
    return QCoreApplication::translate("RunConfigField", spec.group.c_str());
}

QString field_help(const FieldSpec& spec) {
    return QCoreApplication::translate("RunConfigFieldHelp", spec.help.c_str());
}

QString field_key_text(const FieldSpec& spec) {
    const std::string flag = hf_flag_for(spec.pointer());
    QString text = QString::fromStdString(spec.key);
    if (!flag.empty() && flag != spec.key) text += QStringLiteral("  --") + QString::fromStdString(flag);
    return text;
}

FieldEditor::FieldEditor(const FieldSpec& spec, QWidget* parent)
    : QWidget(parent), spec_(spec), pointer_(spec.pointer()) {
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(1);
    auto* row = row_ = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    column->addLayout(row);

    // Label and help first, then the names and bounds a person who writes the JSON needs.
    QString tip = QStringLiteral("<b>%1</b><br>%2<br>JSON: <code>%3</code> (%4%5)")
                      .arg(field_label(spec).toHtmlEscaped(), field_help(spec).toHtmlEscaped(),
                           QString::fromStdString(pointer_), QString::fromLatin1(field_type_name(spec.type)),
                           spec.nullable ? tr(", may be empty") : QString());
    if (const std::string flag = hf_flag_for(pointer_); !flag.empty())
        tip += tr("<br>Script flag: <code>--%1</code>").arg(QString::fromStdString(flag));
    if (const std::string range = spec.range_text(); !range.empty()) {
        tip += tr("<br>Range: %1").arg(QString::fromStdString(range).toHtmlEscaped());
    }
    if (const QString unit = field_unit(pointer_); !unit.isEmpty()) tip += tr("<br>Unit: %1").arg(unit);
    setToolTip(tip);

    if (spec.type == FieldType::kBool) {
        check_ = new QCheckBox(this);
        row->addWidget(check_);
        connect(check_, &QCheckBox::toggled, this, [this](bool on) {
            if (!updating_) emit edited(pointer_, on);
        });
    } else if (spec.type == FieldType::kString && !spec.choices.empty()) {
        combo_ = new QComboBox(this);
        for (const std::string& c : spec.choices)
            combo_->addItem(QString::fromStdString(c));
        row->addWidget(combo_);
        connect(combo_, &QComboBox::currentTextChanged, this, [this](const QString& text) {
            if (!updating_) emit edited(pointer_, text.toStdString());
        });
    } else if (pointer_ == "/adapter/target_modules") {
        list_ = new QListWidget(this);
        list_->setMaximumHeight(150);
        row->addWidget(list_);
        connect(list_, &QListWidget::itemChanged, this, [this] {
            if (!updating_) emit_list();
        });
    } else {
        line_ = new QLineEdit(this);
        if (spec.nullable) line_->setPlaceholderText(tr("empty = unset"));
        if (spec.type == FieldType::kStringList) line_->setPlaceholderText(tr("comma-separated"));
        if (spec.type == FieldType::kStringIntMap || spec.type == FieldType::kStringNumberMap ||
            spec.type == FieldType::kStringStringMap) {
            line_->setPlaceholderText(tr("JSON object, e.g. {\"name\": value}"));
        }
        row->addWidget(line_, 1);
        connect(line_, &QLineEdit::textEdited, this,
                [this](const QString& text) { emit edited(pointer_, parse_text(text)); });
        if (is_path_field(spec)) {
            auto* browse = new QPushButton(tr("Browse..."), this);
            row->addWidget(browse);
            const bool folder = spec.key.find("_dir") != std::string::npos || spec_.section == "model";
            connect(browse, &QPushButton::clicked, this,
                    [this, folder] { emit browse_requested(pointer_, folder); });
        }
    }
    const bool numeric = spec.type == FieldType::kInt || spec.type == FieldType::kNumber;
    if (line_ != nullptr && numeric) {
        line_->setMaximumWidth(220);
        row->setStretch(0, 0);
    }
    // The unit right after the value it qualifies ("128 tokens"); short controls leave the rest empty.
    if (const QString unit = field_unit(pointer_); !unit.isEmpty()) {
        auto* unit_label = new QLabel(unit, this);
        unit_label->setStyleSheet(QStringLiteral("color: #757575;"));
        unit_label->setIndent(4);
        row->addWidget(unit_label);
    }
    if (check_ != nullptr || combo_ != nullptr || numeric) row->addStretch(1);
    error_label_ = new QLabel(this);
    error_label_->setStyleSheet(QStringLiteral("color: #c62828;"));
    error_label_->setWordWrap(true);
    error_label_->hide();
    column->addWidget(error_label_);
}

QWidget* FieldEditor::input() const {
    if (check_ != nullptr) return check_;
    if (combo_ != nullptr) return combo_;
    if (list_ != nullptr) return list_;
    return line_;
}

nlohmann::json FieldEditor::parse_text(const QString& raw) const {
    const QString text = raw.trimmed();
    switch (spec_.type) {
        case FieldType::kInt:
        case FieldType::kNumber: {
            if (text.isEmpty()) return nullptr;
            bool ok = false;
            if (spec_.type == FieldType::kInt) {
                const qlonglong v = text.toLongLong(&ok);
                if (ok) return static_cast<int64_t>(v);
            }
            const double d = text.toDouble(&ok);
            if (ok) return d;
            return text.toStdString();  // validation says "must be a number, got ..."
        }
        case FieldType::kStringList: {
            nlohmann::json list = nlohmann::json::array();
            for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
                if (!part.trimmed().isEmpty()) list.push_back(part.trimmed().toStdString());
            }
            return list;
        }
        case FieldType::kStringIntMap:
        case FieldType::kStringNumberMap:
        case FieldType::kStringStringMap: {
            if (text.isEmpty()) return nlohmann::json::object();
            nlohmann::json j = nlohmann::json::parse(text.toStdString(), nullptr, false);
            return j.is_discarded() ? nlohmann::json(text.toStdString()) : j;
        }
        default:
            return raw.toStdString();
    }
}

void FieldEditor::set_value(const nlohmann::json& value) {
    updating_ = true;
    if (check_ != nullptr) {
        check_->setChecked(value.is_boolean() && value.get<bool>());
    } else if (combo_ != nullptr) {
        const QString text = value.is_string() ? QString::fromStdString(value.get<std::string>()) : QString();
        int i = combo_->findText(text);
        if (i < 0 && !text.isEmpty()) {
            combo_->addItem(text);  // an invalid value stays visible (and flagged)
            i = combo_->count() - 1;
        }
        combo_->setCurrentIndex(i);
    } else if (list_ != nullptr) {
        for (int i = 0; i < list_->count(); ++i)
            list_->item(i)->setCheckState(Qt::Unchecked);
        if (value.is_array()) {
            for (const auto& e : value) {
                if (!e.is_string()) continue;
                const QString name = QString::fromStdString(e.get<std::string>());
                QList<QListWidgetItem*> found = list_->findItems(name, Qt::MatchExactly);
                QListWidgetItem* item = found.isEmpty() ? new QListWidgetItem(name, list_) : found.front();
                item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
                item->setCheckState(Qt::Checked);
            }
        }
    } else if (line_ != nullptr) {
        QString text;
        if (value.is_string()) {
            text = QString::fromStdString(value.get<std::string>());
        } else if (value.is_array()) {
            text = list_text(value);
        } else if (value.is_object()) {
            text = value.empty() ? QString() : QString::fromStdString(value.dump());
        } else if (value.is_number_integer()) {
            text = QString::number(value.get<int64_t>());
        } else if (value.is_number()) {
            text = QString::number(value.get<double>(), 'g', 10);
        }
        if (line_->text() != text) {
            line_->setText(text);
            line_->setCursorPosition(0);  // a long value shows its beginning
        }
    }
    updating_ = false;
}

void FieldEditor::add_action(QWidget* action) {
    row_->addWidget(action);
}

void FieldEditor::set_browsed(const QString& path) {
    if (line_ == nullptr || path.isEmpty()) return;
    line_->setText(path);
    emit edited(pointer_, path.toStdString());
}

void FieldEditor::set_choices(const QStringList& names) {
    if (list_ == nullptr) return;
    // The offered names first, in the model's order; names typed in before (not offered) after them.
    QStringList checked;
    QStringList extra;
    for (int i = 0; i < list_->count(); ++i) {
        const QString text = list_->item(i)->text();
        if (list_->item(i)->checkState() == Qt::Checked) checked << text;
        if (!names.contains(text) && list_->item(i)->checkState() == Qt::Checked) extra << text;
    }
    updating_ = true;
    list_->clear();
    for (const QString& name : names + extra) {
        auto* item = new QListWidgetItem(name, list_);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(checked.contains(name) ? Qt::Checked : Qt::Unchecked);
    }
    updating_ = false;
}

void FieldEditor::emit_list() {
    nlohmann::json list = nlohmann::json::array();
    for (int i = 0; i < list_->count(); ++i) {
        if (list_->item(i)->checkState() == Qt::Checked) list.push_back(list_->item(i)->text().toStdString());
    }
    emit edited(pointer_, list);
}

void FieldEditor::set_problem(const QString& message) {
    if (message == problem_) return;
    problem_ = message;
    QWidget* w = input();
    w->setStyleSheet(message.isEmpty() ? QString()
                                       : QStringLiteral("border: 1px solid #c62828; background: #fdecea;"));
    error_label_->setText(message);
    error_label_->setVisible(!message.isEmpty());
}

}  // namespace slipway::app
