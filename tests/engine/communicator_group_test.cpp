// CommunicatorGroup: the c10d process group over a raw-buffer Communicator that the engine uses where
// LibTorch has no c10d NCCL. Without a GPU the NCCL communicator cannot run here, so these tests put a
// host-memory Communicator under it whose collectives are real Gloo ones (ProcessGroupGloo, two ranks on
// threads of this process): the adapter, DDP's Reducer (through GradientReducer), broadcast_coalesced
// and verify_params_across_processes then run on it exactly as they would on NCCL.
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/comm.hpp>

#include "dist/communicator_group.h"
#include "dist/gradient_reducer.h"
#include "dist/process_group.h"

namespace {

using slipway::Status;
using slipway::dist::Communicator;
using slipway::dist::ElementType;
using slipway::dist::ReduceKind;

constexpr int kWorld = 2;

at::ScalarType scalar_type(ElementType type) {
    switch (type) {
        case ElementType::kFloat32:
            return at::kFloat;
        case ElementType::kFloat64:
            return at::kDouble;
        case ElementType::kFloat16:
            return at::kHalf;
        case ElementType::kBFloat16:
            return at::kBFloat16;
        case ElementType::kInt8:
            return at::kChar;
        case ElementType::kUInt8:
            return at::kByte;
        case ElementType::kInt32:
            return at::kInt;
        case ElementType::kInt64:
            return at::kLong;
    }
    return at::kFloat;
}

// Host buffers through a Gloo process group: the transport stands in for NCCL, the buffers' path through
// the adapter is the one NCCL's takes.
class GlooHostCommunicator : public Communicator {
public:
    GlooHostCommunicator(c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo, int rank)
        : gloo_(std::move(gloo)), rank_(rank) {}
    std::string name() const override { return "gloo-host"; }
    bool takes_device_memory() const override { return false; }
    int rank() const override { return rank_; }
    int world_size() const override { return kWorld; }

    Status allreduce(void* data, size_t count, ElementType type, ReduceKind op) override {
        c10d::AllreduceOptions options;
        options.reduceOp = op == ReduceKind::kMax   ? c10d::ReduceOp::MAX
                           : op == ReduceKind::kMin ? c10d::ReduceOp::MIN
                                                    : c10d::ReduceOp::SUM;
        std::vector<at::Tensor> t{view(data, count, type)};
        gloo_->allreduce(t, options)->wait();
        if (op == ReduceKind::kAverage) t[0].div_(kWorld);
        return Status::Ok();
    }
    Status broadcast(void* data, size_t count, ElementType type, int root) override {
        c10d::BroadcastOptions options;
        options.rootRank = root;
        std::vector<at::Tensor> t{view(data, count, type)};
        gloo_->broadcast(t, options)->wait();
        return Status::Ok();
    }
    Status allgather(const void* input, void* output, size_t count, ElementType type) override {
        std::vector<at::Tensor> in{view(const_cast<void*>(input), count, type)};
        std::vector<std::vector<at::Tensor>> out(1);
        for (int r = 0; r < kWorld; ++r)
            out[0].push_back(view(static_cast<char*>(output) + r * count * slipway::dist::element_bytes(type),
                                  count, type));
        gloo_->allgather(out, in)->wait();
        return Status::Ok();
    }
    Status barrier() override {
        gloo_->barrier()->wait();
        return Status::Ok();
    }

private:
    static at::Tensor view(void* data, size_t count, ElementType type) {
        return torch::from_blob(data, {static_cast<int64_t>(count)}, torch::TensorOptions(scalar_type(type)));
    }
    c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo_;  // a Backend in 2.x, a ProcessGroup in 1.x
    int rank_;
};

// A communicator whose collectives fail, as a dead peer makes NCCL's: for the error path.
class FailingCommunicator : public GlooHostCommunicator {
public:
    using GlooHostCommunicator::GlooHostCommunicator;
    Status allreduce(void*, size_t, ElementType, ReduceKind) override {
        return Status::Error("rank " + std::to_string(rank()) + ": NCCL allreduce did not finish within 3 s");
    }
};

using RankBody = std::function<void(int rank, const c10::intrusive_ptr<c10d::ProcessGroup>& group)>;

// Runs `body` on kWorld threads, each with its CommunicatorGroup over its own Gloo rank.
template <typename CommunicatorType = GlooHostCommunicator>
void run_ranks(const RankBody& body) {
    auto store = c10::make_intrusive<c10d::HashStore>();
    std::vector<std::thread> threads;
    for (int rank = 0; rank < kWorld; ++rank) {
        threads.emplace_back([&, rank] {
            auto options = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(30));
            options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
            auto gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(
                c10::make_intrusive<c10d::PrefixStore>("gloo", store), rank, kWorld, options);
            auto group =
                slipway::dist::make_communicator_group(std::make_shared<CommunicatorType>(gloo, rank), store);
            body(rank, group);
        });
    }
    for (std::thread& t : threads)
        t.join();
}

