// The one place for c10d calls that differ between LibTorch versions. 2.x keeps collectives in
// c10d::Backend objects behind a c10d::ProcessGroup (1.x process groups are the backends themselves; the
// ProcessGroup constructor lost its Options argument in 2.6). 2.4+ asks TCPStore for its libuv server by
// default, which builds without libuv (Debian's 2.6) refuse.
#pragma once

#include <chrono>
#include <string>

#include <torch/version.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace slipway::dist {

// Switches `options` to TCPStore's classic server when it asks for libuv; false when it did not (1.x and
// 2.0-2.1 have only the classic one). libuv's availability is not exported, so callers try libuv first
// (NGC's torch has it) and come here when the store refuses it.
inline bool use_classic_store(c10d::TCPStoreOptions& options) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2)
    if (!options.useLibUV) return false;
    options.useLibUV = false;
    return true;
#else
    (void)options;
    return false;
#endif
}

}  // namespace slipway::dist

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>

namespace slipway::dist {

inline c10::intrusive_ptr<c10d::ProcessGroup> wrap_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                           int rank, int size, const std::string& name,
                                                           std::chrono::milliseconds timeout,
                                                           c10d::ProcessGroup::BackendType type,
                                                           c10::DeviceType device,
                                                           const c10::intrusive_ptr<c10d::Backend>& backend) {
#if TORCH_VERSION_MINOR >= 6
    (void)name;
    (void)timeout;
    auto group = c10::make_intrusive<c10d::ProcessGroup>(store, rank, size);
#else
    auto group = c10::make_intrusive<c10d::ProcessGroup>(
        store, rank, size, c10::make_intrusive<c10d::ProcessGroup::Options>(name, timeout));
#endif
    group->setDefaultBackend(type);
    group->setBackend(device, type, backend);
    return group;
}

}  // namespace slipway::dist
#endif
