// The Clusters page's first-run guide for one cluster: the environment its runs use (the image under a
// container runtime, the partition, GPUs per node; the image remembered per cluster), "Build engine" with
// the build job's log streamed below, and "Run the demo on this cluster". It only draws and asks: the page
// runs the EngineBuildJob and the window submits the demo.
#pragma once

#include <QStringList>
#include <QWidget>

#include <string>

#include "clusters/environment_choice.h"
#include "clusters/job_output.h"
#include "remote/slurm/cluster_profile.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace slipway::app {

class EnginePanel : public QWidget {
    Q_OBJECT

public:
    explicit EnginePanel(QWidget* parent = nullptr);

    // Another cluster than the one shown resets the inputs (the image to the one last used there) and
    // clears the last build's output. `partitions`: the partition names its last test found (the first is
    // offered first), `gpu_partitions` those of them with GPUs.
    void show_cluster(const remote::ClusterProfile& profile, const QStringList& partitions,
                      const QStringList& gpu_partitions);
    const std::string& cluster() const { return cluster_; }

    EnvironmentChoice choice() const;
    // Remembers the chosen image for the cluster (QSettings), for the next start.
    void remember_choice() const;

    void set_building(bool building);
    void append_output(const QStringList& lines);
    void show_result(bool ok, const QString& message);

    QLineEdit* image_edit() const { return image_; }
    QComboBox* partition_box() const { return partition_; }
    QSpinBox* gpus_box() const { return gpus_; }
    QPushButton* build_button() const { return build_; }
    QPushButton* cancel_button() const { return cancel_; }
    QPushButton* demo_button() const { return demo_; }
    QPlainTextEdit* output_view() const { return output_->log_view(); }
    QLabel* result_label() const { return output_->result_label(); }

signals:
    void build_requested();
    void cancel_requested();
    void demo_requested();

private:
    std::string cluster_;
    bool builds_ = false;  // the profile's engine source is "build"
    QStringList gpu_partitions_;
    QLabel* intro_;
    QLabel* image_label_;
    QLineEdit* image_;
    QComboBox* partition_;
    QSpinBox* gpus_;
    QPushButton* build_;
    QPushButton* cancel_;
    QPushButton* demo_;
    JobOutput* output_;
};

}  // namespace slipway::app
