// JobEndRule (see job_end_rule.h).
#include "remote/deploy/job_end_rule.h"

#include <string>

#include "remote/slurm/sbatch_script.h"
#include "remote/slurm/slurm_parsers.h"

namespace slipway::remote {

void JobEndRule::saw_log_line(std::string_view text) {
    if (text.find(kRequeueAnnouncement) != std::string_view::npos) requeue_announced_ = true;
}

JobEndRule::Verdict JobEndRule::saw_state(std::string_view state, std::chrono::milliseconds since_last) {
    const bool ended = is_terminal_state(std::string(state)) || state == "UNKNOWN";
    if (ended) {
        if (ended_polls_ > 0) ended_for_ += since_last;
        ++ended_polls_;
        const std::chrono::milliseconds needed = requeue_announced_ ? options_.requeue_wait : options_.settle;
        return ended_polls_ >= 2 && ended_for_ >= needed ? Verdict::kEnded : Verdict::kEnding;
    }
    const bool back = ended_polls_ > 0;
    // Back in the queue: a later end is the end, unless announced again.
    if (back || state == "PENDING") requeue_announced_ = false;
    ended_polls_ = 0;
    ended_for_ = std::chrono::milliseconds{0};
    return back ? Verdict::kBack : Verdict::kLive;
}

}  // namespace slipway::remote
