// Whether this engine was built with Slipway's own CUDA kernels (nvcc and NCCL were found when it was built),
// without torch in the header: the run's log says so at its start, beside the engine's manifest.
#pragma once

namespace slipway::model {

bool cuda_kernels_built();

}  // namespace slipway::model
