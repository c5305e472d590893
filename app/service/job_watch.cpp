// JobWatch and JobsWatch: JobEndRule over polls for one job, and the one watcher over all of them.
#include "service/job_watch.h"

#include <algorithm>
#include <set>

namespace slipway::app {

JobWatch::Judgment JobWatch::saw(std::string_view word, std::string_view log_status, Clock::time_point now) {
    const auto since_last = last_answer_
                                ? std::chrono::duration_cast<std::chrono::milliseconds>(now - *last_answer_)
                                : std::chrono::milliseconds(0);
    last_answer_ = now;
    return {from_slurm(word, log_status), rule_.saw_state(word, since_last)};
}

bool JobsWatch::ask(const std::string& cluster, const std::string& job) {
    return !job.empty() && asked_.emplace(Key{cluster, job}, kFollowedJob).second;
}

std::vector<std::string> JobsWatch::to_ask(const std::string& cluster,
                                           const std::vector<std::string>& followed,
                                           const std::vector<StoredRun>* rows,
                                           const std::function<bool(const StoredRun&)>& is_followed) {
    std::vector<std::string> jobs;
    for (const std::string& job : followed) {
        if (ask(cluster, job)) jobs.push_back(job);
    }
    if (rows == nullptr) return jobs;
    // Jobs whose rows ended elsewhere (the CLI, a follower) need their watch no more.
    for (auto it = watches_.begin(); it != watches_.end();) {
        const bool live = std::any_of(rows->begin(), rows->end(), [&](const StoredRun& row) {
            return row.cluster == it->first.first && row.job_id == it->first.second && is_live(row.state);
        });
        it = it->first.first == cluster && !live ? watches_.erase(it) : std::next(it);
    }
    for (const StoredRun& row : *rows) {
        if (row.cluster != cluster || row.job_id.empty() || !is_live(row.state) || is_followed(row)) continue;
        if (asked_.emplace(Key{cluster, row.job_id}, row.id).second) jobs.push_back(row.job_id);
    }
    return jobs;
}

bool JobsWatch::answered(RunStore* store, const std::string& cluster, const std::string& job_id,
                         const std::optional<remote::JobInfo>& job, JobWatch::Clock::time_point now,
                         const std::function<bool(int64_t row)>& is_followed_row) {
    store_problem_.clear();
    const auto asked = asked_.find({cluster, job_id});
    if (asked == asked_.end()) return false;
    const int64_t row = asked->second;
    const Key key = asked->first;
    asked_.erase(asked);
    if (row == kFollowedJob || store == nullptr) return false;
    // A failed question is asked again at the next poll; a row followed by now is its follower's.
    if (!job || (is_followed_row && is_followed_row(row))) return false;
    JobWatch& watch = watches_.try_emplace(key, options_).first->second;
    const JobWatch::Judgment judged = watch.saw(job->state, {}, now);
    if (judged.verdict == JobWatch::Verdict::kEnded) watches_.erase(key);
    // An ended-looking word not yet counted leaves the row live: it is asked again.
    if (!judged.counts()) return false;
    const Status stored = store->set_state(row, judged.state, job->node_list + job->reason_suffix(),
                                           job->state, StateWrite::kIfNotEnded);
    store_problem_ = stored.ok() ? std::string() : stored.message();
    return stored.ok();
}

void JobsWatch::forget_cluster(const std::string& cluster) {
    for (auto it = asked_.begin(); it != asked_.end();)
        it = it->first.first == cluster ? asked_.erase(it) : std::next(it);
}

LiveJobsCheck check_live_jobs(RunStore& store, const std::vector<StoredRun>& rows, const AskJobs& ask,
                              const std::function<void(std::chrono::milliseconds)>& wait,
                              remote::JobEndRule::Options rule) {
    JobsWatch watch(rule);
    LiveJobsCheck out;
    std::set<std::string> clusters;
    for (const StoredRun& row : rows)
        if (is_live(row.state) && !row.job_id.empty()) clusters.insert(row.cluster);
    // The watch's clock: a second round is the settle time after the first, as `wait` slept it.
    JobWatch::Clock::time_point now = JobWatch::Clock::now();
    auto ask_all = [&] {
        bool ending = false;
        for (const std::string& cluster : clusters) {
            const std::vector<std::string> jobs =
                watch.to_ask(cluster, {}, &rows, [](const StoredRun&) { return false; });
            if (jobs.empty()) continue;
            std::map<std::string, Result<remote::JobInfo>> answers = ask(cluster, jobs);
            for (const std::string& job : jobs) {
                const auto it = answers.find(job);
                Result<remote::JobInfo> info =
                    it != answers.end()
                        ? std::move(it->second)
                        : Result<remote::JobInfo>(Status::Error("Slurm did not answer for job " + job));
                const std::optional<remote::JobInfo> answer =
                    info.ok() ? std::optional<remote::JobInfo>(*info) : std::nullopt;
                const bool stored = watch.answered(&store, cluster, job, answer, now);
                if (!watch.store_problem().empty()) {
                    out.store_problems.push_back(watch.store_problem());
                } else if (answer && remote::is_terminal_state(answer->state) && !stored) {
                    ending = true;
                }
                out.answers.insert_or_assign(JobKey{cluster, job}, std::move(info));
            }
        }
        return ending;
    };
    if (ask_all()) {
        wait(rule.settle);
        now += rule.settle;
        ask_all();
    }
    return out;
}

}  // namespace slipway::app
