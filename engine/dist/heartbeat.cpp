// Heartbeat (heartbeat.h): a counter per rank in the store, bumped from a thread; silence detection with
// deadlines.
#include "dist/heartbeat.h"

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "dist/deadline.h"

namespace slipway::dist {

Heartbeat::Heartbeat(c10::intrusive_ptr<c10d::Store> beat_store, c10::intrusive_ptr<c10d::Store> probe_store,
                     int64_t rank, int64_t world_size, std::chrono::milliseconds interval)
    : shared_(std::make_shared<Shared>()), rank_(rank), world_size_(world_size), interval_(interval) {
    shared_->beat_store = std::move(beat_store);
    shared_->probe_store = std::move(probe_store);
    thread_ = std::thread([shared = shared_, rank, key = key(rank), progress_key = progress_key(rank),
                           interval] {
        std::unique_lock<std::mutex> lock(shared->mutex);
        int64_t published = -1;  // nothing to publish until the trainer marks a point
        bool failure_seen = false;
        const std::string own_failure_prefix = std::to_string(rank) + ":";
        while (!shared->stopping) {
            lock.unlock();  // never hold the lock across a network call
            std::optional<std::string> failure;
            try {
                shared->beat_store->add(key, 1);
                if (const int64_t progress = shared->progress.load(); progress != published) {
                    const std::string value = std::to_string(progress);
                    shared->beat_store->set(progress_key, std::vector<uint8_t>(value.begin(), value.end()));
                    published = progress;  // a long step does not rewrite the same value every beat
                }
                if (!failure_seen && shared->beat_store->check({failure_key()})) {
                    const std::vector<uint8_t> bytes = shared->beat_store->get(failure_key());
                    if (std::string record(bytes.begin(), bytes.end());
                        record.rfind(own_failure_prefix, 0) != 0)
                        failure = std::move(record);
                }
            } catch (const std::exception&) {
                // The store is gone (rank 0 exited): the collective that depends on it reports the failure.
            }
            lock.lock();
            if (failure) {
                shared->seen_failure = *failure;
                failure_seen = true;
                lock.unlock();
                try {  // kept first, acknowledged second: rank 0 may exit as soon as it reads this
                    shared->beat_store->set(failure_seen_key(rank), std::vector<uint8_t>{1});
                } catch (const std::exception&) {
                }
                lock.lock();
            }
            shared->wake.wait_for(lock, interval, [&] { return shared->stopping; });
        }
    });
}

Heartbeat::~Heartbeat() {
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        shared_->stopping = true;
    }
    shared_->wake.notify_all();
    if (thread_.joinable()) thread_.join();
}

void Heartbeat::detach() {
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        shared_->stopping = true;
    }
    shared_->wake.notify_all();
    if (thread_.joinable()) thread_.detach();
}

std::string Heartbeat::key(int64_t rank) {
    return "slipway/heartbeat/" + std::to_string(rank);
}

std::string Heartbeat::progress_key(int64_t rank) {
    return "slipway/progress/" + std::to_string(rank);
}

std::string Heartbeat::failure_key() {
    return "slipway/failed";
}

std::string Heartbeat::failure_seen_key(int64_t rank) {
    return "slipway/failure_seen/" + std::to_string(rank);
}

std::optional<std::string> Heartbeat::seen_failure() const {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    return shared_->seen_failure;
}

bool Heartbeat::publish(const std::string& key, const std::string& value, std::chrono::milliseconds limit) {
    try {
        return run_with_deadline<bool>(
                   [shared = shared_, key, value] {
                       std::lock_guard<std::mutex> lock(shared->probe_mutex);
                       shared->probe_store->set(key, std::vector<uint8_t>(value.begin(), value.end()));
                       return true;
                   },
                   limit)
            .value_or(false);
    } catch (const std::exception&) {
        return false;
    }
}

std::optional<std::string> Heartbeat::read(const std::string& key, std::chrono::milliseconds limit) {
    try {
        return run_with_deadline<std::optional<std::string>>(
                   [shared = shared_, key]() -> std::optional<std::string> {
                       std::lock_guard<std::mutex> lock(shared->probe_mutex);
                       if (!shared->probe_store->check({key})) return std::nullopt;
                       const std::vector<uint8_t> bytes = shared->probe_store->get(key);
                       return std::string(bytes.begin(), bytes.end());
                   },
                   limit)
            .value_or(std::nullopt);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::optional<int64_t> Heartbeat::progress_of(int64_t rank, std::chrono::milliseconds limit) {
    const std::optional<std::string> text = read(progress_key(rank), limit);
    if (!text) return std::nullopt;
    try {
        return std::stoll(*text);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::optional<int64_t> Heartbeat::beats_of(int64_t rank, std::chrono::milliseconds limit) {
    return run_with_deadline<int64_t>(
        [shared = shared_, key = key(rank)] {
            std::lock_guard<std::mutex> lock(shared->probe_mutex);
            return shared->probe_store->add(key, 0);
        },
        limit);
}

Heartbeat::Silence Heartbeat::find_silent_ranks(std::chrono::milliseconds watch) {
    Silence result;
    const auto limit = std::chrono::milliseconds(3000);
    auto read_all = [&](std::vector<int64_t>& counters) -> bool {
        try {
            for (int64_t r = 0; r < world_size_; ++r) {
                const std::optional<int64_t> beats = beats_of(r, limit);
                if (!beats) {
                    result.store_error = "no answer within " + std::to_string(limit.count() / 1000) + " s";
                    return false;
                }
                counters[static_cast<size_t>(r)] = *beats;
            }
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
