// WorkerPool of worker_pool.h: a generation counter starts a job, a count of running workers ends it.
#include "util/worker_pool.h"

#include <utility>

namespace slipway {

WorkerPool::WorkerPool(unsigned size)
    : size_(size > 0 ? size : std::max(1u, std::thread::hardware_concurrency())) {
    for (unsigned w = 1; w < size_; ++w)
        threads_.emplace_back(&WorkerPool::loop, this, w);
}

WorkerPool::~WorkerPool() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    start_.notify_all();
    for (std::thread& t : threads_)
        t.join();
}

void WorkerPool::run(const std::function<void(unsigned)>& job) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        job_ = &job;
        running_ = size_ - 1;
        error_ = nullptr;
        ++generation_;
    }
    start_.notify_all();
    run_one(job, 0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return running_ == 0; });  // the others still use `job`, even after a throw
    job_ = nullptr;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void WorkerPool::run_one(const std::function<void(unsigned)>& job, unsigned worker) {
    try {
        job(worker);
    } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
    }
}

void WorkerPool::loop(unsigned worker) {
    uint64_t seen = 0;
    while (true) {
        const std::function<void(unsigned)>* job = nullptr;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            start_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            job = job_;
        }
        run_one(*job, worker);
        std::lock_guard<std::mutex> lock(mutex_);
        if (--running_ == 0) done_.notify_one();
    }
}

}  // namespace slipway
