// Communicator: the few collectives a process group needs, on raw buffers (no torch, no CUDA in this
// header). NcclCommunicator implements it on NCCL's own API; CommunicatorGroup (communicator_group.h)
// turns any implementation into a c10d process group, so DDP's Reducer, broadcast_coalesced and
// verify_params_across_processes run on it where LibTorch has no c10d NCCL.
//
// Every call returns when the collective is complete (or failed, or missed the implementation's
// deadline); the buffers are then ready for any reader.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>

#include "contract/status.h"

namespace slipway::dist {

// Publishes and fetches opaque bytes by key (rank 0 publishes the unique id, the others wait for it).
struct KeyValueExchange {
    std::function<void(const std::string& key, const std::string& value)> set;
    std::function<std::string(const std::string& key)> get;  // blocks until the key exists (or throws)
};

// Thrown (through c10d's Work and Future) when a Communicator call fails: a failure of the communication
// (a peer gone, a deadline missed), never this rank's own error. is_collective_failure() knows it.
struct CollectiveError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class ElementType { kFloat32, kFloat64, kFloat16, kBFloat16, kInt8, kUInt8, kInt32, kInt64 };
enum class ReduceKind { kSum, kProduct, kMin, kMax, kAverage };

class Communicator {
public:
    virtual ~Communicator() = default;
    virtual std::string name() const = 0;  // e.g. "nccl 2.28.3": shows in errors
    // Where the buffers live: true for device memory of this rank's GPU, false for host memory.
    virtual bool takes_device_memory() const = 0;
    virtual int rank() const = 0;
    virtual int world_size() const = 0;

    // In place on `count` elements.
    virtual Status allreduce(void* data, size_t count, ElementType type, ReduceKind op) = 0;
    virtual Status broadcast(void* data, size_t count, ElementType type, int root) = 0;
    // `output` holds world_size() * count elements, rank r's `input` at r * count.
    virtual Status allgather(const void* input, void* output, size_t count, ElementType type) = 0;
    virtual Status barrier() = 0;
};

inline size_t element_bytes(ElementType type) {
    switch (type) {
        case ElementType::kFloat64:
        case ElementType::kInt64:
            return 8;
        case ElementType::kFloat32:
        case ElementType::kInt32:
            return 4;
        case ElementType::kFloat16:
        case ElementType::kBFloat16:
            return 2;
        case ElementType::kInt8:
        case ElementType::kUInt8:
            return 1;
    }
    return 0;
}

inline const char* element_type_name(ElementType type) {
    switch (type) {
        case ElementType::kFloat32:
            return "float32";
        case ElementType::kFloat64:
            return "float64";
        case ElementType::kFloat16:
            return "float16";
        case ElementType::kBFloat16:
            return "bfloat16";
        case ElementType::kInt8:
            return "int8";
        case ElementType::kUInt8:
            return "uint8";
        case ElementType::kInt32:
            return "int32";
        case ElementType::kInt64:
            return "int64";
    }
    return "?";
}

}  // namespace slipway::dist
