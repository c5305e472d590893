// The planner: a run's peak memory per device, broken down, and its step time and time to train, from the
// run config and the model's config.json alone (slipway-engine plan, the app's editor). Pure arithmetic
// over RunConfig + LlamaConfig that describes this engine's training step (model/, train/, dist/): what
// it allocates, what autograd keeps for backward, and what the allocator holds on to. No torch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/run_config.h"
#include "contract/status.h"
#include "model/llama_config.h"

namespace slipway::plan {

// What the planner needs to know about the computer it plans for, beyond the run config (CPU runs only).
struct HostFacts {
    int64_t memory_bytes = 0;  // this computer's RAM (MemTotal), shared by the ranks of one node
    int64_t cpu_cores = 1;
};

// Peak bytes on one device (a GPU, or one rank's share of host RAM on CPU runs) at the step's high point.
struct MemoryBreakdown {
    int64_t weights = 0;           // parameters this rank keeps (fp32 masters; its shards when sharded)
    int64_t gradients = 0;         // fp32 gradients of the trainable parameters (or of this rank's shards)
    int64_t optimizer_states = 0;  // AdamW m and v, fp32
    int64_t activations = 0;       // what autograd keeps for backward plus the layer being differentiated
    int64_t logits_and_loss = 0;   // the loss head's buffers (chunked or whole logits)
    int64_t gathered_units = 0;    // sharded: a unit's full weights (and its full gradients in backward)
    int64_t communication = 0;     // gradient buckets (DDP) and collective scratch
    int64_t runtime = 0;           // CUDA context, or the process itself on CPU (LibTorch, BLAS, glibc)
    int64_t allocator_slack = 0;   // what the allocator holds beyond live tensors (fragmentation, caches)
    int64_t setup_transient = 0;   // setup only: weights held twice while the optimizer takes them over
    int64_t total() const;
};

struct Plan {
    // The device and its memory.
    std::string device;  // "NVIDIA H100 80GB (SXM)" or "CPU (this computer's RAM / ranks per node)"
    bool on_gpu = false;
    int64_t device_bytes = 0;
    int64_t per_device_bytes = 0;  // the peak: max over the phases below
    std::string peak_phase;        // setup | forward | backward
    bool fits = false;
    std::string reason;         // why it does not fit, and what would; empty when it fits
    MemoryBreakdown breakdown;  // at the peak phase
    int64_t setup_bytes = 0, forward_bytes = 0, backward_bytes = 0;  // each phase's peak

    // The model and the run.
    int64_t parameters = 0;  // the model's, adapters included
    int64_t trainable_parameters = 0;
    int64_t world_size = 1;
    int64_t layers = 0;
    int64_t activation_bytes_per_layer = 0;               // kept for backward, without checkpointing
    int64_t checkpointed_activation_bytes_per_layer = 0;  // kept with gradient checkpointing (the input)
    bool gradient_checkpointing = false;
    bool chunked_loss = false;
    std::string sharding;

    // Time.
    int64_t tokens_per_step = 0;  // global: micro batch x accumulation x world x block
    double flops_per_step = 0;    // model FLOPs of one optimizer step, all ranks
    double peak_flops_per_device = 0;
    double mfu = 0;  // the assumed share of peak
    double step_seconds = 0;
    std::optional<int64_t> steps;         // max_steps; unknown when epochs decide (needs the data)
    std::optional<double> total_seconds;  // steps x step_seconds
};

// Constants that are not in the run config, stated once (measured where said).
struct PlanAssumptions {
    double gpu_mfu = 0.40;               // model FLOPs utilization assumed on GPUs (bf16 or fp32 peak)
    double cpu_mfu = 0.50;               // share of the one-core fp32 matmul rate a step reaches on CPU
    double cpu_gflops_per_core = 0;      // 0: kCpuGflopsPerCore
    std::optional<double> mfu_override;  // --mfu
};

// The plan of `config` for the model `model`. Errors: a GPU type not in the table, a shape the engine
// cannot run (LoRA target matching nothing).
[[nodiscard]] Result<Plan> make_plan(const RunConfig& config, const model::LlamaConfig& model,
                                     const HostFacts& host, const PlanAssumptions& assumptions = {});

// One object: per_device_bytes, device_bytes, fits, reason, breakdown {...}, step_seconds, total_seconds, ...
nlohmann::ordered_json to_json(const Plan& plan);
// A readable table (GiB with the bytes' shares), the verdict and the time.
std::string format_plan(const Plan& plan);

}  // namespace slipway::plan
