// Heartbeat: every rank bumps a counter in the rendezvous store twice a second from its own thread and
// its own store connection. When a collective fails, the ranks whose counters stopped moving are the
// ones lost (killed, frozen by SIGSTOP, or on a dead node); a master that does not answer (rank 0 frozen
// or gone) shows as a store that gives no answer within the deadline. Nothing here can block forever.
//
// Each beat also publishes the rank's progress (a number its training thread sets as it passes points of
// a step): a rank that still beats but whose progress lags the others' has a hung training thread.
//
// Each beat also looks for another rank's failure record (failure_key(): a rank that failed on its own, not
// through a collective) and keeps it, then acknowledges it (failure_seen_key()): rank 0 hosts the store
// and waits for those acknowledgements before it exits, so the others still know why after it is gone.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
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
    // `beat_store` and `probe_store` must be connections of their own (the process group's is busy inside
    // collectives, and a beat stuck on a frozen master must not stop the probe).
    Heartbeat(c10::intrusive_ptr<c10d::Store> beat_store, c10::intrusive_ptr<c10d::Store> probe_store,
              int64_t rank, int64_t world_size,
              std::chrono::milliseconds interval = std::chrono::milliseconds(500));
    ~Heartbeat();
    Heartbeat(const Heartbeat&) = delete;
    Heartbeat& operator=(const Heartbeat&) = delete;

    struct Silence {
        std::vector<int64_t> silent_ranks;  // counters that did not move while watched
        std::string store_error;  // non-empty: the store itself is gone or frozen (rank 0's process)
    };
    // Watches every other rank's counter for `watch` and reports those that did not move; gives up on a
    // store that does not answer within `watch` + 3 s.
    Silence find_silent_ranks(std::chrono::milliseconds watch);
    // Rank `rank`'s counter now (nullopt: the store did not answer within `limit`).
    std::optional<int64_t> beats_of(int64_t rank, std::chrono::milliseconds limit);
    // Stops beating without waiting for a beat that may be stuck on a frozen master (for abandon()).
    void detach();

    // Published with the next beat (cheap: an atomic store).
    void set_progress(int64_t progress) { shared_->progress.store(progress); }
    // Rank `rank`'s last published progress; nullopt when none yet or the store did not answer.
    std::optional<int64_t> progress_of(int64_t rank, std::chrono::milliseconds limit);
    // Small records beside the counters (why a rank gave up), through the probe connection, with a deadline.
    bool publish(const std::string& key, const std::string& value, std::chrono::milliseconds limit);
    std::optional<std::string> read(const std::string& key, std::chrono::milliseconds limit);

    // Another rank's failure record seen by a beat: "<rank>:<message>" as published under failure_key().
    std::optional<std::string> seen_failure() const;

    static std::string key(int64_t rank);
    static std::string progress_key(int64_t rank);
    static std::string failure_key();
    static std::string failure_seen_key(int64_t rank);

private:
    void run();

    struct Shared {  // outlives the object when a thread is abandoned
        c10::intrusive_ptr<c10d::Store> beat_store, probe_store;
        std::mutex mutex;
        std::condition_variable wake;
        bool stopping = false;
        std::atomic<int64_t> progress{-1};
        std::mutex probe_mutex;                   // one request at a time on the probe connection
        std::optional<std::string> seen_failure;  // under `mutex`
    };
    std::shared_ptr<Shared> shared_;
    int64_t rank_, world_size_;
    std::chrono::milliseconds interval_;
    std::thread thread_;
};

}  // namespace slipway::dist
