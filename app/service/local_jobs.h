// The engines one long-lived caller runs on This computer (the app's window), each under the caller's key,
// until it exits: also after the caller stopped showing it, so its end is still stored. What such a caller
// needs beyond one LocalJob: every engine polled from one timer, the engine of a stored row found, and all
// of them stopped together when it closes. Qt-free; nothing here blocks but close_all().
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "service/local_executor.h"

namespace slipway::app {

class LocalJobs {
public:
    // An engine that has exited: its end is stored in its row already (unless the store refused: why).
    struct Ended {
        int key = 0;
        LocalEnd end;
        std::string store_problem;
    };

    LocalJobs() = default;
    LocalJobs(const LocalJobs&) = delete;
    LocalJobs& operator=(const LocalJobs&) = delete;
    ~LocalJobs();  // close_all(kClosedWhileRunningDetail, kClosingGrace) for any still held

    // `key` must not hold an engine already.
    void add(int key, LocalJob job);
    LocalJob* find(int key);
    // The key of the engine whose row is `store_id`; 0 when none of them runs it.
    int key_of_run(int64_t store_id) const;
    // The engine under `from` goes under `to` (its run is shown again under a new key); false when there
    // is none under `from` or one under `to` already.
    bool rekey(int from, int to);
    bool empty() const { return jobs_.empty(); }
    int size() const { return static_cast<int>(jobs_.size()); }

    // The engines that have exited since the last poll, in key order, and no longer held. A stop not
    // obeyed within its grace turns into SIGKILL here (LocalJob::poll).
    std::vector<Ended> poll();
    // Slipway is closing: every engine is asked to stop at once (its end stored interrupted, with `why`)
    // and all are waited for together, `grace` and a little more at most; then none is held. Returns how
    // many were still running when asked.
    int close_all(const std::string& why, std::chrono::milliseconds grace);

private:
    std::map<int, LocalJob> jobs_;
};

}  // namespace slipway::app
