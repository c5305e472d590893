// cuda_launch.h: through c10's device-generic guard interface, which every LibTorch version has, so no CUDA
// header of LibTorch's is needed (CPU builds of LibTorch ship none that compile).
#include "model/cuda_launch.h"

#include <c10/core/impl/VirtualGuardImpl.h>
#include <c10/util/Exception.h>

namespace slipway::model {

std::optional<cuda::ElementType> cuda_element_type(torch::ScalarType dtype) {
    switch (dtype) {
        case torch::kFloat32:
            return cuda::ElementType::kFloat32;
        case torch::kBFloat16:
            return cuda::ElementType::kBFloat16;
        case torch::kHalf:
            return cuda::ElementType::kFloat16;
        default:
            return std::nullopt;
    }
}

void* current_cuda_stream(const torch::Device& device) {
    const c10::impl::VirtualGuardImpl guard(c10::DeviceType::CUDA);
    const c10::Stream stream = guard.getStream(device);
    // Stream id 0 is the default stream, whose handle is null (c10::cuda::CUDAStream::stream()).
    TORCH_CHECK(stream.id() == 0, "slipway's CUDA kernels run on the default stream; the current stream on ",
                device.str(), " is another one (id ", stream.id(), ")");
    return nullptr;
}

}  // namespace slipway::model
