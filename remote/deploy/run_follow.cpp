// follow_run (see run_follow.h).
#include "remote/deploy/run_follow.h"
#include "contract/mllog_keys.h"

#include <algorithm>
#include <optional>
#include <thread>

#include "remote/runlog/log_follower.h"

namespace slipway::remote {
namespace {

bool is_connection_problem(StatusCode code) {
    return code == StatusCode::kUnavailable || code == StatusCode::kTimeout;
}

}  // namespace

bool RunFollowOutcome::success() const {
    return is_success_state(job.state) ||
           (job.state == "UNKNOWN" && run_stop_status == slipway::run_stop_status::kSuccess);
}

Result<RunFollowOutcome> follow_run(Session& session, SlurmClient& slurm, const RunRecord& record,
                                    const RunFollowOptions& options, const RunFollowCallbacks& callbacks) {
    std::chrono::milliseconds since_state{0};  // slept since the last state poll
    std::chrono::milliseconds since_nodes{0};  // slept since the last sinfo of the job's nodes
    const auto sleep = [&options, &since_state, &since_nodes](std::chrono::milliseconds d) {
        since_state += d;
        since_nodes += d;
        if (options.sleep)
            options.sleep(d);
        else
            std::this_thread::sleep_for(d);
    };
    auto notice = [&](const std::string& text) {
        if (callbacks.on_notice) callbacks.on_notice(text);
    };
    RunFollowOutcome outcome;
    JobEndRule end_rule(options.end_rule);
    LogFollower follower(
        std::make_unique<SessionFileSource>(session, record.slurm_log()), [&](MllogStreamItem&& item) {
            if (item.kind == MllogLineKind::kEvent && item.event.key == mllog_key::kRunStop)
                outcome.run_stop_status = item.event.metadata_string(mllog_field::kStatus).value_or("");
            if (item.kind == MllogLineKind::kText) end_rule.saw_log_line(item.text);
            if (callbacks.on_line) callbacks.on_line(std::move(item));
        });

    // Time spent without a working connection, measured in the sleeps we took (so tests need no clock).
    std::chrono::milliseconds outage{0};
    std::chrono::milliseconds backoff = options.interval;
    auto recover = [&](const Status& problem) -> Status {
        if (!is_connection_problem(problem.code())) return problem;
        if (outage >= options.outage_limit) {
            return Status::Error(problem.code(), "gave up after " +
                                                     std::to_string(options.outage_limit.count()) +
                                                     " s without a connection: " + problem.message());
        }
        notice("connection problem (" + problem.message() + "); retrying in " +
               std::to_string(backoff.count()) + " ms");
        sleep(backoff);
        outage += backoff;
        backoff = std::min(backoff * 2, std::chrono::milliseconds(30000));
        if (Status s = session.reconnect(); s.ok()) {
            ++outcome.reconnects;
            notice("reconnected to " + session.describe());
        }
        return Status::Ok();
    };

    std::string last_state;
    std::optional<std::vector<NodeState>> last_nodes;  // nullopt: not asked in this run of the job
    // The states of the job's nodes, at the first poll that finds it running on several and then at the
    // interval; a failed sinfo is said once and does not end the watch.
    bool nodes_problem_said = false;
    auto poll_nodes = [&](const JobInfo& job) {
        if (!callbacks.on_nodes || job.state != "RUNNING" || !spans_several_nodes(job.node_list)) {
            last_nodes.reset();
            return;
        }
        if (last_nodes && since_nodes < options.node_interval) return;
        since_nodes = std::chrono::milliseconds{0};
        Result<std::vector<NodeState>> states = job_node_states(slurm, job.node_list);
        if (!states.ok()) {
            if (!nodes_problem_said) notice("the states of nodes " + job.node_list + ": " + states.error());
            nodes_problem_said = true;
            return;
        }
        if (!last_nodes || *last_nodes != *states) callbacks.on_nodes(*states);
        last_nodes = std::move(*states);
    };
    bool ending = false;  // the job is over: one more read of the log, then stop
    while (true) {
        Result<PollResult> polled = follower.poll();
        if (!polled.ok()) {
            if (Status s = recover(polled.status()); !s.ok()) return s;
            continue;
        }
        outcome.reconnects += polled->reconnects;
        if (polled->restarted)
            notice(record.slurm_log() + " was truncated or replaced; reading it from the start");
        if (ending) {
            follower.finish();
            return outcome;
        }
        Result<JobInfo> job = slurm.job(record.job_id);
        if (!job.ok()) {
            if (Status s = recover(job.status()); !s.ok()) return s;
            continue;
        }
        outage = std::chrono::milliseconds{0};
        backoff = options.interval;
        outcome.job = *job;
        if (job->state != last_state) {
            last_state = job->state;
            if (callbacks.on_state) callbacks.on_state(*job);
        }
        poll_nodes(*job);
        const JobEndRule::Verdict verdict = end_rule.saw_state(job->state, since_state);
        since_state = std::chrono::milliseconds{0};
        if (verdict == JobEndRule::Verdict::kEnded) {
            ending = true;  // read what the job wrote before it ended
            continue;
        }
        if (verdict == JobEndRule::Verdict::kBack)
            notice("job " + record.job_id + " is " + job->state + " again (requeued): following it on");
        sleep(options.interval);
    }
}

}  // namespace slipway::remote