TEST(CommunicatorGroup, CollectivesOfEveryKindTheEngineCalls) {
    run_ranks([](int rank, const c10::intrusive_ptr<c10d::ProcessGroup>& group) {
        std::vector<at::Tensor> f32{torch::full({5}, static_cast<float>(rank + 1))};  // (5)
        group->allreduce(f32)->wait();
        EXPECT_TRUE(f32[0].eq(3.0f).all().item<bool>()) << f32[0];

        std::vector<at::Tensor> f64{torch::tensor({0.25 * rank, -1.0 * rank}, torch::kFloat64)};  // (2)
        c10d::AllreduceOptions max;
        max.reduceOp = c10d::ReduceOp::MAX;
        group->allreduce(f64, max)->wait();
        EXPECT_DOUBLE_EQ(f64[0][0].item<double>(), 0.25);
        EXPECT_DOUBLE_EQ(f64[0][1].item<double>(), 0.0);

        std::vector<at::Tensor> i64{torch::arange(4, torch::kLong) * (rank + 1)};  // (4)
        auto work = group->allreduce(i64);
        work->wait();
        EXPECT_TRUE(work->isCompleted() && work->isSuccess());
        EXPECT_TRUE(i64[0].equal(torch::arange(4, torch::kLong) * 3));
        // The Future carries the reduced tensors: DDP's Reducer reads the bucket back from it.
        const c10::IValue value = work->getFuture()->value();
        ASSERT_TRUE(value.isTensorList());
        EXPECT_TRUE(value.toTensorVector()[0].equal(i64[0]));

        std::vector<at::Tensor> root_value{torch::full({3}, static_cast<float>(10 * rank))};  // (3)
        c10d::BroadcastOptions from_one;
        from_one.rootRank = 1;
        group->broadcast(root_value, from_one)->wait();
        EXPECT_TRUE(root_value[0].eq(10.0f).all().item<bool>());

        std::vector<at::Tensor> mine{torch::full({2, 2}, static_cast<int>(rank), torch::kInt)};  // (2, 2)
        std::vector<std::vector<at::Tensor>> all{
            {torch::empty({2, 2}, torch::kInt), torch::empty({2, 2}, torch::kInt)}};
        group->allgather(all, mine)->wait();
        EXPECT_TRUE(all[0][0].eq(0).all().item<bool>());
        EXPECT_TRUE(all[0][1].eq(1).all().item<bool>());

        at::Tensor flat = torch::empty({4}, torch::kDouble);  // (world * 2)
        at::Tensor part = torch::full({2}, rank + 0.5, torch::kDouble);
        group->_allgather_base(flat, part)->wait();
        EXPECT_TRUE(flat.equal(torch::tensor({0.5, 0.5, 1.5, 1.5}, torch::kDouble)));

        std::vector<at::Tensor> several{torch::ones({2}), torch::full({1}, 2.0f)};
        group->allreduce_coalesced(several)->wait();
        EXPECT_TRUE(several[0].eq(2.0f).all().item<bool>());
        EXPECT_TRUE(several[1].eq(4.0f).all().item<bool>());

        group->barrier()->wait();
    });
}

