// WorkerPool: a fixed set of threads that run one job together and wait for each other. Threads live as
// long as the pool, so per-thread state (the tokenizer's word cache) stays warm from batch to batch.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace slipway {

class WorkerPool {
public:
    // `size` workers in all, the calling thread included (0 = all cores).
    explicit WorkerPool(unsigned size = 0);
    ~WorkerPool();
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    unsigned size() const { return size_; }
    // Runs job(worker) on every worker (0 .. size-1, 0 on the calling thread) and returns when all are done.
    // An exception a job throws (std::bad_alloc, say) is rethrown here once every worker is done, the first
    // one when several throw: never std::terminate on a worker thread.
    void run(const std::function<void(unsigned worker)>& job);

private:
    void loop(unsigned worker);
    void run_one(const std::function<void(unsigned)>& job, unsigned worker);  // keeps what it throws

    unsigned size_;
    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable start_, done_;
    const std::function<void(unsigned)>* job_ = nullptr;
    uint64_t generation_ = 0;
    unsigned running_ = 0;
    bool stop_ = false;
    std::exception_ptr error_;  // the job's first exception in this run
};

}  // namespace slipway
