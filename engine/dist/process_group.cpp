// DistContext (process_group.h): TCPStore rendezvous, the c10d process group, heartbeat, small collectives.
#include "dist/process_group.h"

#include <cstdlib>
#include <sstream>
#include <thread>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/comm.hpp>
#include <torch/torch.h>
#ifdef USE_C10D_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "dist/heartbeat.h"

namespace slipway::dist {
namespace {

bool is_loopback(const std::string& host) {
    return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

// Gloo binds to one interface: GLOO_SOCKET_IFNAME when set (as torch does), loopback for a run on this
// machine, otherwise the address this host's name resolves to.
std::shared_ptr<gloo::transport::Device> gloo_device(const DistEnv& env) {
    if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname)
        return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
    if (is_loopback(env.master_addr)) return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
    return c10d::ProcessGroupGloo::createDefaultDevice();
}

// LibTorch 1.x: ProcessGroupGloo is a ProcessGroup. 2.x: it is a Backend behind a ProcessGroup.
c10::intrusive_ptr<c10d::ProcessGroup> make_gloo_group(const c10::intrusive_ptr<c10d::Store>& store,
                                                       const DistEnv& env, std::chrono::milliseconds timeout) {
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    options->devices.push_back(gloo_device(env));
    const int rank = static_cast<int>(env.rank), size = static_cast<int>(env.world_size);
#if TORCH_VERSION_MAJOR >= 2
    auto backend = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
    auto group = c10::make_intrusive<c10d::ProcessGroup>(store, rank, size);
    group->setDefaultBackend(c10d::ProcessGroup::BackendType::GLOO);
    group->setBackend(c10::DeviceType::CPU, c10d::ProcessGroup::BackendType::GLOO, backend);
    return group;
#else
    return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
#endif
}

Result<std::string> choose_backend(const std::string& requested) {
    const bool gpus = torch::cuda::is_available();
#ifdef USE_C10D_NCCL
    const bool c10d_nccl = true;
#else
    const bool c10d_nccl = false;
#endif
    if (requested == "gloo") return std::string("gloo");
    if (requested == "auto") return std::string(gpus && c10d_nccl ? "nccl" : "gloo");
    if (!gpus || !c10d_nccl) {
        return Status::Error(std::string("/distributed/backend: nccl needs GPUs and a LibTorch built with c10d "
                                         "NCCL; this engine's LibTorch ") +
                             TORCH_VERSION + (gpus ? " has no c10d NCCL" : " sees no GPU") +
                             " (use gloo or auto)");
    }
    return std::string("nccl");
}

}  // namespace

Result<std::unique_ptr<DistContext>> DistContext::connect(const DistEnv& env, const DistributedConfig& config) {
    Result<std::string> backend = choose_backend(config.backend);
    if (!backend.ok()) return backend.status();
    const auto timeout = std::chrono::milliseconds(config.timeout_s * 1000);
    const std::string master = env.master_addr + ":" + std::to_string(env.master_port);
    std::unique_ptr<DistContext> context(new DistContext());
    context->env_ = env;
    context->backend_ = *backend;
    c10::intrusive_ptr<c10d::Store> heartbeat_store;
    try {
        c10d::TCPStoreOptions options;
        options.port = static_cast<uint16_t>(env.master_port);
        options.isServer = env.rank == 0;
        options.numWorkers = static_cast<size_t>(env.world_size);
        options.waitWorkers = true;
        options.timeout = timeout;
        context->store_ = c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
        c10d::TCPStoreOptions client = options;
        client.isServer = false;
        client.waitWorkers = false;
        client.numWorkers = c10::nullopt;
        client.timeout = std::chrono::milliseconds(3000);  // a frozen master must not freeze the diagnosis
        heartbeat_store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, client);
    } catch (const std::exception& e) {
        return Status::Error(StatusCode::kUnavailable,
                             "rank " + std::to_string(env.rank) + ": rendezvous with the master " + master +
                                 " failed within /distributed/timeout_s = " + std::to_string(config.timeout_s) +
                                 " s: " + e.what());
    }
    try {
        auto prefixed = c10::make_intrusive<c10d::PrefixStore>("slipway/" + *backend, context->store_);
        if (*backend == "gloo") {
            context->group_ = make_gloo_group(prefixed, env, timeout);
        } else {
#ifdef USE_C10D_NCCL
            auto options = c10d::ProcessGroupNCCL::Options::create();
            options->timeout = timeout;
            c10::cuda::set_device(static_cast<c10::DeviceIndex>(env.local_rank));  // one rank per GPU
            context->group_ = c10::make_intrusive<c10d::ProcessGroupNCCL>(
                prefixed, static_cast<int>(env.rank), static_cast<int>(env.world_size), options);
#endif
        }
    } catch (const std::exception& e) {
        return Status::Error(StatusCode::kUnavailable, "rank " + std::to_string(env.rank) + ": creating the " +
                                                           *backend + " process group (master " + master +
                                                           ") failed: " + e.what());
    }
    context->heartbeat_ = std::make_unique<Heartbeat>(heartbeat_store, env.rank, env.world_size);
    return context;
}

DistContext::~DistContext() = default;

void DistContext::allreduce_sum(std::vector<double>& values) {
    // Gloo reduces fp64 exactly as given; NCCL wants the tensor on the rank's GPU.
    torch::Tensor t = torch::from_blob(values.data(), {static_cast<int64_t>(values.size())}, torch::kFloat64)
                          .clone();  // (n)
    if (backend_ == "nccl") t = t.to(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(env_.local_rank)));
    std::vector<torch::Tensor> tensors{t};
    group_->allreduce(tensors)->wait();
    const torch::Tensor host = tensors[0].cpu().contiguous();
    std::copy(host.data_ptr<double>(), host.data_ptr<double>() + values.size(), values.begin());
}

void DistContext::barrier() { group_->barrier()->wait(); }

void DistContext::broadcast_from_main(const std::vector<torch::Tensor>& tensors, size_t bucket_bytes) {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> data;
    data.reserve(tensors.size());
    for (const torch::Tensor& t : tensors)
        data.push_back(t.detach());
    c10d::broadcast_coalesced(group_, data, bucket_bytes, 0);
}

std::string DistContext::describe_failure(const std::string& what, int64_t step) {
    std::ostringstream message;
    message << "rank " << env_.rank << ": the run lost ";
    const Heartbeat::Silence silence = heartbeat_->find_silent_ranks(std::chrono::milliseconds(2000));
    if (!silence.store_error.empty()) {
        message << "rank 0 (the rendezvous master " << env_.master_addr << ":" << env_.master_port
                << " does not answer)";
    } else if (silence.silent_ranks.empty()) {
        message << "a peer (every rank's heartbeat still moves: a network fault or a rank that raised an error)";
    } else {
        message << (silence.silent_ranks.size() == 1 ? "rank " : "ranks ");
        for (size_t i = 0; i < silence.silent_ranks.size(); ++i)
            message << (i ? ", " : "") << silence.silent_ranks[i];
        message << " (no heartbeat: killed, frozen or on a dead node)";
    }
    message << " during step " << step << "; " << backend_ << " said: " << what;
    return message.str();
}

void DistContext::abandon() {
    if (heartbeat_) heartbeat_->stop();
    // Leak deliberately: ~ProcessGroupGloo waits for queued work, ~TCPStore for its server thread.
    (void)heartbeat_.release();
    (void)group_.release();
    (void)store_.release();
}

}  // namespace slipway::dist
