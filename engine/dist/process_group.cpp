// DistContext (process_group.h): TCPStore rendezvous, the c10d process group, heartbeat, small collectives.
#include "dist/process_group.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <thread>

#include <gloo/common/error.h>
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/comm.hpp>
#ifdef USE_C10D_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "dist/backend_wrap.h"
#include "dist/communicator_group.h"
#include "dist/deadline.h"
#include "dist/heartbeat.h"
#include "dist/rank_hosts.h"
#include "dist/rendezvous.h"
#ifdef SLIPWAY_WITH_NCCL
#include "dist/nccl_communicator.h"
#endif

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
                                                       const DistEnv& env,
                                                       std::chrono::milliseconds timeout) {
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    options->devices.push_back(gloo_device(env));
    const int rank = static_cast<int>(env.rank), size = static_cast<int>(env.world_size);
#if TORCH_VERSION_MAJOR >= 2
    // Not compiled on this machine (libtorch 1.13): written against the 2.x headers.
    return wrap_backend(store, rank, size, "gloo", timeout, c10d::ProcessGroup::BackendType::GLOO,
                        c10::DeviceType::CPU,
                        c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options));
#else
    return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
#endif
}

// "nccl" runs on c10d's ProcessGroupNCCL where LibTorch has it (USE_C10D_NCCL: NGC's builds), otherwise on
// our raw NCCL communicator (SLIPWAY_WITH_NCCL) behind CommunicatorGroup.
Result<std::string> choose_backend(const std::string& requested) {
    const bool gpus = torch::cuda::is_available();
#if defined(USE_C10D_NCCL) || defined(SLIPWAY_WITH_NCCL)
    const bool nccl = true;
#else
    const bool nccl = false;
#endif
    if (requested == "gloo") return std::string("gloo");
    if (requested == "auto") return std::string(gpus && nccl ? "nccl" : "gloo");
    if (!gpus || !nccl) {
        return Status::Error(std::string("/distributed/backend: nccl needs GPUs and NCCL (c10d's or this "
                                         "engine's own); this engine's LibTorch ") +
                             TORCH_VERSION +
                             (gpus ? " has no c10d NCCL and it was built without NCCL" : " sees no GPU") +
                             " (use gloo or auto)");
    }
    return std::string("nccl");
}

#if !defined(USE_C10D_NCCL) && defined(SLIPWAY_WITH_NCCL)
// LibTorch without c10d NCCL: NCCL's own API through CommunicatorGroup; the unique id goes through the store.
c10::intrusive_ptr<c10d::ProcessGroup> make_raw_nccl_group(const c10::intrusive_ptr<c10d::Store>& store,
                                                           const DistEnv& env,
                                                           std::chrono::milliseconds timeout) {
    Result<std::unique_ptr<NcclCommunicator>> communicator = NcclCommunicator::create(
        store_exchange(store), static_cast<int>(env.rank), static_cast<int>(env.world_size),
        DistContext::cuda_device_index(env.local_rank), timeout);
    if (!communicator.ok()) throw std::runtime_error(communicator.error());
    return make_communicator_group(std::shared_ptr<Communicator>(std::move(*communicator)), store);
}
#endif

}  // namespace

bool is_collective_failure(const std::exception& e) {
    return dynamic_cast<const gloo::Exception*>(&e) != nullptr ||
           dynamic_cast<const CollectiveError*>(&e) != nullptr || is_torch_dist_error(e);
}

KeyValueExchange store_exchange(const c10::intrusive_ptr<c10d::Store>& store) {
    return {[store](const std::string& key, const std::string& value) {
                store->set(key, std::vector<uint8_t>(value.begin(), value.end()));
            },
            [store](const std::string& key) {
                const std::vector<uint8_t> bytes = store->get(key);
                return std::string(bytes.begin(), bytes.end());
            }};
}

namespace {

// A TCPStore with libuv's server where this LibTorch has one, else the classic server (`options` keeps the
// choice for the stores made after it).
c10::intrusive_ptr<c10d::TCPStore> connect_store(const std::string& host, c10d::TCPStoreOptions& options) {
    try {
        return c10::make_intrusive<c10d::TCPStore>(host, options);
    } catch (const std::exception& e) {
        if (std::string(e.what()).find("libuv") == std::string::npos || !use_classic_store(options)) throw;
        return c10::make_intrusive<c10d::TCPStore>(host, options);
    }
}

}  // namespace

