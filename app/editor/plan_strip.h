// The run editor's plan strip, under every page: "peak X GiB of Y GiB per device (fits / does not fit)",
// step time, time to train and tokens per step, with the planner's full breakdown in a tooltip and behind
// Details; when the model's config.json is on the cluster, it says so and offers to pick a local copy.
// It only draws a RunPlanResult (editor/run_plan.h) and forwards the pick.
#pragma once

#include <QFrame>
#include <QString>

#include "editor/run_plan.h"

class QLabel;
class QPushButton;
class QToolButton;

namespace slipway::app {

class PlanStrip : public QFrame {
    Q_OBJECT

public:
    explicit PlanStrip(QWidget* parent = nullptr);

    void show_plan(const RunPlanResult& result, const QString& picked_model_config);

    QLabel* summary() const { return summary_; }
    QLabel* details() const { return details_; }
    QPushButton* model_config_button() const { return model_config_; }
    QToolButton* details_button() const { return details_button_; }

signals:
    // Choose a local config.json...: the editor asks for the file.
    void model_config_requested();

private:
    QLabel* summary_;
    QPushButton* model_config_;
    QToolButton* details_button_;
    QLabel* details_;
};

// "72.1 GiB", "512.0 MiB".
QString plan_bytes_text(int64_t bytes);
// "2.05 B", "15.0 M", "8.2 k", "512" (parameters, tokens).
QString human_count(double v);
// "12.3 s", "41 min", "3.5 h", "2.1 days".
QString plan_duration_text(double seconds);

}  // namespace slipway::app
