// NcclCommunicator: NCCL's own API on raw device buffers, without LibTorch: the unique id travels
// through any key-value store (the rendezvous TCPStore), collectives run on the communicator's stream and
// are waited for with a deadline, so a dead or frozen peer aborts the communicator instead of hanging.
// `bench-comm` measures the fabric with it like nccl-tests; it also stands in where LibTorch has no
// c10d NCCL (as a Communicator under CommunicatorGroup). Built whenever CUDA and NCCL are found; it
// needs a GPU only at run time.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "contract/status.h"
#include "dist/communicator.h"

namespace slipway::dist {

// GPUs the CUDA runtime sees here; 0 without a driver or a device (never an error).
int visible_gpu_count();
// The NCCL library's version, e.g. "2.28.3" (works without a GPU).
std::string nccl_library_version();

// Device memory owned by RAII.
class DeviceBuffer {
public:
    static Result<DeviceBuffer> allocate(size_t bytes);
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    ~DeviceBuffer();
    void* data() const { return data_; }
    size_t bytes() const { return bytes_; }
    Status fill_f32(float value);
    Result<float> read_f32(size_t index) const;

private:
    DeviceBuffer() = default;
    void* data_ = nullptr;
    size_t bytes_ = 0;
};

class NcclCommunicator : public Communicator {
public:
    static Result<std::unique_ptr<NcclCommunicator>> create(const KeyValueExchange& exchange, int rank,
                                                            int world_size, int device,
                                                            std::chrono::milliseconds timeout);
    ~NcclCommunicator() override;
    NcclCommunicator(const NcclCommunicator&) = delete;
    NcclCommunicator& operator=(const NcclCommunicator&) = delete;

    // Communicator. Ordering with the training's kernels: each collective first waits (on the GPU) for
    // the work already queued on the legacy default stream, which is where LibTorch queues the engine's
    // kernels (it never switches streams); the call returns after the collective finished, so any
    // stream may read the result.
    std::string name() const override;
    bool takes_device_memory() const override { return true; }
    int rank() const override { return rank_; }
    int world_size() const override { return world_size_; }
    Status allreduce(void* data, size_t count, ElementType type, ReduceKind op) override;
    Status broadcast(void* data, size_t count, ElementType type, int root) override;
    Status allgather(const void* input, void* output, size_t count, ElementType type) override;
    Status barrier() override;

    // In-place sum of `count` floats in device memory; returns when done or aborts at the deadline.
    Status allreduce_sum_f32(void* device_data, size_t count);
    // The same, only enqueued on the communicator's stream (back-to-back timing, as nccl-tests does);
    // synchronize() waits for everything enqueued.
    Status enqueue_allreduce_sum_f32(void* device_data, size_t count);
    Status synchronize();

private:
    NcclCommunicator() = default;
    Status wait(const std::string& what, bool include_stream);
    // Makes the communicator's stream wait for the default stream's queued work; errors if aborted.
    Status begin_collective(const std::string& what);
    // After a collective was issued: checks its result, then waits for it with the deadline.
    Status finish_collective(const std::string& what, int issued);
    struct Impl;
    std::unique_ptr<Impl> impl_;
    int rank_ = 0;
    int world_size_ = 0;
    std::chrono::milliseconds timeout_{0};
};

}  // namespace slipway::dist
