// The GPU table (gpu_models.h). Memory: what nvidia-smi reports as total (MiB); peaks: NVIDIA's data sheets
// (dense, SXM where there are several forms).
#include "contract/gpu_models.h"

namespace slipway {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

}  // namespace

const std::vector<GpuModel>& gpu_models() {
    static const std::vector<GpuModel> models = {
        {"v100-32gb", "NVIDIA V100 32GB (SXM2)", 32510 * kMiB, 0, 15.7},  // no bf16: fp16 125
        {"a100-40gb", "NVIDIA A100 40GB (SXM)", 40960 * kMiB, 312, 19.5},
        {"a100-80gb", "NVIDIA A100 80GB (SXM)", 81920 * kMiB, 312, 19.5},
        {"l40s", "NVIDIA L40S 48GB", 46068 * kMiB, 362, 91.6},
        {"h100-80gb", "NVIDIA H100 80GB (SXM)", 81559 * kMiB, 989, 67},
        {"h100-94gb", "NVIDIA H100 NVL 94GB", 95830 * kMiB, 835, 60},
        {"h200", "NVIDIA H200 141GB (SXM)", 143771 * kMiB, 989, 67},
        {"b200", "NVIDIA B200 180GB", 183359 * kMiB, 2250, 80},
    };
    return models;
}

const GpuModel* find_gpu_model(const std::string& key) {
    for (const GpuModel& model : gpu_models()) {
        if (model.key == key) return &model;
    }
    return nullptr;
}

std::vector<std::string> gpu_model_keys() {
    std::vector<std::string> keys;
    for (const GpuModel& model : gpu_models())
        keys.push_back(model.key);
    return keys;
}

}  // namespace slipway
