// The Container page below the fields: what the NGC base brings, the live Dockerfile preview with the
// linter's findings beside it (a click selects the finding's line in the preview), and the image actions:
// the tag, "Build image" and "Import to .sqsh" (disabled with the reason as tooltip when they cannot run),
// their streamed output and result. It shows and asks; the window runs the ImageJob.
#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>

#include <optional>
#include <string>

#include "contract/run_config.h"
#include "contract/status.h"
#include "images/image_tasks.h"
#include "remote/slurm/cluster_profile.h"

class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QPushButton;

namespace slipway::app {

class ContainerPanel : public QWidget {
    Q_OBJECT

public:
    explicit ContainerPanel(QWidget* parent = nullptr);

    // The base image line, and the Dockerfile (or why it cannot be rendered), linted at once.
    void show_dockerfile(const QString& base_summary, const Result<std::string>& dockerfile);
    // Enables the buttons for this config and target (null: This computer), with their reasons.
    void update_actions(const RunConfig& config, bool config_valid,
                        const std::optional<remote::ClusterProfile>& target);
    void set_running(bool running);
    void append_output(const QStringList& lines);
    void show_result(bool ok, const QString& message);
    // The tag typed, else the run's default one.
    QString image_tag() const;

    QPlainTextEdit* dockerfile_view() const { return dockerfile_; }
    QListWidget* findings() const { return findings_; }
    QLabel* findings_summary() const { return findings_summary_; }
    QLineEdit* tag_edit() const { return tag_; }
    QPushButton* build_button() const { return build_; }
    QPushButton* import_button() const { return import_; }
    QPlainTextEdit* output_view() const { return output_; }
    QLabel* result_label() const { return result_; }
    QLabel* hint_label() const { return hint_; }  // why a button is disabled
    // Selects line `line` (1-based) of the preview, as a click on a finding does.
    void select_line(int line);

signals:
    void image_task_requested(slipway::app::ImageAction action, const QString& image);

private:
    void refresh_actions();

    QLabel* base_image_;
    QPlainTextEdit* dockerfile_;
    QLabel* findings_summary_;
    QListWidget* findings_;
    QLineEdit* tag_;
    QPushButton* build_;
    QPushButton* import_;
    QLabel* hint_;
    QLabel* result_;
    QPlainTextEdit* output_;
    // What the buttons were last computed for.
    RunConfig config_;
    bool config_valid_ = false;
    std::optional<remote::ClusterProfile> target_;
    bool running_ = false;
};

}  // namespace slipway::app