// The job's rendezvous: rank 0 serves the store (on the master's address alone where this LibTorch allows it)
// and publishes its port when none was given; every rank reaches it and waits for rank 0's hello under the
// secret's prefix, so a store of another job (or a wrong secret) is named instead of timing out in Gloo.
// Nothing relies on TCPStore's worker count (waitWorkers): a foreign connection could confuse it.
Status DistContext::rendezvous(const DistEnv& env, const DistributedConfig& config,
                               c10::intrusive_ptr<c10d::Store>& heartbeat_store,
                               c10::intrusive_ptr<c10d::Store>& probe_store) {
    const std::string me = "rank " + std::to_string(env.rank) + ": ";
    if (env.secret.size() < kMinSecretLength) {
        return Status::Error(me + kSecretVariable +
                             (env.secret.empty()
                                  ? std::string(" is not set")
                                  : " has fewer than " + std::to_string(kMinSecretLength) + " characters") +
                             ": every rank of a multi-process run needs the job's rendezvous secret "
                             "(`slipway-engine launch` and Slipway's sbatch script set it)");
    }
    if (env.master_port == 0 && env.port_file.empty())
        return Status::Error(me + "no rendezvous port: set MASTER_PORT or " + kPortFileVariable);
    const std::string prefix = store_prefix(env.secret), hello = "hello";
    c10d::TCPStoreOptions options;
    options.port = static_cast<uint16_t>(env.master_port);
    options.isServer = env.rank == 0;
    options.numWorkers = c10::nullopt;
    options.waitWorkers = false;
    options.timeout = timeout_;
    master_ = env.master_addr + ":" + (env.master_port ? std::to_string(env.master_port) : "(published)");
    c10::intrusive_ptr<c10d::TCPStore> server_or_client;
    try {
        if (env.rank == 0) {
            listens_on_master_only_ =
                listen_on_host_only(options, env.master_addr, is_loopback(env.master_addr));
            server_or_client = connect_store(env.master_addr, options);
            options.port = server_or_client->getPort();
        } else if (env.master_port == 0) {
            Result<int> published = wait_for_published_port(env.port_file, env.secret, env.scope, timeout_);
            if (!published.ok()) return Status::Error(published.status().code(), me + published.error());
            options.port = static_cast<uint16_t>(*published);
        }
        master_ = env.master_addr + ":" + std::to_string(options.port);
        if (env.rank != 0) server_or_client = connect_store(env.master_addr, options);
        store_ = c10::make_intrusive<c10d::PrefixStore>(prefix, server_or_client);
        if (env.rank == 0) {
            store_->set(hello, std::vector<uint8_t>{1});
            if (env.master_port == 0) {
                if (Status s = publish_port(env.port_file, env.secret, env.scope, options.port); !s.ok())
                    return Status::Error(me + s.message());
            }
        }
        c10d::TCPStoreOptions client = client_options(options);
        client.timeout = std::chrono::milliseconds(3000);  // a frozen master must not freeze the diagnosis
        heartbeat_store = c10::make_intrusive<c10d::PrefixStore>(
            prefix, c10::make_intrusive<c10d::TCPStore>(env.master_addr, client));
        probe_store = c10::make_intrusive<c10d::PrefixStore>(
            prefix, c10::make_intrusive<c10d::TCPStore>(env.master_addr, client));
    } catch (const std::exception& e) {
        return Status::Error(StatusCode::kUnavailable, me + "rendezvous with the master " + master_ +
                                                           " failed within /distributed/timeout_s = " +
                                                           std::to_string(config.timeout_s) +
                                                           " s: " + e.what());
    }
    try {
        store_->wait({hello}, timeout_);
    } catch (const std::exception&) {
        return Status::Error(StatusCode::kUnavailable,
                             me + "the master " + master_ + " answers but holds no key of this job within " +
                                 "/distributed/timeout_s = " + std::to_string(config.timeout_s) + " s: its " +
                                 kSecretVariable +
                                 " differs from this rank's (or the port belongs to another job)");
    }
    return Status::Ok();
}

