// CommunicatorGroup: a c10d process group whose collectives run on a Communicator (communicator.h) —
// the raw NCCL communicator where LibTorch was built without c10d NCCL. It implements what the engine's
// distributed path calls: allreduce (DDP's Reducer, the step's scalar sums), broadcast
// (broadcast_coalesced, verify_params_across_processes), allgather and barrier. Every collective
// completes before it returns (the Communicator waits with its deadline), so its Work and Future are
// already complete: gradients are exchanged bucket by bucket as backward makes them ready, but a bucket's
// exchange holds up the rest of backward instead of overlapping it.
//
// A failed collective returns a Work whose wait() throws the communicator's message; the trainer's
// failure path (DistContext::describe_failure) then names the lost rank as for Gloo.
#pragma once

#include <memory>

#include <c10/util/intrusive_ptr.h>

#include "dist/communicator.h"

namespace c10d {
class ProcessGroup;
class Store;
}  // namespace c10d

namespace slipway::dist {

// The process group to hand to the Reducer and to DistContext. LibTorch 1.x: the group itself;
// 2.x: a ProcessGroup with the communicator registered as its backend (for CUDA tensors when it takes device
// memory, CPU ones otherwise).
c10::intrusive_ptr<c10d::ProcessGroup> make_communicator_group(std::shared_ptr<Communicator> communicator,
                                                               const c10::intrusive_ptr<c10d::Store>& store);

}  // namespace slipway::dist
