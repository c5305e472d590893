// The MLPerf submission and block lines of mlperf_log.h, in the order the submitters' logs have them.
#include "train/mlperf_log.h"

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
    writer_.point_in_time("cache_clear", drop_page_cache());
    writer_.point_in_time("submission_benchmark", config_.benchmark);
    writer_.point_in_time("submission_org", config_.org);
    writer_.point_in_time("submission_division", config_.division);
    writer_.point_in_time("submission_status", config_.status);
    writer_.point_in_time("submission_platform", config_.platform);
}

void MlperfLog::before_step(int64_t samples_count) {
    if (!enabled() || in_block_) return;
    writer_.interval_start("block_start", nullptr, {{"samples_count", samples_count}});
    in_block_ = true;
}

void MlperfLog::end_block(int64_t samples_count) {
    if (!enabled() || !in_block_) return;
    writer_.interval_end("block_stop", nullptr, {{"samples_count", samples_count}});
    in_block_ = false;
}

}  // namespace slipway::train