Result<std::unique_ptr<DistContext>> DistContext::connect(const DistEnv& env,
                                                          const DistributedConfig& config) {
    Result<std::string> backend = choose_backend(config.backend);
    if (!backend.ok()) return backend.status();
    const auto timeout = std::chrono::milliseconds(config.timeout_s * 1000);
    std::unique_ptr<DistContext> context(new DistContext());
    context->env_ = env;
    context->backend_ = *backend;
    context->timeout_ = timeout;
    c10::intrusive_ptr<c10d::Store> heartbeat_store, probe_store;
    if (Status s = context->rendezvous(env, config, heartbeat_store, probe_store); !s.ok()) return s;
    const std::string& master = context->master_;
    try {
        auto prefixed = c10::make_intrusive<c10d::PrefixStore>("slipway/" + *backend, context->store_);
        if (*backend == "gloo") {
            context->group_ = make_gloo_group(prefixed, env, timeout);
        } else {
#if !defined(USE_C10D_NCCL) && defined(SLIPWAY_WITH_NCCL)
            context->group_ = make_raw_nccl_group(prefixed, env, timeout);
#elif defined(USE_C10D_NCCL)
            // Without async error handling a NCCL collective that never completes is never noticed: the
            // timeout below only applies with it (the variable's name changed in 2.2; set both).
            setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1", 0);
            setenv("NCCL_ASYNC_ERROR_HANDLING", "1", 0);
            auto options = c10d::ProcessGroupNCCL::Options::create();
            options->timeout = timeout;
            c10::cuda::set_device(static_cast<c10::DeviceIndex>(cuda_device_index(env.local_rank)));
            const int rank = static_cast<int>(env.rank), size = static_cast<int>(env.world_size);
            auto nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, rank, size, options);
#if TORCH_VERSION_MAJOR >= 2
            context->group_ =
                wrap_backend(prefixed, rank, size, "nccl", timeout, c10d::ProcessGroup::BackendType::NCCL,
                             c10::DeviceType::CUDA, nccl);
#else
            context->group_ = nccl;
#endif
#endif
        }
    } catch (const std::exception& e) {
        return Status::Error(StatusCode::kUnavailable,
                             "rank " + std::to_string(env.rank) + ": creating the " + *backend +
                                 " process group (master " + master + ") failed: " + e.what());
    }
    context->heartbeat_ = std::make_unique<Heartbeat>(heartbeat_store, probe_store, env.rank, env.world_size);
    try {
        context->exchange_hosts();
    } catch (const std::exception& e) {
        return Status::Error(StatusCode::kUnavailable, "rank " + std::to_string(env.rank) +
                                                           ": exchanging the ranks' host names (master " +
                                                           master + ") failed: " + e.what());
    }
    return context;
}

void DistContext::exchange_hosts() {
    const auto bytes = [](const std::string& text) { return std::vector<uint8_t>(text.begin(), text.end()); };
    const auto text = [](const std::vector<uint8_t>& value) {
        return std::string(value.begin(), value.end());
    };
    const std::string all = "slipway/hosts";
    store_->set("slipway/host/" + std::to_string(env_.rank), bytes(this_host()));
    if (env_.rank == 0) {
        std::vector<std::string> keys;
        for (int64_t r = 0; r < env_.world_size; ++r)
            keys.push_back("slipway/host/" + std::to_string(r));
        store_->wait(keys, timeout_);
        for (const std::string& key : keys)
            hosts_.push_back(text(store_->get(key)));
        store_->set(all, bytes(join_hosts(hosts_)));
    } else {
        store_->wait({all}, timeout_);
        hosts_ = split_hosts(text(store_->get(all)));
    }
}

DistContext::~DistContext() = default;

void DistContext::allreduce_sum(std::vector<double>& values) {
    // Gloo reduces fp64 exactly as given; NCCL wants the tensor on the rank's GPU.
    torch::Tensor t = torch::from_blob(values.data(), {static_cast<int64_t>(values.size())}, torch::kFloat64)
                          .clone();  // (n)
    if (backend_ == "nccl")
        t = t.to(
            torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(cuda_device_index(env_.local_rank))));
    std::vector<torch::Tensor> tensors{t};
    group_->allreduce(tensors)->wait();
    const torch::Tensor host = tensors[0].cpu().contiguous();
    std::copy(host.data_ptr<double>(), host.data_ptr<double>() + values.size(), values.begin());
}

void DistContext::barrier() {
    group_->barrier()->wait();
}

int DistContext::cuda_device_index(int64_t local_rank) {
    const auto devices = static_cast<int64_t>(torch::cuda::device_count());
    return devices > 0 ? static_cast<int>(local_rank % devices) : 0;
}

