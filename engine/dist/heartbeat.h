// Heartbeat: every rank bumps a counter in the rendezvous store twice a second from its own thread and
// its own store connection. When a collective fails, the ranks whose counters stopped moving are the
// ones lost (killed, frozen by SIGSTOP, or on a dead node); a dead master shows as an unreachable store.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <c10/util/intrusive_ptr.h>

namespace c10d {
class Store;
}

namespace slipway::dist {

class Heartbeat {
public:
    // `store` must be a connection of its own (the process group's is busy inside collectives).
    Heartbeat(c10::intrusive_ptr<c10d::Store> store, int64_t rank, int64_t world_size,
              std::chrono::milliseconds interval = std::chrono::milliseconds(500));
    ~Heartbeat();
    Heartbeat(const Heartbeat&) = delete;
    Heartbeat& operator=(const Heartbeat&) = delete;

    struct Silence {
        std::vector<int64_t> silent_ranks;  // counters that did not move while watched
        std::string store_error;            // non-empty: the store itself is gone (rank 0's process)
    };
    // Watches every other rank's counter for `watch` and reports those that did not move.
    Silence find_silent_ranks(std::chrono::milliseconds watch);
    // Stops the thread without touching the store again (for abandon()).
    void stop();

private:
    void run();
    static std::string key(int64_t rank);

    c10::intrusive_ptr<c10d::Store> store_;
    int64_t rank_, world_size_;
    std::chrono::milliseconds interval_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace slipway::dist
