// DoctorJob: `slipway doctor` on a ClusterJob's worker thread (see doctor_job.h).
#include "clusters/doctor_job.h"

#include "clusters/cluster_doctor.h"

namespace slipway::app {

void DoctorJob::start(DoctorOptions options) {
    const QString host = QString::fromStdString(profile().host);
    start_work([host](const QString& error) { return tr("Could not connect to %1: %2").arg(host, error); },
               [this, options](remote::Session& session) -> Done {
                   const Result<remote::DoctorOutcome> outcome = doctor_on_session(
                       session, profile(), options, [this](const std::string& line) { queue_line(line); },
                       [this] { return stop_requested(); });
                   if (!outcome.ok())
                       return {false, (stop_requested() ? tr("Cancelled: %1") : tr("The doctor failed: %1"))
                                          .arg(QString::fromStdString(outcome.error()))};
                   report_ = outcome->report;
                   const std::vector<std::string> bad = report_->bad_nodes();
                   if (report_->nodes.empty())
                       return {false, tr("The doctor job %1 ended %2 and no node reported.")
                                          .arg(QString::fromStdString(report_->job_id),
                                               QString::fromStdString(outcome->final_state))};
                   QStringList names;
                   for (const std::string& node : bad)
                       names << QString::fromStdString(node);
                   return {bad.empty(),
                           bad.empty()
                               ? tr("Every node ok (job %1).").arg(QString::fromStdString(report_->job_id))
                               : tr("Slow or failed: %1 (job %2).")
                                     .arg(names.join(QStringLiteral(", ")),
                                          QString::fromStdString(report_->job_id))};
               });
}

}  // namespace slipway::app
