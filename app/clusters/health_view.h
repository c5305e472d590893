// The Health view of the Clusters page: the cluster's last `slipway doctor` report (saved by the CLI in
// $XDG_DATA_HOME/slipway/doctor), one row per node with its verdict (ok / slow / failed), measured busbw
// against the expected figure, GPU check, rendezvous and reasons, and the nodes `submit --exclude-bad` leaves
// out. It only draws: the report comes from remote/slurm/doctor_report.h.
#pragma once

#include <QWidget>

#include <string>

#include "remote/slurm/doctor_report.h"

class QLabel;
class QTableWidget;

namespace slipway::app {

class HealthView : public QWidget {
    Q_OBJECT

public:
    explicit HealthView(QWidget* parent = nullptr);

    // Shows the cluster's last saved report, or how to make one.
    void show_cluster(const std::string& cluster);
    void show_report(const remote::DoctorReport& report);

    QString summary_text() const;
    QTableWidget* table() const { return table_; }

private:
    QLabel* summary_;
    QTableWidget* table_;
};

}  // namespace slipway::app