TEST(CommunicatorGroup, RefusesWhatTheCommunicatorCannotTake) {
    run_ranks([](int, const c10::intrusive_ptr<c10d::ProcessGroup>& group) {
        std::vector<at::Tensor> complex{torch::zeros({2}, torch::kComplexFloat)};
        try {
            group->allreduce(complex);
            ADD_FAILURE() << "a complex tensor was accepted";
        } catch (const c10::Error& e) {
            EXPECT_NE(std::string(e.what()).find("ComplexFloat"), std::string::npos) << e.what();
        }
        std::vector<at::Tensor> strided{torch::zeros({4, 4}).t()};
        EXPECT_THROW(group->allreduce(strided), c10::Error);
        std::vector<at::Tensor> two{torch::zeros({1}), torch::zeros({1})};
        EXPECT_THROW(group->allreduce(two), c10::Error);
    });
}

TEST(CommunicatorGroup, AFailedCollectiveThrowsTheCommunicatorsMessageFromWait) {
    run_ranks<FailingCommunicator>([](int rank, const c10::intrusive_ptr<c10d::ProcessGroup>& group) {
        std::vector<at::Tensor> t{torch::ones({3})};
        auto work = group->allreduce(t);
        EXPECT_FALSE(work->isSuccess());
        try {
            work->wait();
            ADD_FAILURE() << "wait() returned after a failed allreduce";
        } catch (const std::exception& e) {
            EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(rank) +
                                                 ": NCCL allreduce did not finish"),
                      std::string::npos)
                << e.what();
        }
    });
}

// A two-layer model of ~1.9 MiB, over DDP's 1 MiB first bucket: several buckets, several allreduces.
struct TinyNet {
    static constexpr int64_t kHidden = 40000;
    explicit TinyNet(int seed, int64_t hidden = kHidden) {
        at::Generator generator = seeded(seed);
        w1 = torch::randn({hidden, 8}, generator).requires_grad_();          // (hidden, 8)
        w2 = (torch::randn({4, hidden}, generator) / 200).requires_grad_();  // (4, hidden)
        b2 = torch::randn({4}, generator).requires_grad_();                  // (4)
    }
    // The ranks are threads: each draws from its own generator, not the shared global one.
    static at::Generator seeded(int seed) { return at::make_generator<at::CPUGeneratorImpl>(seed); }
    std::vector<torch::Tensor> params() const { return {w1, w2, b2}; }
    torch::Tensor loss(const torch::Tensor& x) const {  // x: (batch, 8)
        return torch::tanh(x.matmul(w1.t())).matmul(w2.t()).add(b2).pow(2).mean();
    }
    torch::Tensor w1, w2, b2;
};

torch::Tensor batch_of(int rank, int micro_step) {
    return torch::randn({6, 8}, TinyNet::seeded(1000 + 10 * rank + micro_step));  // (6, 8)
}

// DDP semantics on the adapter: initial weights broadcast from rank 0, gradients the mean over ranks of
// each rank's gradient, no exchange on accumulation micro-steps; checked against plain autograd.
TEST(CommunicatorGroup, DdpReducerAveragesGradientsLikeOneProcess) {
    run_ranks([](int rank, const c10::intrusive_ptr<c10d::ProcessGroup>& group) {
        TinyNet net(/*seed=*/7 + rank);
        std::vector<torch::Tensor> data;
        for (const torch::Tensor& p : net.params())
            data.push_back(p.detach());
        c10d::broadcast_coalesced(group, data, /*buffer_size=*/256, /*rank=*/0);
        const TinyNet reference(/*seed=*/7);
        for (size_t i = 0; i < data.size(); ++i)
            ASSERT_TRUE(net.params()[i].equal(reference.params()[i]))
                << "parameter " << i << " not broadcast";

        // A small bucket cap: several buckets, each its own allreduce through the adapter.
        slipway::dist::GradientReducer reducer({"w1", "w2", "b2"}, net.params(), group, /*bucket_mb=*/0.5);
        EXPECT_GE(reducer.bucket_count(), 2u);
        for (int step = 0; step < 2; ++step) {  // the second step runs on the rebuilt buckets
            for (const torch::Tensor& p : net.params())
                p.mutable_grad() = torch::Tensor();
            net.loss(batch_of(rank, 2 * step)).backward();  // accumulation micro-step: local only
            reducer.before_sync_forward();
            const torch::Tensor loss = net.loss(batch_of(rank, 2 * step + 1));
            reducer.before_sync_backward(loss);
            loss.backward();

            TinyNet expected(/*seed=*/7);
            for (int r = 0; r < kWorld; ++r)
                for (int micro = 2 * step; micro <= 2 * step + 1; ++micro)
                    expected.loss(batch_of(r, micro)).backward();
            for (size_t i = 0; i < data.size(); ++i) {
                // Rank r's local sum of its two micro-steps, averaged over ranks.
                const torch::Tensor want = expected.params()[i].grad() / kWorld;
                const double diff = (net.params()[i].grad() - want).abs().max().item<double>();
                const double scale = std::max(1.0, want.abs().max().item<double>());
                EXPECT_LT(diff / scale, 1e-6) << "rank " << rank << " step " << step << " parameter " << i;
            }
        }
    });
}

