// Heartbeat (heartbeat.h): a counter per rank in the store, bumped from a thread; silence detection.
#include "dist/heartbeat.h"

#include <torch/csrc/distributed/c10d/Store.hpp>

namespace slipway::dist {

Heartbeat::Heartbeat(c10::intrusive_ptr<c10d::Store> store, int64_t rank, int64_t world_size,
                     std::chrono::milliseconds interval)
    : store_(std::move(store)), rank_(rank), world_size_(world_size), interval_(interval) {
    thread_ = std::thread([this] { run(); });
}

Heartbeat::~Heartbeat() { stop(); }

std::string Heartbeat::key(int64_t rank) { return "slipway/heartbeat/" + std::to_string(rank); }

void Heartbeat::stop() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void Heartbeat::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
        try {
            store_->add(key(rank_), 1);
        } catch (const std::exception&) {
            // The store is gone (rank 0 exited): the collective that depends on it reports the failure.
        }
        wake_.wait_for(lock, interval_, [this] { return stopping_; });
    }
}

Heartbeat::Silence Heartbeat::find_silent_ranks(std::chrono::milliseconds watch) {
    Silence result;
    auto read_all = [&](std::vector<int64_t>& counters) -> bool {
        std::lock_guard<std::mutex> lock(mutex_);  // one request at a time on this connection
        try {
            for (int64_t r = 0; r < world_size_; ++r)
                counters[static_cast<size_t>(r)] = store_->add(key(r), 0);
            return true;
        } catch (const std::exception& e) {
            result.store_error = e.what();
            return false;
        }
    };
    std::vector<int64_t> before(static_cast<size_t>(world_size_)), after(before.size());
    if (!read_all(before)) return result;
    std::this_thread::sleep_for(watch);
    if (!read_all(after)) return result;
    for (int64_t r = 0; r < world_size_; ++r) {
        if (r != rank_ && after[static_cast<size_t>(r)] == before[static_cast<size_t>(r)])
            result.silent_ranks.push_back(r);
    }
    return result;
}

}  // namespace slipway::dist
