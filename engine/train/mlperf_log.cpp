// The MLPerf submission and block lines of mlperf_log.h, in the order the submitters' logs have them.
#include "train/mlperf_log.h"
#include "contract/mllog_keys.h"

#include <unistd.h>

#include <fstream>

namespace slipway::train {

// The reference scripts run `sync; echo 3 > /proc/sys/vm/drop_caches` as root before each run.
bool drop_page_cache() {
    ::sync();
    std::ofstream drop("/proc/sys/vm/drop_caches");
    drop << "3\n";
    drop.flush();
    return drop.good();
}

void MlperfLog::log_submission() {
    if (!enabled()) return;
    // The value says whether this process could clear the cache; the checker asks only for the line.
    writer_.point_in_time(mllog_key::kCacheClear, drop_page_cache());
    writer_.point_in_time(mllog_key::kSubmissionBenchmark, config_.benchmark);
    writer_.point_in_time(mllog_key::kSubmissionOrg, config_.org);
    writer_.point_in_time(mllog_key::kSubmissionDivision, config_.division);
    writer_.point_in_time(mllog_key::kSubmissionStatus, config_.status);
    writer_.point_in_time(mllog_key::kSubmissionPlatform, config_.platform);
}

void MlperfLog::before_step(int64_t samples_count) {
    if (!enabled() || in_block_) return;
    writer_.interval_start(mllog_key::kBlockStart, nullptr, {{mllog_field::kSamplesCount, samples_count}});
    in_block_ = true;
}

void MlperfLog::end_block(int64_t samples_count) {
    if (!enabled() || !in_block_) return;
    writer_.interval_end(mllog_key::kBlockStop, nullptr, {{mllog_field::kSamplesCount, samples_count}});
    in_block_ = false;
}

}  // namespace slipway::train
