// The engines a long-lived caller runs on This computer (see local_jobs.h).
#include "service/local_jobs.h"

#include <cassert>
#include <thread>

namespace slipway::app {

LocalJobs::~LocalJobs() {
    if (!jobs_.empty()) (void)close_all(kClosedWhileRunningDetail, kClosingGrace);
}

void LocalJobs::add(int key, LocalJob job) {
    const bool added = jobs_.emplace(key, std::move(job)).second;
    assert(added && "a key holds one engine");
    (void)added;
}

LocalJob* LocalJobs::find(int key) {
    const auto it = jobs_.find(key);
    return it == jobs_.end() ? nullptr : &it->second;
}

int LocalJobs::key_of_run(int64_t store_id) const {
    if (store_id == 0) return 0;
    for (const auto& [key, job] : jobs_) {
        if (job.run().id == store_id) return key;
    }
    return 0;
}

bool LocalJobs::rekey(int from, int to) {
    const auto it = jobs_.find(from);
    if (it == jobs_.end() || jobs_.count(to) != 0) return false;
    LocalJob job = std::move(it->second);
    jobs_.erase(it);
    jobs_.emplace(to, std::move(job));
    return true;
}

std::vector<LocalJobs::Ended> LocalJobs::poll() {
    std::vector<Ended> ended;
    for (auto it = jobs_.begin(); it != jobs_.end();) {
        std::optional<LocalEnd> end = it->second.poll();
        if (!end) {
            ++it;
            continue;
        }
        ended.push_back(Ended{it->first, std::move(*end), it->second.store_problem()});
        it = jobs_.erase(it);
    }
    return ended;
}

int LocalJobs::close_all(const std::string& why, std::chrono::milliseconds grace) {
    int running = 0;
    for (auto& [key, job] : jobs_) {
        if (!job.poll().has_value()) ++running;
        job.interrupt(why, grace);
    }
    // The grace, then a moment for the SIGKILL that poll() sends to be reaped.
    const auto deadline = std::chrono::steady_clock::now() + grace + std::chrono::seconds(2);
    bool waiting = running > 0;
    while (waiting && std::chrono::steady_clock::now() < deadline) {
        waiting = false;
        for (auto& [key, job] : jobs_)
            waiting = !job.poll().has_value() || waiting;
        if (waiting) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    jobs_.clear();
    return running;
}

}  // namespace slipway::app
