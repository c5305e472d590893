// NcclCommunicator (nccl_communicator.h): non-blocking NCCL communicators polled against a deadline.
#include "dist/nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <thread>

namespace slipway::dist {
namespace {

std::string cuda_error(cudaError_t e) {
    return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

ncclDataType_t nccl_type(ElementType type) {
    switch (type) {
        case ElementType::kFloat32:
            return ncclFloat32;
        case ElementType::kFloat64:
            return ncclFloat64;
        case ElementType::kFloat16:
            return ncclFloat16;
        case ElementType::kBFloat16:
            return ncclBfloat16;
        case ElementType::kInt8:
            return ncclInt8;
        case ElementType::kUInt8:
            return ncclUint8;
        case ElementType::kInt32:
            return ncclInt32;
        case ElementType::kInt64:
            return ncclInt64;
    }
    return ncclFloat32;
}

ncclRedOp_t nccl_op(ReduceKind op) {
    switch (op) {
        case ReduceKind::kSum:
            return ncclSum;
        case ReduceKind::kProduct:
            return ncclProd;
        case ReduceKind::kMin:
            return ncclMin;
        case ReduceKind::kMax:
            return ncclMax;
        case ReduceKind::kAverage:
            return ncclAvg;
    }
    return ncclSum;
}

}  // namespace

int visible_gpu_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();  // no driver / no device: not an error here
        return 0;
    }
    return count;
}

std::string nccl_library_version() {
    int v = 0;
    if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
    // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
    return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." +
           std::to_string(v % 100);
}

Result<DeviceBuffer> DeviceBuffer::allocate(size_t bytes) {
    DeviceBuffer buffer;
    if (const cudaError_t e = cudaMalloc(&buffer.data_, bytes); e != cudaSuccess)
        return Status::Error("cudaMalloc(" + std::to_string(bytes) + " bytes): " + cuda_error(e));
    buffer.bytes_ = bytes;
    return buffer;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), bytes_(other.bytes_) {
    other.data_ = nullptr;
    other.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    return *this;
}

DeviceBuffer::~DeviceBuffer() {
    if (data_) cudaFree(data_);
}

