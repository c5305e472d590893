// The raw NCCL communicator: the library answers without a GPU; collectives run where GPUs are visible
// and skip themselves (GTEST_SKIP) where none is, e.g. on the CPU-only CI machine.
#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "dist/nccl_communicator.h"

namespace {

using slipway::dist::DeviceBuffer;
using slipway::dist::KeyValueExchange;
using slipway::dist::NcclCommunicator;

// An in-process store: get() blocks until another thread's set().
class MemoryExchange {
public:
    KeyValueExchange exchange() {
        return {[this](const std::string& k, const std::string& v) {
                    std::lock_guard<std::mutex> lock(mutex_);
                    values_[k] = v;
                    changed_.notify_all();
                },
                [this](const std::string& k) {
                    std::unique_lock<std::mutex> lock(mutex_);
                    changed_.wait(lock, [&] { return values_.count(k) > 0; });
                    return values_[k];
                }};
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::map<std::string, std::string> values_;
};

TEST(NcclLibrary, AnswersWithoutAGpu) {
    EXPECT_EQ(slipway::dist::nccl_library_version().rfind("2.", 0), 0u)
        << slipway::dist::nccl_library_version();
    EXPECT_GE(slipway::dist::visible_gpu_count(), 0);
}

void allreduce_on_ranks(int world) {
    MemoryExchange store;
    std::vector<std::thread> ranks;
    std::vector<std::string> failures(static_cast<size_t>(world));
    for (int rank = 0; rank < world; ++rank) {
        ranks.emplace_back([&, rank] {
            auto comm =
                NcclCommunicator::create(store.exchange(), rank, world, rank, std::chrono::seconds(60));
            if (!comm.ok()) return void(failures[rank] = comm.error());
            auto buffer = DeviceBuffer::allocate(1 << 20);
            if (!buffer.ok()) return void(failures[rank] = buffer.error());
            if (auto s = buffer->fill_f32(static_cast<float>(rank + 1)); !s.ok())
                return void(failures[rank] = s.message());
            if (auto s = (*comm)->allreduce_sum_f32(buffer->data(), (1 << 20) / 4); !s.ok())
                return void(failures[rank] = s.message());
            auto value = buffer->read_f32((1 << 20) / 4 - 1);
            if (!value.ok() || *value != static_cast<float>(world * (world + 1) / 2))
                failures[rank] = "wrong sum";
        });
    }
    for (std::thread& t : ranks)
        t.join();
    for (int rank = 0; rank < world; ++rank)
        EXPECT_EQ(failures[rank], "") << "rank " << rank;
}

TEST(NcclCommunicator, OneRankAllreduce) {
    if (slipway::dist::visible_gpu_count() < 1) GTEST_SKIP() << "no GPU visible";
    allreduce_on_ranks(1);
}

TEST(NcclCommunicator, TwoRanksOnTwoGpus) {
    if (slipway::dist::visible_gpu_count() < 2) GTEST_SKIP() << "fewer than 2 GPUs visible";
    allreduce_on_ranks(2);
}

}  // namespace
