// Following a submitted run to its end: its slurm-N.out through LogFollower (complete lines, MLLOG
// parsed) and its Slurm state through SlurmClient, until the job is over. A lost connection (or a call
// that times out) is retried with backoff for up to `outage_limit`, so a login node that reboots or a
// flaky network does not end the watch; lines are neither lost nor repeated across the gap. A job that is
// requeued (after its time limit, or on a preemption) is followed on into its next run. While a job runs on
// several nodes, their Slurm states are asked every `node_interval` and reported when they change.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "contract/mllog_stream.h"
#include "contract/status.h"
#include "remote/deploy/job_end_rule.h"
#include "remote/deploy/job_nodes.h"
#include "remote/deploy/run_record.h"
#include "remote/slurm/slurm_client.h"
#include "remote/ssh/session.h"

namespace slipway::remote {

struct RunFollowOptions {
    std::chrono::milliseconds interval{2000};  // between polls
    std::chrono::seconds outage_limit{300};    // how long a lost connection is retried before giving up
    // When an ended-looking job is the run's end (a job being requeued looks ended for a moment).
    JobEndRule::Options end_rule;
    std::chrono::milliseconds node_interval{10000};  // between sinfo's of a running job's nodes
    // How time passes (tests pass one that returns at once).
    std::function<void(std::chrono::milliseconds)> sleep;
};

struct RunFollowCallbacks {
    std::function<void(MllogStreamItem&& item)> on_line;       // every complete log line, in order
    std::function<void(const JobInfo& job)> on_state;          // each new Slurm state
    std::function<void(const std::string& notice)> on_notice;  // reconnects, truncation
    // The Slurm states of the nodes of a job on several nodes, when they change (asked only when set).
    std::function<void(const std::vector<NodeState>& nodes)> on_nodes;
};

struct RunFollowOutcome {
    JobInfo job;                  // the final state
    std::string run_stop_status;  // metadata.status of the log's run_stop, if one was seen
    int reconnects = 0;
    // COMPLETED; or UNKNOWN (Slurm forgot the job) with a successful run_stop in the log.
    bool success() const;
};

Result<RunFollowOutcome> follow_run(Session& session, SlurmClient& slurm, const RunRecord& record,
                                    const RunFollowOptions& options, const RunFollowCallbacks& callbacks);

}  // namespace slipway::remote
