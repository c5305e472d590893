// CommunicatorGroup (communicator_group.h): c10d collectives mapped onto a raw-buffer Communicator.
#include "dist/communicator_group.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "dist/backend_wrap.h"

namespace slipway::dist {
namespace {

#if TORCH_VERSION_MAJOR >= 2
using GroupBase = c10d::Backend;  // 2.x: collectives live in a Backend behind a ProcessGroup
#else
using GroupBase = c10d::ProcessGroup;
#endif

ElementType element_type_of(const at::Tensor& t) {
    switch (t.scalar_type()) {
        case at::kFloat:
            return ElementType::kFloat32;
        case at::kDouble:
            return ElementType::kFloat64;
        case at::kHalf:
            return ElementType::kFloat16;
        case at::kBFloat16:
            return ElementType::kBFloat16;
        case at::kChar:
            return ElementType::kInt8;
        case at::kByte:
        case at::kBool:
            return ElementType::kUInt8;
        case at::kInt:
            return ElementType::kInt32;
        case at::kLong:
            return ElementType::kInt64;
        default:
            TORCH_CHECK(false, "slipway communicator: no collective for tensors of type ", t.scalar_type());
    }
}

ReduceKind reduce_kind_of(const c10d::ReduceOp& op) {
    switch (static_cast<c10d::ReduceOp::RedOpType>(op)) {
        case c10d::ReduceOp::SUM:
            return ReduceKind::kSum;
        case c10d::ReduceOp::PRODUCT:
            return ReduceKind::kProduct;
        case c10d::ReduceOp::MIN:
            return ReduceKind::kMin;
        case c10d::ReduceOp::MAX:
            return ReduceKind::kMax;
        case c10d::ReduceOp::AVG:
            return ReduceKind::kAverage;
        default:
            TORCH_CHECK(false, "slipway communicator: unsupported reduce operation");
    }
}

// A collective that finished before it was returned. wait() rethrows the communicator's error; the Future
// holds the tensors (DDP's Reducer reads its bucket back from it) or the same error.
class FinishedWork final : public c10d::Work {
public:
    FinishedWork(int rank, std::vector<at::Tensor> tensors, const Status& status)
        : c10d::Work(rank), tensors_(std::move(tensors)) {
        std::vector<c10::Device> devices;
        for (const at::Tensor& t : tensors_)
            if (!t.device().is_cpu() &&
                std::find(devices.begin(), devices.end(), t.device()) == devices.end())
                devices.push_back(t.device());
        future_ =
            c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()), devices);
        std::exception_ptr error;
        if (status.ok()) {
            future_->markCompleted(c10::IValue(tensors_));
        } else {
            error = std::make_exception_ptr(CollectiveError(status.message()));
            future_->setError(error);
        }
        finish(error);
    }
    std::vector<at::Tensor> result() override { return tensors_; }
    c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

private:
    std::vector<at::Tensor> tensors_;
    c10::intrusive_ptr<c10::ivalue::Future> future_;
};

class CommunicatorGroup final : public GroupBase {
public:
    explicit CommunicatorGroup(std::shared_ptr<Communicator> communicator)
        : GroupBase(communicator->rank(), communicator->world_size()),
          communicator_(std::move(communicator)) {}

    const std::string getBackendName() const override { return communicator_->name(); }

