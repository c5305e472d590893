// EngineBuildJob: find_or_queue_engine and wait_for_engine on a ClusterJob's worker thread (see
// engine_build_job.h).
#include "clusters/engine_build_job.h"

#include <QElapsedTimer>

#include "remote/slurm/slurm_client.h"

namespace slipway::app {

void EngineBuildJob::start(RunConfig config, remote::EngineBundle bundle, std::chrono::milliseconds poll) {
    const QString host = QString::fromStdString(profile().host);
    start_work(
        [host](const QString& error) { return tr("Could not connect to %1: %2").arg(host, error); },
        [this, config, bundle, poll](remote::Session& session) -> Done {
            QElapsedTimer timer;
            timer.start();
            remote::SlurmClient slurm(session);
            Result<remote::EnginePlace> place =
                remote::find_or_queue_engine(session, slurm, config, profile(), bundle);
            if (!place.ok())
                return {false,
                        tr("The engine cannot be built: %1").arg(QString::fromStdString(place.error()))};
            if (place->cached()) {
                place_ = *place;
                return {true,
                        tr("The engine is there already: %1").arg(QString::fromStdString(place->engine))};
            }
            queue_line(tr("building the engine in job %1 (log %2)")
                           .arg(QString::fromStdString(place->build_job),
                                QString::fromStdString(remote::engine_build_log(*place)))
                           .toStdString());
            remote::EngineBuildWatch watch;
            watch.poll = poll;
            watch.progress = [this](const std::string& state) {
                queue_line(tr("build job: %1").arg(QString::fromStdString(state)).toStdString());
            };
            watch.log_line = [this](const std::string& line) { queue_line(line); };
            watch.stop_requested = [this] { return stop_requested(); };
            if (const Status built = remote::wait_for_engine(session, slurm, *place, watch); !built.ok())
                return {false, QString::fromStdString(built.message())};
            place_ = *place;
            return {true, tr("Engine built in %1 s: %2")
                              .arg(timer.elapsed() / 1000)
                              .arg(QString::fromStdString(place->engine))};
        });
}

}  // namespace slipway::app
