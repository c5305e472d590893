// The GPU models a run can ask for (/slurm/gpu_type): memory and peak matmul rates, the one table the
// run config's choices and the planner's device memory and step time both read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace slipway {

struct GpuModel {
    std::string key;           // the run config's value, e.g. "h100-80gb"
    std::string name;          // as people say it, e.g. "NVIDIA H100 80GB (SXM)"
    int64_t memory_bytes = 0;  // total device memory as the driver reports it (nvidia-smi's MiB x 2^20)
    double bf16_tflops = 0;    // dense bf16 tensor-core peak (no sparsity)
    double fp32_tflops = 0;    // plain fp32 (torch's default keeps TF32 off for matmuls)
};

// Every model, in the order the schema lists them.
const std::vector<GpuModel>& gpu_models();
// The model with this key; nullptr when there is none.
const GpuModel* find_gpu_model(const std::string& key);
// The keys, for the schema's choices.
std::vector<std::string> gpu_model_keys();

}  // namespace slipway
