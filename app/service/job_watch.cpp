// JobWatch and StoredJobsWatch: JobEndRule over polls, for a followed job and for the store's other jobs.
#include "service/job_watch.h"

#include <algorithm>

namespace slipway::app {

JobWatch::Judgment JobWatch::saw(std::string_view word, std::string_view log_status, Clock::time_point now) {
    const auto since_last = last_answer_
                                ? std::chrono::duration_cast<std::chrono::milliseconds>(now - *last_answer_)
                                : std::chrono::milliseconds(0);
    last_answer_ = now;
    return {from_slurm(word, log_status), rule_.saw_state(word, since_last)};
}

std::vector<std::string> StoredJobsWatch::to_ask(const std::vector<StoredRun>& rows,
                                                 const std::string& cluster,
                                                 const std::function<bool(const StoredRun&)>& followed) {
    std::vector<std::string> jobs;
    // Jobs whose rows ended elsewhere (the CLI, a follower) need their watch no more.
    for (auto it = watches_.begin(); it != watches_.end();) {
        const bool live = std::any_of(rows.begin(), rows.end(), [&](const StoredRun& row) {
            return row.cluster == it->first.first && row.job_id == it->first.second && is_live(row.state);
        });
        it = it->first.first == cluster && !live ? watches_.erase(it) : std::next(it);
    }
    for (const StoredRun& row : rows) {
        if (row.cluster != cluster || row.job_id.empty() || !is_live(row.state) || followed(row)) continue;
        if (!asked_.emplace(Key{cluster, row.job_id}, row.id).second)
            continue;  // its answer has not come yet
        jobs.push_back(row.job_id);
    }
    return jobs;
}

bool StoredJobsWatch::answered(RunStore& store, const std::string& cluster, const std::string& job_id,
                               const std::optional<remote::JobInfo>& job, JobWatch::Clock::time_point now,
                               const std::function<bool(int64_t row)>& followed) {
    const auto asked = asked_.find({cluster, job_id});
    if (asked == asked_.end()) return false;
    const int64_t row = asked->second;
    const Key key = asked->first;
    asked_.erase(asked);
    if (!job || (followed && followed(row))) return false;  // asked again at the next poll, or not ours
    JobWatch& watch = watches_.try_emplace(key, options_).first->second;
    const JobWatch::Judgment judged = watch.saw(job->state, {}, now);
    if (judged.verdict == JobWatch::Verdict::kEnded) watches_.erase(key);
    // An ended-looking word not yet counted leaves the row live: it is asked again.
    if (!judged.counts()) return false;
    return store
        .set_state(row, judged.state, job->node_list + job->reason_suffix(), job->state,
                   StateWrite::kIfNotEnded)
        .ok();
}

void StoredJobsWatch::forget_cluster(const std::string& cluster) {
    for (auto it = asked_.begin(); it != asked_.end();)
        it = it->first.first == cluster ? asked_.erase(it) : std::next(it);
}

}  // namespace slipway::app