    c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                             const c10d::AllreduceOptions& opts) override {
        const at::Tensor& t = single(tensors, "allreduce");
        return done(tensors, communicator_->allreduce(t.data_ptr(), static_cast<size_t>(t.numel()),
                                                      element_type_of(t), reduce_kind_of(opts.reduceOp)));
    }

    c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                       const c10d::AllreduceCoalescedOptions& opts) override {
        for (at::Tensor& t : tensors) {
            std::vector<at::Tensor> one{t};
            single(one, "allreduce_coalesced");
            const Status s = communicator_->allreduce(t.data_ptr(), static_cast<size_t>(t.numel()),
                                                      element_type_of(t), reduce_kind_of(opts.reduceOp));
            if (!s.ok()) return done(tensors, s);
        }
        return done(tensors, Status::Ok());
    }

    c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                             const c10d::BroadcastOptions& opts) override {
        const at::Tensor& t = single(tensors, "broadcast");
        TORCH_CHECK(opts.rootTensor == 0, "slipway communicator: broadcast takes one tensor per rank");
        return done(tensors, communicator_->broadcast(t.data_ptr(), static_cast<size_t>(t.numel()),
                                                      element_type_of(t), static_cast<int>(opts.rootRank)));
    }

    // outputs: one list of world_size tensors shaped like the input.
    c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                             std::vector<at::Tensor>& inputs,
                                             const c10d::AllgatherOptions&) override {
        const at::Tensor& input = single(inputs, "allgather");
        TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == static_cast<size_t>(getSize()),
                    "slipway communicator: allgather wants one output list of ", getSize(), " tensors");
        const int64_t n = input.numel();
        at::Tensor gathered = at::empty({getSize() * n}, input.options());  // (world * n)
        const Status s = communicator_->allgather(input.data_ptr(), gathered.data_ptr(),
                                                  static_cast<size_t>(n), element_type_of(input));
        if (s.ok())
            for (int r = 0; r < getSize(); ++r)
                outputs[0][r].copy_(gathered.narrow(0, r * n, n).view_as(outputs[0][r]));
        return done(outputs[0], s);
    }

    // output: (world * n), the input: (n).
    c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                   const c10d::AllgatherOptions&) override {
        std::vector<at::Tensor> in{input}, out{output};
        single(in, "allgather");
        single(out, "allgather");
        TORCH_CHECK(output.numel() == input.numel() * getSize(),
                    "slipway communicator: allgather output must hold ", getSize(), " x ", input.numel(),
                    " elements");
        return done(out,
                    communicator_->allgather(input.data_ptr(), output.data_ptr(),
                                             static_cast<size_t>(input.numel()), element_type_of(input)));
    }

    c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions&) override {
        return done({}, communicator_->barrier());
    }

    void setSequenceNumberForGroup() override {}
    uint64_t getSequenceNumberForGroup() override { return collectives_.load(); }

private:
    // Checks the one-tensor-per-rank layout the communicator takes and that the memory is where it works.
    const at::Tensor& single(std::vector<at::Tensor>& tensors, const char* what) const {
        TORCH_CHECK(tensors.size() == 1, "slipway communicator: ", what, " takes one tensor per rank, got ",
                    tensors.size());
        const at::Tensor& t = tensors[0];
        TORCH_CHECK(t.is_contiguous(), "slipway communicator: ", what, " needs a contiguous tensor");
        TORCH_CHECK(t.is_cuda() == communicator_->takes_device_memory(), "slipway communicator: ", what,
                    " got a ", t.device().str(), " tensor but ", communicator_->name(), " takes ",
                    communicator_->takes_device_memory() ? "GPU" : "host", " memory");
        return t;
    }

    c10::intrusive_ptr<c10d::Work> done(const std::vector<at::Tensor>& tensors, const Status& status) {
        ++collectives_;
        return c10::make_intrusive<FinishedWork>(getRank(), tensors, status);
    }

    std::shared_ptr<Communicator> communicator_;
    std::atomic<uint64_t> collectives_{0};
};

}  // namespace

c10::intrusive_ptr<c10d::ProcessGroup> make_communicator_group(std::shared_ptr<Communicator> communicator,
                                                               const c10::intrusive_ptr<c10d::Store>& store) {
    const int rank = communicator->rank(), size = communicator->world_size();
    const bool gpu = communicator->takes_device_memory();
    auto group = c10::make_intrusive<CommunicatorGroup>(std::move(communicator));
#if TORCH_VERSION_MAJOR >= 2
    return wrap_backend(store, rank, size, "custom", std::chrono::hours(1),
                        c10d::ProcessGroup::BackendType::CUSTOM,
                        gpu ? c10::DeviceType::CUDA : c10::DeviceType::CPU, group);
#else
    (void)store;
    (void)rank;
    (void)size;
    (void)gpu;
    return group;
#endif
}

}  // namespace slipway::dist
