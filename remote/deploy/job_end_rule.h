// When a Slurm job's end is its run's end. A job being requeued (by its own script after the time limit's
// checkpoint, or by Slurm on a preemption) can look ended (FAILED, PREEMPTED, COMPLETED) for a while before
// it is PENDING again; a watcher that stops at the first ended state loses the run's next part. One rule
// for `slipway follow` (run_follow.h) and the app's run tracker.
#pragma once

#include <chrono>
#include <string_view>

namespace slipway::remote {

class JobEndRule {
public:
    struct Options {
        // An end counts once Slurm has said it for this long, over two polls at least.
        std::chrono::milliseconds settle{5000};
        // After the job's log announced a requeue (sbatch_script.h's kRequeueAnnouncement): how long the job
        // may look ended before that counts (the requeue was refused, or the job cancelled meanwhile).
        std::chrono::milliseconds requeue_wait{180000};
    };
    enum class Verdict {
        kLive,    // not ended
        kBack,    // live again after looking ended: it was requeued
        kEnding,  // looks ended; not counted yet
        kEnded,   // the run's end
    };

    JobEndRule() = default;
    explicit JobEndRule(Options options) : options_(options) {}

    // A line of the job's log, in order.
    void saw_log_line(std::string_view text);
    // Slurm's state at a poll, `since_last` after the previous poll.
    Verdict saw_state(std::string_view state, std::chrono::milliseconds since_last);

    bool requeue_announced() const { return requeue_announced_; }

private:
    Options options_;
    bool requeue_announced_ = false;
    int ended_polls_ = 0;                     // polls in a row that saw the job ended
    std::chrono::milliseconds ended_for_{0};  // the time they span
};

}  // namespace slipway::remote