TEST(CommunicatorGroup, DifferentModelsOnTheRanksAreNamed) {
    run_ranks([](int rank, const c10::intrusive_ptr<c10d::ProcessGroup>& group) {
        const TinyNet net(/*seed=*/1, /*hidden=*/rank == 0 ? 16 : 17);  // w1: (16, 8) against (17, 8)
        if (rank == 0) {
            slipway::dist::GradientReducer reducer({"w1", "w2", "b2"}, net.params(), group, 1.0);
            return;
        }
        try {
            slipway::dist::GradientReducer reducer({"w1", "w2", "b2"}, net.params(), group, 1.0);
            ADD_FAILURE() << "rank 1's different model was accepted";
        } catch (const c10::Error& e) {
            EXPECT_NE(std::string(e.what()).find("17"), std::string::npos) << e.what();
        }
    });
}

}  // namespace

#ifdef SLIPWAY_WITH_NCCL
#include "dist/nccl_communicator.h"

namespace {

// The real thing where GPUs and a CUDA LibTorch are present: the adapter over NCCL's own API, one rank per
// GPU (at most two) on threads. Skips on CPU-only machines and CPU-only LibTorch builds (this CI).
TEST(CommunicatorGroupOnNccl, AllreducesAndBroadcastsCudaTensors) {
    const int gpus = slipway::dist::visible_gpu_count();
    if (gpus < 1 || !torch::cuda::is_available()) GTEST_SKIP() << "needs a GPU and a CUDA build of LibTorch";
    const int world = std::min(gpus, 2);
    auto store = c10::make_intrusive<c10d::HashStore>();
    const slipway::dist::KeyValueExchange exchange = slipway::dist::store_exchange(store);
    std::vector<std::thread> threads;
    for (int rank = 0; rank < world; ++rank) {
        threads.emplace_back([&, rank] {
            auto communicator = slipway::dist::NcclCommunicator::create(exchange, rank, world, rank,
                                                                        std::chrono::seconds(60));
            ASSERT_TRUE(communicator.ok()) << communicator.error();
            auto group = slipway::dist::make_communicator_group(
                std::shared_ptr<Communicator>(std::move(*communicator)), store);
            const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(rank));
            std::vector<at::Tensor> t{torch::full({1 << 20}, static_cast<float>(rank + 1), device)};  // (1M)
            group->allreduce(t)->wait();
            EXPECT_TRUE(t[0].eq(static_cast<float>(world * (world + 1) / 2)).all().item<bool>());
            std::vector<at::Tensor> b{torch::full({7}, static_cast<double>(rank),
                                                  torch::TensorOptions(device).dtype(torch::kDouble))};
            group->broadcast(b)->wait();
            EXPECT_TRUE(b[0].eq(0.0).all().item<bool>());
            group->barrier()->wait();
        });
    }
    for (std::thread& t : threads)
        t.join();
}

}  // namespace
#endif
