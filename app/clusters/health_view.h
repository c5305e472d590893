// The Health view of the Clusters page: the cluster's last `slipway doctor` report (saved by the CLI in
// $XDG_DATA_HOME/slipway/doctor), one row per node with its verdict (ok / slow / failed), measured busbw
// against the expected figure, GPU check, rendezvous and reasons, and the nodes `submit --exclude-bad` leaves
// out. Above it, Run doctor: partition, node list, deadline (and the image under a container runtime),
// defaulted from the profile as the CLI's options are, Run and Cancel, the run's streamed progress and its
// result. It only draws and asks: the report comes from remote/slurm/doctor_report.h, the page runs the
// DoctorJob.
#pragma once

#include <QStringList>
#include <QWidget>

#include <string>

#include "clusters/cluster_doctor.h"
#include "clusters/job_output.h"
#include "remote/slurm/cluster_profile.h"
#include "remote/slurm/doctor_report.h"

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace slipway::app {

class HealthView : public QWidget {
    Q_OBJECT

public:
    explicit HealthView(QWidget* parent = nullptr);

    // Shows the cluster's last saved report, or how to make one. Another cluster than the one shown resets
    // the doctor's inputs to its defaults and clears the last run's output.
    void show_cluster(const remote::ClusterProfile& profile);
    void show_report(const remote::DoctorReport& report);
    const std::string& cluster() const { return cluster_; }

    // The CLI's options with what the inputs say.
    DoctorOptions doctor_options() const;
    void set_running(bool running);
    void append_output(const QStringList& lines);
    void show_result(bool ok, const QString& message);

    QString summary_text() const;
    QTableWidget* table() const { return table_; }
    QLineEdit* partition_edit() const { return partition_; }
    QLineEdit* nodelist_edit() const { return nodelist_; }
    QSpinBox* deadline_box() const { return deadline_; }
    QLineEdit* image_edit() const { return image_; }
    QPushButton* run_button() const { return run_; }
    QPushButton* cancel_button() const { return cancel_; }
    QPlainTextEdit* output_view() const { return output_->log_view(); }
    QLabel* result_label() const { return output_->result_label(); }

signals:
    void run_requested();
    void cancel_requested();

private:
    std::string cluster_;
    QLineEdit* partition_;
    QLineEdit* nodelist_;
    QSpinBox* deadline_;
    QLineEdit* image_;
    QLabel* image_label_;
    QPushButton* run_;
    QPushButton* cancel_;
    JobOutput* output_;
    QLabel* summary_;
    QTableWidget* table_;
};

}  // namespace slipway::app
