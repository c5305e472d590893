// DistContext: this process's place in a multi-process run: the c10d TCPStore rendezvous on the master
// (every key under a prefix derived from the job's secret, rendezvous.h),
// the c10d process group every collective goes through (Gloo on CPU; NCCL where LibTorch has it), a
// heartbeat that tells which rank was lost when a collective fails, and the few collectives the trainer
// calls directly (small host sums, barrier, broadcast from rank 0). A single-process run has none.
//
// Collectives throw (c10::Error / std::runtime_error) when a peer dies or stalls past timeout_s: the
// trainer catches around the whole loop, tells those apart from its own errors with
// is_collective_failure(), and asks describe_failure() for the message. A rank that fails on its own (out
// of memory, a shape error, a file) says why with report_failure(), so the others name it and its cause
// instead of reporting it lost.
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <c10/util/intrusive_ptr.h>
#include <torch/types.h>

#include "contract/run_config.h"
#include "contract/status.h"
#include "dist/communicator.h"
#include "dist/env.h"

namespace c10d {
class ProcessGroup;
class Store;
}  // namespace c10d

namespace slipway::dist {

class Heartbeat;

// A failure of the communication itself: Gloo's and our communicators' errors, LibTorch 2.2+'s DistError
// (backend, store, network). Everything else a rank throws (c10::Error from a shape mismatch, out of
// memory, a filesystem error) is its own failure.
bool is_collective_failure(const std::exception& e);

// A KeyValueExchange over a c10d store (e.g. the rendezvous store, for an NCCL unique id).
KeyValueExchange store_exchange(const c10::intrusive_ptr<c10d::Store>& store);

class DistContext {
public:
    // Rendezvous with every rank (an unreachable master within timeout_s is an error naming host:port),
    // then the process group for `config.backend` ("auto" picks NCCL only with GPUs and c10d NCCL).
    static Result<std::unique_ptr<DistContext>> connect(const DistEnv& env, const DistributedConfig& config);
    ~DistContext();

    int64_t rank() const { return env_.rank; }
    int64_t world_size() const { return env_.world_size; }
    bool is_main() const { return env_.rank == 0; }
    const std::string& backend() const { return backend_; }
    // "host:port" of the rendezvous store, and whether it listens on that address alone (LibTorch 2.3+;
    // older ones listen on every interface).
    const std::string& master() const { return master_; }
    bool listens_on_master_only() const { return listens_on_master_only_; }
    // hosts()[r]: the node rank r runs on, exchanged at the rendezvous (rank_hosts.h describes them).
    const std::vector<std::string>& hosts() const { return hosts_; }
    // The group has reduce_scatter: c10d's ProcessGroupNCCL (Gloo in 1.13 and our raw NCCL group do not).
    bool has_reduce_scatter() const;
    const c10::intrusive_ptr<c10d::ProcessGroup>& group() const { return group_; }
    // The rendezvous store (e.g. to exchange an NCCL unique id).
    const c10::intrusive_ptr<c10d::Store>& store() const { return store_; }

    // In-place sums across ranks, in fp64 (a handful of scalars per step: losses, counts, flags).
    void allreduce_sum(std::vector<double>& values);
    void barrier();
    // Work only rank 0 does (tokenizing, checkpoints, outputs) may take longer than timeout_s, so the
    // others do not wait for it in a collective: rank 0 publishes how `phase` ended, the others wait for
    // that as long as rank 0's heartbeat moves. Rank 0 gets its own status back; the others get Ok, the
    // error rank 0 published, or kUnavailable when rank 0 stopped beating for timeout_s (naming rank 0's
    // own failure when it reported one).
    Status wait_for_main(const std::string& phase, const Status& main_status);
    // The GPU of a local rank: local_rank modulo the visible devices (one visible device per task under
    // Slurm's --gpus-per-task binding gives every rank device 0).
    static int cuda_device_index(int64_t local_rank);
    // Rank 0's values into every rank's tensors (DDP's initial sync), in buckets of `bucket_bytes`.
    void broadcast_from_main(const std::vector<torch::Tensor>& tensors, size_t bucket_bytes);

    // Where the training thread is, published with the heartbeat: a rank that still beats but lags the
    // others' progress has a hung training thread, and the failure message names it.
    enum class StepPoint { kStart = 0, kSyncBackward = 1, kStepEnd = 2 };
    void mark_progress(int64_t step, StepPoint point);
    // Every rank's step as its heartbeat last published it (nullopt: none yet, or the store did not answer
    // within `limit` per rank). Reads the store: for rank 0 now and then, not every step.
    std::vector<std::optional<int64_t>> heartbeat_steps(std::chrono::milliseconds limit);

    // After a collective threw: which rank the run lost and how — no heartbeat (killed, frozen, dead
    // node), or beating with a training thread stuck behind the others — the step, and what the
    // collective said. Ranks that already gave up because of the same failure (they leave a record) are
    // not blamed: with more than two ranks the message names the rank that failed first. Publishes this
    // rank's own record. Takes a couple of seconds (it watches the heartbeats move).
    // Rank 0 hosts the store the survivors read this from: when it found ranks lost, it stays (8 s at most)
    // until every other survivor has left its own record, so a master that stops first is not blamed.
    // When another rank published a failure record (report_failure), the message above is this rank
    // stopping because of it, naming that rank and its cause.
    std::string describe_failure(const std::string& what, int64_t step);
    // The ranks the last describe_failure (or describe_failed_peer) blamed: lost, hung, or the one whose
    // failure record the others stopped for. Empty when it blamed none (this rank's own error).
    const std::vector<int64_t>& blamed_ranks() const { return blamed_ranks_; }
    // That part of describe_failure alone (wait_for_main uses it when rank 0 is gone): nullopt when no
    // other rank published a failure record. Without `ask_store`, only the copy the heartbeat holds.
    std::optional<std::string> describe_failed_peer(bool ask_store = true);
    // This rank failed on its own (`message` says how): publishes it for the others, which learn it when
    // their next collective fails. Rank 0 hosts the store: it waits (5 s at most) until every other rank's
    // heartbeat has read the record. Call abandon() next.
    void report_failure(const std::string& message);
    // A failed group must not be destroyed: its destructor waits for work a dead peer never finishes.
    // Leaks the group and the stores on purpose; the process is about to exit.
    void abandon();

private:
    DistContext() = default;
    Status rendezvous(const DistEnv& env, const DistributedConfig& config,
                      c10::intrusive_ptr<c10d::Store>& heartbeat_store,
                      c10::intrusive_ptr<c10d::Store>& probe_store);
    // Every rank publishes its host name; rank 0 gathers them into one key the others read.
    void exchange_hosts();
    void wait_for_survivors_records(const std::vector<int64_t>& lost);
    // Until each of `ranks` has a record under key_of(rank) in the store, or `within` passed.
    void wait_for_records(std::vector<int64_t> ranks, std::string (*key_of)(int64_t),
                          std::chrono::seconds within);
    DistEnv env_;
    std::string backend_;
    std::string master_;
    bool listens_on_master_only_ = false;
    std::vector<std::string> hosts_;
    std::vector<int64_t> blamed_ranks_;
    std::chrono::milliseconds timeout_{0};
    c10::intrusive_ptr<c10d::Store> store_;
    c10::intrusive_ptr<c10d::ProcessGroup> group_;
    std::unique_ptr<Heartbeat> heartbeat_;
};

}  // namespace slipway::dist
