// The watcher's judgment of Slurm's answers over polls. A job being requeued (after its time limit, on a
// preemption) looks ended for a while; JobWatch keeps one job's answers spaced in time and its log's lines (a
// requeue its script announces) and says, by JobEndRule, whether an ended-looking word is the run's end yet.
// JobsWatch is the one watcher over all of a caller's jobs: which to ask at each poll, one question per
// cluster, and the store's answers for the jobs nobody here follows (submitted by another process). The
// app's tracker holds one JobWatch per followed cluster run and one JobsWatch; `slipway follow` has the same
// rule inside remote::follow_run; `slipway status`, which asks once, has check_live_jobs.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "contract/status.h"
#include "core/run_state.h"
#include "remote/deploy/job_end_rule.h"
#include "remote/slurm/slurm_parsers.h"
#include "service/run_store.h"

namespace slipway::app {

class JobWatch {
public:
    using Clock = std::chrono::steady_clock;
    using Verdict = remote::JobEndRule::Verdict;

    explicit JobWatch(remote::JobEndRule::Options options = {}) : rule_(options) {}

    struct Judgment {
        RunState state = RunState::kUnknown;  // Slurm's word as the run's state (with the log's run_stop)
        Verdict verdict = Verdict::kLive;
        // The state may be stored: a live one at once, an ended one only once it is the run's end.
        bool counts() const { return !is_terminal(state) || verdict == Verdict::kEnded; }
    };

    // A line of the job's log, in order.
    void saw_log_line(std::string_view text) { rule_.saw_log_line(text); }
    bool requeue_announced() const { return rule_.requeue_announced(); }
    // Slurm's word at a poll that answered at `now`; `log_status` is the log's run_stop status, if any.
    Judgment saw(std::string_view word, std::string_view log_status, Clock::time_point now);

private:
    remote::JobEndRule rule_;
    std::optional<Clock::time_point> last_answer_;
};

// The one watcher of a caller's Slurm jobs (the app's, as submitit's InfoWatcher is a script's): each poll
// asks every live job of a cluster in one question (one squeue), the jobs the caller follows and the store's
// others (another process submitted them) alike, and a job is asked again only once its last question was
// answered. An answer about a followed job is the follower's to judge (its JobWatch also reads the job's
// log); one about a stored job is judged here and stored once it counts.
class JobsWatch {
public:
    explicit JobsWatch(remote::JobEndRule::Options options = {}) : options_(options) {}

    // One followed job to ask about now (after its submission, its run_stop, a cancel): false when a question
    // about it is on its way already. It counts as asked until its answer (or forget_cluster).
    bool ask(const std::string& cluster, const std::string& job);
    // A poll's question to `cluster`: the `followed` jobs (the caller's live ones there) and, with `rows`,
    // the store's live jobs there that nobody here follows (`is_followed(row)`: a submission whose answer is
    // on its way counts as followed); a job whose last question is unanswered is left out. Pass no rows when
    // the cluster's session is not up: the store's jobs never cause a new login.
    std::vector<std::string> to_ask(const std::string& cluster, const std::vector<std::string>& followed,
                                    const std::vector<StoredRun>* rows,
                                    const std::function<bool(const StoredRun&)>& is_followed);
    // The answer to a question (`job` empty: the question failed). A stored job's state is stored in `store`
    // when it counts, unless its row is followed by now (`is_followed_row`: its follower stores it). True
    // when something was stored; false for a followed job's answer, an answer nobody asked for, or nothing
    // due.
    bool answered(RunStore* store, const std::string& cluster, const std::string& job_id,
                  const std::optional<remote::JobInfo>& job, JobWatch::Clock::time_point now,
                  const std::function<bool(int64_t row)>& is_followed_row = {});
    // The cluster's session went away: the answers asked of it will not come.
    void forget_cluster(const std::string& cluster);
    // Why the store refused the last answer it was to store; empty when it took it (or none was due).
    const std::string& store_problem() const { return store_problem_; }

private:
    using Key = std::pair<std::string, std::string>;  // (cluster, job)
    static constexpr int64_t kFollowedJob = 0;        // asked_'s row of a followed job (stores count from 1)
    remote::JobEndRule::Options options_;
    std::map<Key, int64_t> asked_;     // -> the stored row asked about, until its answer comes
    std::map<Key, JobWatch> watches_;  // the store's jobs, until they end
    std::string store_problem_;
};

// The live cluster jobs of `rows` asked by a command that asks once (`slipway status`), one `ask` (one
// squeue) per cluster, their answers stored as the end rule allows. An ended-looking answer is no end at its
// first poll (a job being requeued looks ended for a moment): then every cluster is asked again after the
// rule's settle time (`wait`, which sleeps), and an end is stored only if Slurm still says it. Returns each
// asked job's last answer, by (cluster, job), and what the store refused.
using JobKey = std::pair<std::string, std::string>;
using AskJobs = std::function<std::map<std::string, Result<remote::JobInfo>>(
    const std::string& cluster, const std::vector<std::string>& jobs)>;
struct LiveJobsCheck {
    std::map<JobKey, Result<remote::JobInfo>> answers;
    std::vector<std::string> store_problems;  // one a refused write
};
LiveJobsCheck check_live_jobs(RunStore& store, const std::vector<StoredRun>& rows, const AskJobs& ask,
                              const std::function<void(std::chrono::milliseconds)>& wait,
                              remote::JobEndRule::Options rule = {});

}  // namespace slipway::app
