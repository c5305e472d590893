// Fully sharded training (/distributed/sharding: full; FSDP's FULL_SHARD, ZeRO-3). The model is cut into
// units: the embeddings, each decoder layer, and the head (final norm + lm_head). A unit's parameters lie in
// up to three flat buffers (frozen, trainable with weight decay, trainable without), each padded to a
// multiple of the world size; a rank keeps only its 1/N slice of each (its shard). QLoRA's NF4 storage is
// frozen too: its bytes in a buffer of their own (uint8), its fp32 block scales beside the frozen parameters.
// A unit is gathered (all-gather) just before its forward and again for its backward, and its bytes are given
// back after each; in backward its trainable gradients are reduced across ranks (reduce-scatter on NCCL, a
// ring of sends and receives on Gloo) straight into the shards' gradients. The optimizer sees only the
// shards. With one rank it is the same computation without communication.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <c10/util/intrusive_ptr.h>
#include <torch/types.h>

#include "contract/run_config.h"
#include "contract/status.h"
#include "io/safetensors.h"
#include "model/llama.h"

namespace c10d {
class ProcessGroup;
}  // namespace c10d

namespace slipway::train {

struct ShardedUnit;
class UnitCallState;

// The collectives the shards need; a null group means one rank.
struct ShardComm {
    c10::intrusive_ptr<c10d::ProcessGroup> group;
    int64_t rank = 0;
    int64_t world_size = 1;
    bool reduce_scatter = false;  // the group has it (c10d NCCL); Gloo in LibTorch 1.13 does not
    bool point_to_point = false;  // the group has send/recv (Gloo): gathers and reductions run as rings
    // Start the next unit's all-gather while this one computes (two units gathered at once).
    bool prefetch = false;
};

struct PendingGathers;

class ShardedModel {
public:
    // Lays the model's parameters out in units (requires_grad must already say what trains), keeps this
    // rank's slices and gives back the full parameters' memory. With `checkpoint` the slices are read from
    // the HF folder's memory-mapped safetensors (only this rank's bytes are touched); without, they are
    // taken from the parameters' current values (random init, LoRA's fresh adapters). `prepare` runs for each
    // unit ("embed", "layers.N", "head") just before its slices are taken: QLoRA quantizes that layer there,
    // so no more than one layer's NF4 storage is ever whole on a rank. A linear layer's NF4 storage (its
    // codes and block scales) is sharded with its unit like a frozen parameter. The slices and gathered
    // buffers live on `device` (the model itself may stay on the CPU: a GPU never holds it whole); the
    // model's other buffers (RoPE's frequencies) are moved there too.
    using PrepareUnit = std::function<Status(const std::string& unit)>;
    static Result<std::unique_ptr<ShardedModel>> create(model::LlamaForCausalLM model, ShardComm comm,
                                                        const io::Checkpoint* checkpoint,
                                                        const PrepareUnit& prepare = {},
                                                        torch::Device device = torch::kCPU);
    ~ShardedModel();

    // The optimizer's parameters: one shard per trainable flat buffer, named "<unit>.decay" or
    // "<unit>.no_decay". Their .grad receives the reduced gradients.
    const std::vector<std::string>& shard_names() const { return shard_names_; }
    const std::vector<torch::Tensor>& shards() const { return shards_; }
    const std::vector<bool>& shard_decays() const { return shard_decays_; }
    // Frozen shards too (for checkpoints that must be self-contained they are not needed: frozen weights
    // come from the model folder again). Total elements this rank holds, for the progress line.
    int64_t local_elements() const;

    // The mean next-token loss of ids: (B, T), unit by unit (each gathered, run and given back). With
    // gradients enabled, backward reduces the trainable gradients into the shards. Recompute (gradient
    // checkpointing) keeps only each decoder layer's input. bf16: autocast in the recomputation too.
    model::LossResult loss(const torch::Tensor& ids, bool count_correct, const torch::Tensor& trained = {},
                           const model::DocumentLayout& documents = {});
    void set_training(bool training);
    void set_gradient_checkpointing(bool on) { recompute_layers_ = on; }
    void set_bf16(bool on, torch::DeviceType device);

    // Gathers one unit at a time (every rank must call it) and hands `visit` that unit's parameters by
    // their HF names, as full tensors valid only during the call. `only_trainable`: gather only the
    // trainable buffers (LoRA adapters), which is what an adapter save needs.
    void for_each_unit(const std::function<void(const std::map<std::string, torch::Tensor>&)>& visit,
                       bool only_trainable);
    // Gathers every unit's trainable buffers at once (a LoRA adapter: small), runs `fn`, gives them back.
    void with_trainable_gathered(const std::function<void()>& fn);
    int64_t unit_count() const { return static_cast<int64_t>(units_.size()); }
    // For inference through the model's KV-cache forward (eval tasks): gathers each unit as the forward
    // reaches it and gives back the one before; every rank must run the same forwards.
    model::UnitHook inference_hook();
    // The model skeleton (HF names and shapes; its parameters hold no bytes outside a gather).
    model::LlamaForCausalLM& model() { return model_; }
    const ShardComm& comm() const { return comm_; }

private:
    friend class UnitCallState;
    ShardedModel(model::LlamaForCausalLM model, ShardComm comm);
    // Makes the unit's gathered buffers hold its weights: a prefetched gather is waited for, else one runs.
    void gather(ShardedUnit& unit, bool only_trainable);
    void gather_units(const std::vector<ShardedUnit*>& units);  // all their buffers
    void release_units(const std::vector<ShardedUnit*>& units);
    // Starts the gather of `units` in the background (with comm().prefetch and several ranks).
    void prefetch(const std::vector<ShardedUnit*>& units);
    void release(ShardedUnit& unit);
    // The units the loss head reads: the head, and the embeddings too when the head is tied to them.
    std::vector<ShardedUnit*> head_units();
    // Sum over ranks, divided by the world size, of a unit buffer's full gradient (padded); returns this
    // rank's slice. flat: (padded) -> (padded / N).
    torch::Tensor reduce_to_shard(const torch::Tensor& flat);
    // `next`: the units that run after these (prefetched while these compute).
    torch::Tensor run_unit(std::vector<ShardedUnit*> units, std::vector<ShardedUnit*> next,
                           const torch::Tensor& input, bool recompute,
                           std::function<torch::Tensor(const torch::Tensor&)> compute);

    model::LlamaForCausalLM model_;
    ShardComm comm_;
    std::vector<std::unique_ptr<ShardedUnit>> units_;  // embed, layers..., head
    std::vector<std::string> shard_names_;
    std::vector<torch::Tensor> shards_;
    std::vector<bool> shard_decays_;
    std::vector<std::unique_ptr<UnitCallState>> calls_;  // live until the next forward
    std::unique_ptr<PendingGathers> pending_;
    bool recompute_layers_ = false;
    bool bf16_ = false;
    torch::DeviceType device_type_ = torch::kCPU;
};

}  // namespace slipway::train