Status DistContext::wait_for_main(const std::string& phase, const Status& main_status) {
    const std::string key = "slipway/phase/" + phase;
    const auto limit = std::chrono::seconds(10);
    const std::string& master = master_;
    if (is_main()) {
        const std::string value = main_status.ok() ? "ok" : "error: " + main_status.message();
        // A store that does not take the answer leaves the others to notice rank 0's silence.
        (void)run_with_deadline<bool>(
            [store = store_, key, value] {
                store->set(key, std::vector<uint8_t>(value.begin(), value.end()));
                return true;
            },
            limit);
        return main_status;
    }
    const std::string me = "rank " + std::to_string(env_.rank) + ": ";
    // Rank 0 gone: unless it failed on its own and said why before leaving (report_failure waits until this
    // rank's heartbeat holds the record, so the store, which may be frozen, is not asked).
    auto lost_main = [this](const std::string& message) {
        return Status::Error(StatusCode::kUnavailable,
                             describe_failed_peer(/*ask_store=*/false).value_or(message));
    };
    int64_t last_beats = -1;
    auto last_change = std::chrono::steady_clock::now();
    while (true) {
        std::optional<std::optional<std::string>> published;
        try {
            published = run_with_deadline<std::optional<std::string>>(
                [store = store_, key]() -> std::optional<std::string> {
                    if (!store->check({key})) return std::nullopt;
                    const std::vector<uint8_t> v = store->get(key);
                    return std::string(v.begin(), v.end());
                },
                limit);
        } catch (const std::exception& e) {
            return lost_main(me + "lost rank 0 while it was " + phase + " (the master " + master +
                             " is gone: " + e.what() + ")");
        }
        if (!published) {
            return lost_main(me + "lost rank 0 while it was " + phase + " (the master " + master +
                             " does not answer)");
        }
        if (*published) {
            if (**published == "ok") return Status::Ok();
            return Status::Error(me + "rank 0 failed while " + phase + ": " + (**published).substr(7));
        }
        const std::optional<int64_t> beats = heartbeat_->beats_of(0, limit);
        const auto now = std::chrono::steady_clock::now();
        if (!beats) {
            return lost_main(me + "lost rank 0 while it was " + phase + " (the master " + master +
                             " does not answer)");
        }
        if (*beats != last_beats) {
            last_beats = *beats;
            last_change = now;
        } else if (now - last_change > timeout_) {
            return lost_main(me + "lost rank 0 while it was " + phase +
                             ": no heartbeat for /distributed/timeout_s = " +
                             std::to_string(timeout_.count() / 1000) + " s");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

void DistContext::broadcast_from_main(const std::vector<torch::Tensor>& tensors, size_t bucket_bytes) {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> data;
    data.reserve(tensors.size());
    for (const torch::Tensor& t : tensors)
        data.push_back(t.detach());
    c10d::broadcast_coalesced(group_, data, bucket_bytes, 0);
}

void DistContext::mark_progress(int64_t step, StepPoint point) {
    heartbeat_->set_progress(3 * step + static_cast<int64_t>(point));
}

std::vector<std::optional<int64_t>> DistContext::heartbeat_steps(std::chrono::milliseconds limit) {
    std::vector<std::optional<int64_t>> steps;
    for (int64_t r = 0; r < env_.world_size; ++r) {
        const std::optional<int64_t> progress = heartbeat_ ? heartbeat_->progress_of(r, limit) : std::nullopt;
        steps.push_back(progress ? std::optional<int64_t>(*progress / 3)
                                 : std::nullopt);  // see mark_progress
    }
    return steps;
}

namespace {

std::string gave_up_key(int64_t rank) {
    return "slipway/gave_up/" + std::to_string(rank);
}

}  // namespace

std::optional<std::string> DistContext::describe_failed_peer(bool ask_store) {
    const auto limit = std::chrono::milliseconds(3000);
    // The heartbeat's copy first: rank 0 hosts the store and may be gone by now.
    std::optional<std::string> record = heartbeat_->seen_failure();
    if (!record && ask_store) record = heartbeat_->read(Heartbeat::failure_key(), limit);
    const size_t colon = record ? record->find(':') : std::string::npos;
    if (colon == std::string::npos) return std::nullopt;
    int64_t failed = -1;
    try {
        failed = std::stoll(record->substr(0, colon));
    } catch (const std::exception&) {
        return std::nullopt;
    }
    if (failed == env_.rank) return std::nullopt;
    blamed_ranks_ = {failed};
    const std::string message =
        "rank " + std::to_string(env_.rank) + ": stopping: " + record->substr(colon + 1);
    (void)heartbeat_->publish(gave_up_key(env_.rank), message, limit);
    if (env_.rank == 0) wait_for_survivors_records({failed});
    return message;
}

void DistContext::report_failure(const std::string& message) {
    const auto limit = std::chrono::milliseconds(3000);
    if (!heartbeat_->publish(Heartbeat::failure_key(), std::to_string(env_.rank) + ":" + message, limit))
        return;
    if (env_.rank != 0) return;  // the store stays up on rank 0 for the others to read
    // Each other rank's heartbeat reads the record within a beat (500 ms) and acknowledges it.
    std::vector<int64_t> others;
    for (int64_t r = 1; r < env_.world_size; ++r)
        others.push_back(r);
    wait_for_records(others, Heartbeat::failure_seen_key, std::chrono::seconds(5));
}

std::string DistContext::describe_failure(const std::string& what, int64_t step) {
    // A failure record that this rank's heartbeat already holds; the store is asked below, once it is known
    // to answer (a frozen master would cost the whole deadline).
    if (std::optional<std::string> failed_peer = describe_failed_peer(/*ask_store=*/false))
        return *failed_peer;
    const auto limit = std::chrono::milliseconds(3000);
    std::ostringstream message;
    const std::string context = backend_ + " said: " + what;
    const Heartbeat::Silence silence = heartbeat_->find_silent_ranks(std::chrono::milliseconds(2000));
    message << "rank " << env_.rank << ": ";
    if (!silence.store_error.empty()) {
        message << "the run lost rank 0 (the rendezvous master " << master_
                << " does not answer: " << silence.store_error << ") during step " << step << "; " << context;
        return message.str();
    }
    if (std::optional<std::string> failed_peer = describe_failed_peer()) return *failed_peer;
    // Silent ranks that left a record stopped because of the failure; the others are where it began.
    std::vector<int64_t> lost, followed;
    std::string followed_reason;
    for (const int64_t r : silence.silent_ranks) {
        if (std::optional<std::string> reason = heartbeat_->read(gave_up_key(r), limit)) {
            followed.push_back(r);
            if (followed_reason.empty()) followed_reason = *reason;
        } else {
            lost.push_back(r);
        }
    }
    // Among the ranks that still beat, one whose training thread lags this rank's is hung.
    std::vector<int64_t> hung;
    const std::optional<int64_t> mine = heartbeat_->progress_of(env_.rank, limit);
    if (lost.empty() && mine) {
        for (int64_t r = 0; r < env_.world_size; ++r) {
            if (r == env_.rank || std::count(silence.silent_ranks.begin(), silence.silent_ranks.end(), r))
                continue;
            const std::optional<int64_t> theirs = heartbeat_->progress_of(r, limit);
            if (theirs && *theirs < *mine) hung.push_back(r);
        }
    }
    blamed_ranks_ = !lost.empty() ? lost : hung;
    if (!lost.empty()) {
        message << "the run lost " << describe_ranks(lost, hosts_)
                << " (no heartbeat: killed, frozen or on a dead node) during step " << step;
        if (!followed.empty())
            message << " (" << describe_ranks(followed, hosts_) << " already stopped because of it)";
        message << "; " << context;
    } else if (!hung.empty()) {
        message
            << "the run lost " << describe_ranks(hung, hosts_) << " during step " << step
            << ": its heartbeat still beats but its training thread is stuck behind this rank's (a hang in "
               "data loading, a deadlock or a stuck kernel); "
            << context;
    } else if (!followed.empty()) {
        message << describe_ranks(followed, hosts_) << " stopped first: " << followed_reason;
    } else {
        // Every peer still beats and keeps up: the error is this rank's own (or the network's).
        message << "step " << step << " failed here while every other rank still answers: " << context;
    }
    (void)heartbeat_->publish(gave_up_key(env_.rank), message.str(), limit);
    if (env_.rank == 0 && !lost.empty()) wait_for_survivors_records(lost);
    return message.str();
}

void DistContext::wait_for_survivors_records(const std::vector<int64_t>& lost) {
    std::vector<int64_t> survivors;
    for (int64_t r = 1; r < env_.world_size; ++r)
        if (!std::count(lost.begin(), lost.end(), r)) survivors.push_back(r);
    // Each survivor watches the heartbeats for 2 s and may wait 3 s more on the store before it publishes.
    wait_for_records(survivors, gave_up_key, std::chrono::seconds(8));
}

void DistContext::wait_for_records(std::vector<int64_t> ranks, std::string (*key_of)(int64_t),
                                   std::chrono::seconds within) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (!ranks.empty() && std::chrono::steady_clock::now() < deadline) {
        ranks.erase(
            std::remove_if(ranks.begin(), ranks.end(),
                           [&](int64_t r) {
                               return heartbeat_->read(key_of(r), std::chrono::milliseconds(500)).has_value();
                           }),
            ranks.end());
        if (!ranks.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

void DistContext::abandon() {
    if (heartbeat_) heartbeat_->detach();
    // Leak deliberately: ~ProcessGroupGloo waits for queued work, ~TCPStore for its server thread.
    (void)heartbeat_.release();
    (void)group_.release();
    (void)store_.release();
}

bool DistContext::has_reduce_scatter() const {
#ifdef USE_C10D_NCCL
    return backend_ == "nccl";
#else
    return false;
#endif
}

}  // namespace slipway::dist