Status DeviceBuffer::fill_f32(float value) {
    std::vector<float> host(bytes_ / sizeof(float), value);
    if (const cudaError_t e =
            cudaMemcpy(data_, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
        e != cudaSuccess)
        return Status::Error("cudaMemcpy: " + cuda_error(e));
    return Status::Ok();
}

Result<float> DeviceBuffer::read_f32(size_t index) const {
    float value = 0;
    if (index * sizeof(float) >= bytes_) return Status::Error("read_f32: index outside the buffer");
    if (const cudaError_t e = cudaMemcpy(&value, static_cast<const float*>(data_) + index, sizeof(float),
                                         cudaMemcpyDeviceToHost);
        e != cudaSuccess)
        return Status::Error("cudaMemcpy: " + cuda_error(e));
    return value;
}

struct NcclCommunicator::Impl {
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t default_stream_done = nullptr;  // orders collectives after the default stream's kernels
    void* barrier_word = nullptr;               // one float in device memory
    bool aborted = false;
};

Result<std::unique_ptr<NcclCommunicator>> NcclCommunicator::create(const KeyValueExchange& exchange, int rank,
                                                                   int world_size, int device,
                                                                   std::chrono::milliseconds timeout) {
    if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
        return Status::Error("rank " + std::to_string(rank) + ": cudaSetDevice(" + std::to_string(device) +
                             "): " + cuda_error(e));
    ncclUniqueId id;
    const std::string key = "slipway/nccl/unique_id";
    try {
        if (rank == 0) {
            if (const ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess)
                return Status::Error(std::string("ncclGetUniqueId: ") + ncclGetErrorString(r));
            exchange.set(key, std::string(reinterpret_cast<const char*>(&id), sizeof(id)));
        } else {
            const std::string bytes = exchange.get(key);
            if (bytes.size() != sizeof(id))
                return Status::Error("the NCCL unique id from the store has " + std::to_string(bytes.size()) +
                                     " bytes, expected " + std::to_string(sizeof(id)));
            std::memcpy(&id, bytes.data(), sizeof(id));
        }
    } catch (const std::exception& e) {
        return Status::Error(
            StatusCode::kUnavailable,
            "rank " + std::to_string(rank) + ": exchanging the NCCL unique id failed: " + e.what());
    }
    std::unique_ptr<NcclCommunicator> communicator(new NcclCommunicator());
    communicator->impl_ = std::make_unique<Impl>();
    communicator->rank_ = rank;
    communicator->world_size_ = world_size;
    communicator->timeout_ = timeout;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // calls return at once; wait() polls with a deadline
    if (const ncclResult_t r =
            ncclCommInitRankConfig(&communicator->impl_->comm, world_size, id, rank, &config);
        r != ncclSuccess && r != ncclInProgress)
        return Status::Error(std::string("ncclCommInitRankConfig: ") + ncclGetErrorString(r));
    if (Status s = communicator->wait("communicator init", false); !s.ok()) return s;
    if (const cudaError_t e = cudaStreamCreateWithFlags(&communicator->impl_->stream, cudaStreamNonBlocking);
        e != cudaSuccess)
        return Status::Error("cudaStreamCreate: " + cuda_error(e));
    if (const cudaError_t e =
            cudaEventCreateWithFlags(&communicator->impl_->default_stream_done, cudaEventDisableTiming);
        e != cudaSuccess)
        return Status::Error("cudaEventCreate: " + cuda_error(e));
    if (const cudaError_t e = cudaMalloc(&communicator->impl_->barrier_word, sizeof(float)); e != cudaSuccess)
        return Status::Error("cudaMalloc(barrier word): " + cuda_error(e));
    return communicator;
}

NcclCommunicator::~NcclCommunicator() {
    if (!impl_) return;
    if (impl_->barrier_word) cudaFree(impl_->barrier_word);
    if (impl_->default_stream_done) cudaEventDestroy(impl_->default_stream_done);
    if (impl_->stream) cudaStreamDestroy(impl_->stream);
    if (impl_->comm && !impl_->aborted) ncclCommDestroy(impl_->comm);
}

// Polls the communicator's async state (and the stream, once created) until success, an error, or the
// deadline; a missed deadline aborts the communicator so no later call hangs either.
Status NcclCommunicator::wait(const std::string& what, bool include_stream) {
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    while (true) {
        ncclResult_t state = ncclSuccess;
        if (const ncclResult_t r = ncclCommGetAsyncError(impl_->comm, &state); r != ncclSuccess) state = r;
        if (state != ncclSuccess && state != ncclInProgress) {
            ncclCommAbort(impl_->comm);
            impl_->aborted = true;
            return Status::Error(
                StatusCode::kUnavailable,
                "rank " + std::to_string(rank_) + ": NCCL " + what + " failed: " + ncclGetErrorString(state));
        }
        bool done = state == ncclSuccess;
        if (done && include_stream && impl_->stream) {
            const cudaError_t q = cudaStreamQuery(impl_->stream);
            if (q != cudaSuccess && q != cudaErrorNotReady)
                return Status::Error("CUDA stream: " + cuda_error(q));
            done = q == cudaSuccess;
        }
        if (done) return Status::Ok();
        if (std::chrono::steady_clock::now() > deadline) {
            ncclCommAbort(impl_->comm);
            impl_->aborted = true;
            return Status::Error(StatusCode::kTimeout,
                                 "rank " + std::to_string(rank_) + ": NCCL " + what +
                                     " did not finish within " + std::to_string(timeout_.count() / 1000) +
                                     " s: a peer is dead or frozen; communicator aborted");
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
}

Status NcclCommunicator::enqueue_allreduce_sum_f32(void* device_data, size_t count) {
    if (impl_->aborted)
        return Status::Error("rank " + std::to_string(rank_) + ": the NCCL communicator was aborted");
    const ncclResult_t r =
        ncclAllReduce(device_data, device_data, count, ncclFloat32, ncclSum, impl_->comm, impl_->stream);
    if (r != ncclSuccess && r != ncclInProgress)
        return Status::Error(std::string("ncclAllReduce: ") + ncclGetErrorString(r));
    return wait("allreduce enqueue", false);  // a non-blocking communicator: the call itself may be in flight
}

Status NcclCommunicator::allreduce_sum_f32(void* device_data, size_t count) {
    if (Status s = enqueue_allreduce_sum_f32(device_data, count); !s.ok()) return s;
    return synchronize();
}

Status NcclCommunicator::synchronize() {
    return wait("allreduce", true);
}

std::string NcclCommunicator::name() const {
    return "nccl " + nccl_library_version();
}

Status NcclCommunicator::begin_collective(const std::string& what) {
    if (impl_->aborted)
        return Status::Error("rank " + std::to_string(rank_) + ": NCCL " + what +
                             ": the communicator was aborted after an earlier failure");
    if (const cudaError_t e = cudaEventRecord(impl_->default_stream_done, cudaStreamLegacy); e != cudaSuccess)
        return Status::Error("rank " + std::to_string(rank_) + ": NCCL " + what + ": " + cuda_error(e));
    if (const cudaError_t e = cudaStreamWaitEvent(impl_->stream, impl_->default_stream_done, 0);
        e != cudaSuccess)
        return Status::Error("rank " + std::to_string(rank_) + ": NCCL " + what + ": " + cuda_error(e));
    return Status::Ok();
}

Status NcclCommunicator::finish_collective(const std::string& what, int issued) {
    const auto r = static_cast<ncclResult_t>(issued);
    if (r != ncclSuccess && r != ncclInProgress)
        return Status::Error("rank " + std::to_string(rank_) + ": NCCL " + what + ": " +
                             ncclGetErrorString(r));
    return wait(what, true);
}

Status NcclCommunicator::allreduce(void* data, size_t count, ElementType type, ReduceKind op) {
    if (Status s = begin_collective("allreduce"); !s.ok()) return s;
    return finish_collective("allreduce", ncclAllReduce(data, data, count, nccl_type(type), nccl_op(op),
                                                        impl_->comm, impl_->stream));
}

Status NcclCommunicator::broadcast(void* data, size_t count, ElementType type, int root) {
    if (Status s = begin_collective("broadcast"); !s.ok()) return s;
    return finish_collective(
        "broadcast", ncclBroadcast(data, data, count, nccl_type(type), root, impl_->comm, impl_->stream));
}

Status NcclCommunicator::allgather(const void* input, void* output, size_t count, ElementType type) {
    if (Status s = begin_collective("allgather"); !s.ok()) return s;
    return finish_collective(
        "allgather", ncclAllGather(input, output, count, nccl_type(type), impl_->comm, impl_->stream));
}

Status NcclCommunicator::barrier() {
    // NCCL has no barrier: a one-element allreduce that every rank must join.
    return allreduce(impl_->barrier_word, 1, ElementType::kFloat32, ReduceKind::kSum);
}

}  // namespace slipway::dist
