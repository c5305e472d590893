// LibTorch 2.x keeps collectives in c10d::Backend objects behind a c10d::ProcessGroup; 1.x process groups
// are the backends themselves. This is the one place that wraps a backend (2.x only; its constructor
// lost the Options argument in 2.6). Not compiled on this machine (libtorch 1.13).
#pragma once

#include <chrono>
#include <string>

#include <torch/version.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

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
