// One run config field as a widget, made from its row in the declarative schema
// (engine/contract/run_config_schema.h): a check box, a choice box, or a line edit for text, numbers,
// lists and maps, with the field's help, JSON pointer, seed flag, range and unit in its tooltip, and the
// texts of its row label (the human label, the JSON key and flag under it). Edits are reported as JSON values
// (text that is not a number is passed on as a string, so validation names the mistake); a problem
// message turns the field red and shows under it.
#pragma once

#include <QWidget>

#include <nlohmann/json.hpp>

#include "contract/run_config_schema.h"

class QCheckBox;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QListWidget;

namespace slipway::app {

// The unit shown next to a field ("tokens", "steps", "s", ...), "" when it has none.
QString field_unit(const std::string& pointer);
// The schema's English label and group, translated for display (context "RunConfigField"), and its help
// sentence (context "RunConfigFieldHelp").
QString field_label(const FieldSpec& spec);
QString field_group(const FieldSpec& spec);
QString field_help(const FieldSpec& spec);
// The field's names for people who know the JSON or the seed's scripts: "r  --lora_rank"; the flag only
// when its name differs from the JSON key.
QString field_key_text(const FieldSpec& spec);

class FieldEditor : public QWidget {
    Q_OBJECT

public:
    explicit FieldEditor(const FieldSpec& spec, QWidget* parent = nullptr);

    const FieldSpec& spec() const { return spec_; }
    std::string pointer() const { return pointer_; }
    // Shows `value` without emitting edited().
    void set_value(const nlohmann::json& value);
    // "" clears the highlight.
    void set_problem(const QString& message);
    QString problem() const { return problem_; }
    // For the LoRA target list: offers these names as check boxes (others typed in stay too).
    void set_choices(const QStringList& names);
    QWidget* input() const;  // the control the user edits
    // Adds a button (or another widget) after the input, e.g. the model folder's "Model...".
    void add_action(QWidget* action);
    // Puts a browsed path in the field as if typed.
    void set_browsed(const QString& path);

signals:
    void edited(const std::string& pointer, const nlohmann::json& value);
    // Browse... was clicked: the editor decides where (this computer's files, or a cluster's over SSH).
    void browse_requested(const std::string& pointer, bool folder);

private:
    nlohmann::json parse_text(const QString& text) const;
    void emit_list();

    FieldSpec spec_;
    std::string pointer_;
    QString problem_;
    QCheckBox* check_ = nullptr;
    QComboBox* combo_ = nullptr;
    QLineEdit* line_ = nullptr;
    QListWidget* list_ = nullptr;  // target_modules
    QLabel* error_label_ = nullptr;
    QHBoxLayout* row_ = nullptr;  // the input, its buttons, its unit
    bool updating_ = false;
};

}  // namespace slipway::app
