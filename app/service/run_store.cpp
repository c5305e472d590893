// StoredRun's remote record and kind, and the clock rows keep their times by.
#include "service/run_store.h"

#include <chrono>
#include <ctime>

namespace slipway::app {

remote::RunRecord StoredRun::remote_record() const {
    remote::RunRecord out;
    out.run_id = run_id.empty() ? std::to_string(id) : run_id;
    out.name = name;
    out.cluster = cluster;
    out.job_id = job_id;
    out.slurm_cluster = slurm_cluster;
    out.remote_dir = remote_dir;
    if (out.remote_dir.empty()) {
        const size_t slash = log_path.rfind('/');
        if (slash != std::string::npos) out.remote_dir = log_path.substr(0, slash);
    }
    out.submitted = remote::utc_timestamp(static_cast<std::time_t>(created_ms / 1000));
    out.last_state = slurm_state.empty() ? std::string(to_db_text(state)) : slurm_state;
    return out;
}

int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

RunKind StoredRun::kind() const {
    if (cluster == kLocalCluster) return RunKind::kLocal;
    if (cluster.empty() || cluster == kOpenedLogCluster) return RunKind::kLogFile;
    // A submission has a run id from its start (a job id once sbatch answered; rows older than run ids had
    // theirs at once); a log opened by hand has neither.
    return job_id.empty() && run_id.empty() ? RunKind::kClusterLog : RunKind::kClusterJob;
}

}  // namespace slipway::app
