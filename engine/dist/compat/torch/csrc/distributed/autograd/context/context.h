// Stand-in for the one LibTorch header Debian's libtorch-dev lacks (reducer.hpp includes it). c10d's
// Reducer only names DistAutogradContext::GradCallback and ContextPtr from it, for distributed autograd,
// which Slipway never uses. CMake puts this folder on the include path only when the real header is
// missing (NGC's torch ships it).
#pragma once

#include <functional>
#include <memory>

#include <ATen/core/Tensor.h>

namespace torch::distributed::autograd {

class DistAutogradContext {
public:
    using GradCallback = std::function<bool(at::Tensor&)>;
};

using ContextPtr = std::shared_ptr<DistAutogradContext>;

}  // namespace torch::distributed::autograd
