// The planner (plan.h). Every figure follows what this engine does in a training step; the comments name
// the code each term comes from. Elements are counted exactly; bytes are fp32 (4) unless said otherwise.
//
// Unsharded (train/flat_adamw, dist/gradient_reducer): every parameter is fp32 (bf16 only inside autocast);
// the trainable ones are moved into the optimizer's flat buffers (params, grads, m, v: 16 bytes each), and
// while that happens the old copies still exist (setup). With several ranks DDP's Reducer keeps a bucket
// copy of every gradient (gradient_as_bucket_view is off).
// Sharded (train/sharded_model): a unit (embeddings, a decoder layer, the head) keeps its parameters in
// up to three flat buffers (frozen, decay, no decay), each padded to the world size; a rank keeps 1/N of
// each, plus gradients and m, v of its trainable slices (FlatAdamW's copies). A unit is gathered whole for
// its forward and its backward; in backward autograd's full-size gradients of its trainable parameters, a
// zeroed full flat gradient and the reduction's buffers exist while it is reduced. On the CPU those unit
// buffers come from MappedPool, which keeps freed ones: the planner replays its takes and gives.
#include "plan/plan.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

#include "contract/gpu_models.h"
#include "model/lora_targets.h"

namespace slipway::plan {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Measured on this machine (Debian 12, LibTorch 1.13, OpenBLAS pthreads, 1 thread), once, with
// tests/bench/plan_bench.py: peak RSS of `slipway-engine train` minus its live tensors on the tiny model.
constexpr int64_t kCpuProcessBytes = 190 * kMiB;
// glibc's heap on CPU: freed blocks stay resident (main.cpp keeps 1 GiB before trimming) and fragment; the
// peak RSS grows ~5-15% over live tensors in the first steps. One figure, set once from the unsharded rows
// of tests/bench/plan_bench.py (not per config). Not applied to sharded runs' MappedPool buffers
// (anonymous mappings of their own, outside the heap).
constexpr double kCpuAllocatorSlack = 0.12;
// One core's fp32 matmul rate here (tests/bench/train_bench.py prints it), for CPU step times.
constexpr double kCpuGflopsPerCore = 40.0;
// CUDA: the context with LibTorch 2.x's lazy module loading plus cuBLAS workspaces, outside the caching
// allocator; NCCL's buffers per communicator; the caching allocator's fragmentation over live tensors.
constexpr int64_t kCudaContextBytes = 600 * kMiB;
constexpr int64_t kNcclBytes = 512 * kMiB;
constexpr double kCudaAllocatorSlack = 0.05;
// model/llama.cpp causal_lm_loss: rows per chunk; model/chunked_loss.cpp: below this many logits the loss
// is one fused cross_entropy over the whole (N, V) logits.
constexpr int64_t kLossChunkRows = 256;
constexpr int64_t kSmallLogits = int64_t{1} << 21;

int64_t round_up(int64_t x, int64_t multiple) {
    return multiple <= 1 ? x : (x + multiple - 1) / multiple * multiple;
}

// One parameter tensor of the model as the engine names it, with the unit it is sharded in.
struct Tensor {
    std::string name;
    int64_t elements = 0;
    int64_t unit = 0;  // 0 embeddings, 1..L decoder layers, L + 1 the head
    bool trainable = false;
    bool decays = true;
    bool nf4 = false;  // QLoRA: a decoder linear weight stored as NF4 (its bytes: nf4_storage)
};

// A linear layer of one decoder layer and its adapter, if any.
struct Linear {
    std::string module;
    int64_t in = 0, out = 0;
    int64_t lora_rank = 0;  // 0: no adapter
};

struct Inventory {
    std::vector<Tensor> tensors;
    std::vector<std::vector<Linear>> layer_linears;  // per decoder layer
    int64_t parameters = 0, trainable = 0;
    bool embedding_trainable = false, head_trainable = false;
    bool any_layer_weight_frozen = false;
    // QLoRA: the decoder's linear weights stored as NF4 (model/nf4_weight.h), and the largest of them.
    int64_t nf4_elements = 0, largest_nf4 = 0;
};

// NF4 storage of n weights: 4-bit codes, plus an fp32 absmax per 64, or with double quantization a byte per
// 64 and an fp32 per 64 x 256 (model/nf4_weight.h).
// Sharded, the bytes (codes, and absmax codes with double quantization) lie in a uint8 buffer of their unit
// and the fp32 scales beside the unit's frozen parameters (train/sharded_model.cpp).
struct Nf4Storage {
    int64_t code_bytes = 0, fp32_scales = 0;
};

Nf4Storage nf4_storage(int64_t n, bool double_quant) {
    const int64_t blocks = (n + 63) / 64;
    return {(n + 1) / 2 + (double_quant ? blocks : 0), double_quant ? (blocks + 255) / 256 : blocks};
}

int64_t nf4_bytes(int64_t n, bool double_quant) {
    const Nf4Storage s = nf4_storage(n, double_quant);
    return s.code_bytes + 4 * s.fp32_scales;
}

// train/trainable.cpp: requires_grad by adapter method.
bool is_trainable(const std::string& name, const AdapterConfig& adapter) {
    if (adapter.method == "full") return true;
    if (adapter.method == "embeddings")
        return name == "model.embed_tokens.weight" || name == "lm_head.weight";
    return name.find(".lora_A.") != std::string::npos || name.find(".lora_B.") != std::string::npos ||
           model::in_modules_to_save(name, adapter);
}

// HF's no-decay rule (train/trainable.cpp).
bool decays(const std::string& name) {
    return name.find("norm") == std::string::npos && name.find("bias") == std::string::npos;
}

// The parameters in named_parameters() order (model/llama.h, model/lora.cpp).
Result<Inventory> inventory(const model::LlamaConfig& m, const AdapterConfig& adapter) {
    Inventory inv;
    const bool lora = adapter.uses_lora();
    const int64_t c = m.hidden_size, d = m.head_dim, q = m.num_attention_heads * d,
                  kv = m.num_key_value_heads * d, layers = m.num_hidden_layers;
    bool any_adapter = false;
    auto add = [&](const std::string& name, int64_t elements, int64_t unit) {
        inv.tensors.push_back({name, elements, unit, is_trainable(name, adapter), decays(name)});
    };
    auto add_linear = [&](const std::string& module, int64_t in, int64_t out, bool bias, int64_t unit,
                          std::vector<Linear>* linears) {
        add(module + ".weight", in * out, unit);
        if (adapter.method == "qlora" && linears != nullptr) {
            inv.tensors.back().nf4 = true;
            inv.nf4_elements += in * out;
            inv.largest_nf4 = std::max(inv.largest_nf4, in * out);
        }
        if (bias) add(module + ".bias", out, unit);
        Linear linear{module, in, out, 0};
        if (lora && model::lora_targets(module, adapter)) {
            linear.lora_rank = model::lora_rank_for(module, adapter);
            add(module + ".lora_A.weight", linear.lora_rank * in, unit);
            add(module + ".lora_B.weight", out * linear.lora_rank, unit);
            any_adapter = true;
        }
        if (linears != nullptr) linears->push_back(linear);
    };
    add("model.embed_tokens.weight", m.vocab_size * c, 0);
    for (int64_t i = 0; i < layers; ++i) {
        const std::string p = "model.layers." + std::to_string(i) + ".";
        std::vector<Linear> linears;
        add_linear(p + "self_attn.q_proj", c, q, m.qkv_bias, i + 1, &linears);
        add_linear(p + "self_attn.k_proj", c, kv, m.qkv_bias, i + 1, &linears);
        add_linear(p + "self_attn.v_proj", c, kv, m.qkv_bias, i + 1, &linears);
        add_linear(p + "self_attn.o_proj", q, c, m.o_bias, i + 1, &linears);
        if (m.qk_norm) {
            add(p + "self_attn.q_norm.weight", d, i + 1);
            add(p + "self_attn.k_norm.weight", d, i + 1);
        }
        add_linear(p + "mlp.gate_proj", c, m.intermediate_size, m.mlp_bias, i + 1, &linears);
        add_linear(p + "mlp.up_proj", c, m.intermediate_size, m.mlp_bias, i + 1, &linears);
        add_linear(p + "mlp.down_proj", m.intermediate_size, c, m.mlp_bias, i + 1, &linears);
        add(p + "input_layernorm.weight", c, i + 1);
        add(p + "post_attention_layernorm.weight", c, i + 1);
        inv.layer_linears.push_back(std::move(linears));
    }
    add("model.norm.weight", c, layers + 1);
    if (!m.tie_word_embeddings) add_linear("lm_head", c, m.vocab_size, false, layers + 1, nullptr);
    if (lora && !any_adapter)
        return Status::Error("/adapter/target_modules: no layer of this model is adapted");
    for (const Tensor& t : inv.tensors) {
        inv.parameters += t.elements;
        if (t.trainable) inv.trainable += t.elements;
        if (t.name == "model.embed_tokens.weight") inv.embedding_trainable = t.trainable;
        if (t.name == "lm_head.weight") inv.head_trainable = t.trainable;
        if (t.unit >= 1 && t.unit <= layers && !t.trainable && t.name.find("lora_") == std::string::npos)
            inv.any_layer_weight_frozen = true;
    }
    if (m.tie_word_embeddings) inv.head_trainable = inv.embedding_trainable;
    if (inv.trainable == 0) return Status::Error("/adapter/method: no parameter would train");
    return inv;
}

// How a step computes: on which device, in which precision, with which attention kernel.
struct Numerics {
    bool on_gpu = false;                // CUDA with NGC's LibTorch 2.x: fused scaled_dot_product_attention
    bool bf16 = false;                  // autocast: matmul outputs (and the copies of their inputs) in bf16
    int64_t act = 4;                    // bytes of an autocast matmul's output and of its inputs' casts
    bool joint_weights_copied = false;  // q|k|v and gate|up not adjacent in memory: a concatenated copy
};

struct LayerActivations {
    int64_t saved = 0;      // what autograd keeps for this layer's backward
    int64_t transient = 0;  // extra while this layer's backward runs
};

// One decoder layer's forward as model/llama.cpp writes it, tensor by tensor. n = B x T tokens.
LayerActivations layer_activations(const model::LlamaConfig& m, const std::vector<Linear>& linears,
                                   const Numerics& x, int64_t batch, int64_t t, double dropout) {
    const int64_t n = batch * t, c = m.hidden_size, inter = m.intermediate_size, h = m.num_attention_heads,
                  hkv = m.num_key_value_heads, d = m.head_dim, a = x.act;
    const int64_t qkv = (h + 2 * hkv) * d, qk = (h + hkv) * d;
    int64_t s = 0;
    // The layer input (fp32 residual stream), kept by input_layernorm; the normed rows that q|k|v multiply
    // (the norm's fp32 output, or autocast's bf16 copy of it); on GPU the norm's ATen ops keep x * rstd too.
    const int64_t norm_block = a * n * c + (x.on_gpu ? 4 * n * c : 0);
    s += 4 * n * c + norm_block;
    // Weights autograd keeps: a concatenated copy of q|k|v and gate|up unless they lie side by side
    // (joint_linear's AdjacentRows); under autocast, bf16 copies of every weight.
    const int64_t joint = qkv * c + 2 * inter * c, single = h * d * c + inter * c;
    if (x.joint_weights_copied)
        s += a * joint;
    else if (x.bf16)
        s += 2 * joint;
    if (x.bf16) s += 2 * single;
    // LoRA: each adapter keeps its (dropped-out) input and its (n, r) middle.
    for (const Linear& l : linears) {
        if (l.lora_rank == 0) continue;
        if (dropout > 0) {
            s += (x.on_gpu ? 1 : 4) * n * l.in;  // the dropout mask (bool on CUDA, float on CPU)
            s += a * n * l.in;                   // the dropped input
        } else if (x.bf16) {
            s += 2 * n * l.in;  // autocast's cast of the (non-leaf) input, per adapter
        }
        s += a * n * l.lora_rank;
    }
    s += a * n * qkv;  // q|k|v, kept whole through the views RoPE and attention keep
    LayerActivations out;
    if (x.on_gpu) {
        // RoPE in ATen ops keeps rotate_half(q|k); fused attention keeps q, k and v repeated to H heads,
        // its output and the log-sum-exp.
        s += a * n * qk + 4 * a * n * h * d + 4 * batch * h * t;
        out.transient = 4 * a * n * h * d;
    } else if (!x.bf16) {
        // CpuRope's output, BlasAttention's softmax (B, H, T, T) and output (o_proj's input).
        s += 4 * n * qk + 4 * batch * h * t * t + 4 * n * h * d;
        out.transient = 2 * 4 * batch * h * t * t + 4 * n * qkv;  // dP and dS, dq dk dv
    } else {
        // CPU autocast: plain attention (torch_compat.cpp) with bf16 copies and fp32 softmax.
        s += 2 * n * qk + 3 * 2 * n * h * d + (4 + 2) * batch * h * t * t + 2 * n * h * d;
        out.transient = 2 * 4 * batch * h * t * t;
    }
    s += 4 * n * c + norm_block;                 // h (residual) and the post-attention norm
    s += a * n * 2 * inter + a * n * inter * 2;  // gate|up, silu(gate), silu(gate) * up
    out.saved = s;
    // Backward of the MLP: gradients of the product, silu, gate|up and the rows; the flowing gradient.
    out.transient = std::max(out.transient, 4 * a * n * inter) + 2 * 4 * n * c;
    return out;
}

// train/sharded_model.cpp's MappedPool, replayed: on the CPU every unit-sized buffer (a rank's shards, a
// gathered unit, a unit's full flat gradient) is an anonymous mapping, and a freed one is kept for the next
// buffer of the same byte size, up to kPoolKeptPerSize of each size; kept ones are never returned. What
// stays resident is decided by the order of takes and gives, so the planner replays that order.
constexpr int64_t kPoolKeptPerSize = 2;

class MappedPoolReplay {
public:
    void take(int64_t bytes) {
        if (bytes == 0) return;  // unit_buffer: an empty tensor, no mapping
        Count& count = by_size_[bytes];
        if (count.free > 0) {
            --count.free;
        } else {
            mapped_ += bytes;
        }
        ++count.live;
        high_ = std::max(high_, mapped_);
    }
    void give(int64_t bytes) {
        if (bytes == 0) return;
        Count& count = by_size_[bytes];
        --count.live;
        if (count.free < kPoolKeptPerSize) {
            ++count.free;
        } else {
            mapped_ -= bytes;
        }
    }
    // The most bytes mapped since the previous call; starts the next interval.
    int64_t interval_high() {
        const int64_t high = high_;
        high_ = mapped_;
        return high;
    }

private:
    struct Count {
        int64_t live = 0, free = 0;
    };
    std::map<int64_t, Count> by_size_;
    int64_t mapped_ = 0, high_ = 0;
};

// One unit's flat buffers (FlatBuffer): padded elements, 0 where the unit has no buffer of that kind.
struct UnitBuffers {
    static constexpr int kKinds = 4;
    int64_t padded[kKinds] = {0, 0, 0, 0};  // frozen, decay, no decay (fp32); NF4 codes (uint8)
    int64_t trainable_elements = 0;         // unpadded: what torch::autograd::grad returns for the unit
    static constexpr bool kTrainable[kKinds] = {false, true, true, false};
    static constexpr int64_t kElementBytes[kKinds] = {4, 4, 4, 1};
    int64_t bytes(int kind) const { return kElementBytes[kind] * padded[kind]; }
    int64_t all_bytes() const { return bytes(0) + bytes(1) + bytes(2) + bytes(3); }
};

// What a sharded rank holds besides activations and the loss head, per phase.
struct ShardedMemory {
    int64_t shards = 0;            // all of this rank's slices (frozen in the pool, trainable in FlatAdamW)
    int64_t trainable_shards = 0;  // the trainable ones: FlatAdamW's params, grads, and m and v twice this
    int64_t frozen_shards = 0;     // the frozen ones (pool mappings)
    // Gathered units, full flat gradients and freed buffers the pool keeps: its bytes beyond the live
    // frozen shards (setup: beyond all the slices, which are all pool buffers then), at each phase's high.
    int64_t setup_pool = 0, forward_pool = 0, backward_pool = 0;
    // The backward of the unit call that needs most beside its gathered buffers: autograd's full-size
    // per-parameter gradients, the reduction's buffers, and whether it is a decoder layer (whose own
    // backward transient then adds).
    int64_t backward_unit_gradients = 0, backward_reduce = 0;
    bool backward_in_layer = false;
};

// train/trainer.cpp build_sharded_model: prefetch on, or auto on NCCL (GPUs).
bool shards_prefetch(const RunConfig& config, bool on_gpu) {
    const std::string& prefetch = config.distributed.prefetch;
    return config.world_size() > 1 && (prefetch == "on" || (prefetch == "auto" && on_gpu));
}

// ShardedModel (train/sharded_model.cpp) step by step: create takes a slice per buffer, FlatAdamW copies the
// trainable slices and frees the originals; loss() runs one call per unit (embed, each layer, the head;
// the head also gathers the embeddings when tied), gathering its buffers (with prefetch: the next call's
// too) and giving them back; backward runs the calls that autograd saw in reverse, gathers again, and per
// trainable buffer fills a zeroed full-size flat gradient from autograd's per-parameter gradients and
// reduces it to this rank's slice. Two steps are replayed: the second starts with what the first kept.
// layer_backward: a decoder layer's own backward transient (its recomputed activations with checkpointing).
ShardedMemory sharded_memory(const Inventory& inv, int64_t layers, bool tied, int64_t world, bool on_gpu,
                             bool prefetch, int64_t layer_backward, bool double_quant) {
    const int64_t unit_count = layers + 2;
    std::vector<UnitBuffers> units(static_cast<size_t>(unit_count));
    for (const Tensor& tensor : inv.tensors) {
        UnitBuffers& unit = units[static_cast<size_t>(tensor.unit)];
        if (tensor.nf4) {
            const Nf4Storage storage = nf4_storage(tensor.elements, double_quant);
            unit.padded[3] += storage.code_bytes;
            unit.padded[0] += storage.fp32_scales;
            continue;
        }
        unit.padded[tensor.trainable ? (tensor.decays ? 1 : 2) : 0] += tensor.elements;
        if (tensor.trainable) unit.trainable_elements += tensor.elements;
    }
    ShardedMemory out;
    int64_t largest_unit = 0, largest_trainable = 0;  // bytes, elements
    for (UnitBuffers& unit : units) {
        int64_t trainable = 0;
        for (int kind = 0; kind < UnitBuffers::kKinds; ++kind) {
            unit.padded[kind] = round_up(unit.padded[kind], world);
            const int64_t shard = unit.bytes(kind) / world;
            out.shards += shard;
            (UnitBuffers::kTrainable[kind] ? out.trainable_shards : out.frozen_shards) += shard;
            if (UnitBuffers::kTrainable[kind]) trainable += unit.padded[kind];
        }
        largest_unit = std::max(largest_unit, unit.all_bytes());
        largest_trainable = std::max(largest_trainable, trainable);
    }
    // The calls of one forward, in order, by unit index; which of them autograd records (UnitCall): those
    // with trainable slices or an input that needs a gradient.
    std::vector<std::vector<int64_t>> calls;
    for (int64_t u = 0; u <= layers; ++u)
        calls.push_back({u});
    calls.push_back(tied ? std::vector<int64_t>{layers + 1, 0} : std::vector<int64_t>{layers + 1});
    std::vector<bool> recorded;
    bool input_needs_grad = false;
    for (const auto& call : calls) {
        bool trains = false;
        for (int64_t u : call)
            trains = trains || units[static_cast<size_t>(u)].trainable_elements > 0;
        input_needs_grad = input_needs_grad || trains;
        recorded.push_back(input_needs_grad);
    }
    // The reduction of one trainable buffer (reduce_to_shard) and what its result keeps until autograd
    // accumulates it: NCCL's reduce_scatter output; Gloo's ring (buffers of 1 MiB and more) a received
    // chunk and the result; Gloo's allreduce the result.
    auto reduce_bytes = [&](int64_t padded) -> std::pair<int64_t, int64_t> {  // {kept result, scratch}
        const int64_t shard = 4 * padded / world;
        if (world == 1 || padded == 0) return {0, 0};
        if (on_gpu) return {shard, 0};
        return {shard, 4 * padded >= kMiB ? shard : 0};
    };
    int64_t heaviest = -1;
    for (size_t i = 0; i < calls.size(); ++i) {
        if (!recorded[i]) continue;
        int64_t gradients = 0, kept = 0, scratch = 0;
        for (int64_t u : calls[i]) {
            const UnitBuffers& unit = units[static_cast<size_t>(u)];
            gradients += 4 * unit.trainable_elements;
            for (int kind = 1; kind < 3; ++kind) {
                const auto [result, received] = reduce_bytes(unit.padded[kind]);
                kept += result;
                scratch = std::max(scratch, received);
            }
        }
        const bool in_layer = i > 0 && i + 1 < calls.size();
        if (gradients + kept + scratch + (in_layer ? layer_backward : 0) > heaviest) {
            heaviest = gradients + kept + scratch + (in_layer ? layer_backward : 0);
            out.backward_unit_gradients = gradients;
            out.backward_reduce = kept + scratch;
            out.backward_in_layer = in_layer;
        }
    }
    if (on_gpu) {  // plain CUDA allocations the caching allocator reuses: what is live at once
        out.forward_pool = (prefetch ? 2 : 1) * largest_unit;
        out.backward_pool = out.forward_pool + 4 * largest_trainable;  // the unit's full flat gradient
        return out;
    }
    MappedPoolReplay pool;
    for (const UnitBuffers& unit : units) {
        for (int kind = 0; kind < UnitBuffers::kKinds; ++kind)
            pool.take(unit.bytes(kind) / world);
    }
    out.setup_pool = pool.interval_high() - out.shards;  // the slices themselves: 0
    for (const UnitBuffers& unit : units) {              // FlatAdamW took the trainable slices over
        for (int kind = 1; kind < 3; ++kind)
            pool.give(4 * unit.padded[kind] / world);
    }
    std::vector<bool> pending(static_cast<size_t>(unit_count), false);  // prefetched gathers
    auto gather = [&](const std::vector<int64_t>& call) {
        for (int64_t u : call) {
            if (pending[static_cast<size_t>(u)]) {
                pending[static_cast<size_t>(u)] = false;
                continue;
            }
            for (int kind = 0; kind < UnitBuffers::kKinds; ++kind)
                pool.take(units[static_cast<size_t>(u)].bytes(kind));
        }
    };
    auto start_prefetch = [&](const std::vector<int64_t>& call) {
        if (!prefetch) return;
        for (int64_t u : call) {
            if (pending[static_cast<size_t>(u)]) continue;
            pending[static_cast<size_t>(u)] = true;
            for (int kind = 0; kind < UnitBuffers::kKinds; ++kind)
                pool.take(units[static_cast<size_t>(u)].bytes(kind));
        }
    };
    auto release = [&](const std::vector<int64_t>& call) {
        for (int64_t u : call) {
            for (int kind = 0; kind < UnitBuffers::kKinds; ++kind)
                pool.give(units[static_cast<size_t>(u)].bytes(kind));
        }
    };
    for (int step = 0; step < 2; ++step) {
        pool.interval_high();
        for (size_t i = 0; i < calls.size(); ++i) {
            gather(calls[i]);
            if (i + 1 < calls.size()) start_prefetch(calls[i + 1]);
            release(calls[i]);
        }
        out.forward_pool = pool.interval_high() - out.frozen_shards;
        std::vector<size_t> previous;  // each recorded call's predecessor: prefetched in its backward
        for (size_t i = 0, last = calls.size(); i < calls.size(); ++i) {
            if (!recorded[i]) continue;
            previous.push_back(last);
            last = i;
        }
        size_t k = previous.size();
        for (size_t i = calls.size(); i-- > 0;) {
            if (!recorded[i]) continue;
            const size_t before = previous[--k];
            gather(calls[i]);
            if (before < calls.size()) start_prefetch(calls[before]);
            for (int64_t u : calls[i]) {
                for (int kind = 1; kind < 3; ++kind) {  // the zeroed flat gradient, given back once reduced
                    pool.take(4 * units[static_cast<size_t>(u)].padded[kind]);
                    pool.give(4 * units[static_cast<size_t>(u)].padded[kind]);
                }
            }
            release(calls[i]);
        }
        out.backward_pool = pool.interval_high() - out.frozen_shards;
    }
    return out;
}

struct Phases {
    MemoryBreakdown setup, forward, backward;
};

int64_t sum_non_runtime(const MemoryBreakdown& b) {
    return b.weights + b.gradients + b.optimizer_states + b.activations + b.logits_and_loss +
           b.gathered_units + b.communication + b.setup_transient;
}

std::string gib(int64_t bytes) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(bytes < 10 * kGiB ? 2 : 1) << static_cast<double>(bytes) / kGiB
      << " GiB";
    return s.str();
}

}  // namespace

int64_t MemoryBreakdown::total() const {
    return sum_non_runtime(*this) + runtime + allocator_slack;
}

Result<Plan> make_plan(const RunConfig& config, const model::LlamaConfig& m, const HostFacts& host,
                       const PlanAssumptions& assumptions) {
    Result<Inventory> inv_result = inventory(m, config.adapter);
    if (!inv_result.ok()) return inv_result.status();
    const Inventory& inv = *inv_result;
    const TrainingConfig& t = config.training;
    Plan plan;
    plan.world_size = config.world_size();
    plan.parameters = inv.parameters;
    plan.trainable_parameters = inv.trainable;
    plan.layers = m.num_hidden_layers;
    plan.gradient_checkpointing = t.gradient_checkpointing;
    plan.sharding = config.distributed.sharding;
    plan.on_gpu = config.slurm.gpus_per_node > 0;
    const bool sharded = config.distributed.sharding == "full";
    const int64_t world = plan.world_size;

    const GpuModel* gpu = nullptr;
    if (plan.on_gpu) {
        gpu = find_gpu_model(config.slurm.gpu_type);
        if (gpu == nullptr)
            return Status::Error("/slurm/gpu_type: unknown GPU \"" + config.slurm.gpu_type + "\"");
        plan.device = gpu->name;
        plan.device_bytes = gpu->memory_bytes;
    } else {
        const int64_t ranks_per_node = std::max<int64_t>(1, config.tasks_per_node());
        plan.device = "CPU: this computer's RAM / " + std::to_string(ranks_per_node) + " rank(s)";
        plan.device_bytes = host.memory_bytes / ranks_per_node;
    }

    Numerics x;
    x.on_gpu = plan.on_gpu;
    x.bf16 = t.bf16;
    x.act = t.bf16 ? 2 : 4;
    // Unsharded, frozen weights are separate tensors; trainable ones lie side by side in the optimizer's
    // flat buffer; a sharded unit's gathered buffer holds them side by side either way.
    x.joint_weights_copied = !sharded && inv.any_layer_weight_frozen;

    const int64_t batch = t.per_device_train_batch_size, seq = config.data.block_size, n = batch * seq;
    const int64_t c = m.hidden_size, v = m.vocab_size;

    // Activations per layer (the layers are alike unless rank_pattern differs: take the largest).
    LayerActivations layer;
    int64_t saved_all_layers = 0;
    for (const std::vector<Linear>& linears : inv.layer_linears) {
        const LayerActivations one =
            layer_activations(m, linears, x, batch, seq, config.adapter.lora_dropout);
        saved_all_layers += one.saved;
        if (one.saved + one.transient > layer.saved + layer.transient) layer = one;
    }
    plan.activation_bytes_per_layer = layer.saved;
    plan.checkpointed_activation_bytes_per_layer = 4 * n * c;  // model/checkpointing.cpp keeps the input
    const int64_t kept_by_layers = t.gradient_checkpointing
                                       ? plan.layers * plan.checkpointed_activation_bytes_per_layer
                                       : saved_all_layers;
    // Backward of one layer: with checkpointing its forward runs again first, so its activations exist.
    // QLoRA: one linear weight dequantized at a time (fp32, plus its cast to the compute dtype).
    const int64_t compute_bytes = config.adapter.bnb_4bit_compute_dtype == "float32" ? 0 : 2;
    layer.transient += inv.largest_nf4 * (4 + compute_bytes);
    const int64_t layer_backward = (t.gradient_checkpointing ? layer.saved : 0) + layer.transient;
    const int64_t final_norm = 4 * n * c + (x.on_gpu ? 4 * n * c : 0);

    // The loss head (model/chunked_loss.cpp): whole fp32 logits when small; else the gradients made in
    // forward (d loss / d h, and d loss / d w when the head trains) plus one chunk's logits at a time.
    const int64_t rows = batch * (seq - 1);
    plan.chunked_loss = rows * v > kSmallLogits;
    int64_t loss_forward = 0, loss_kept = 0;
    if (!plan.chunked_loss) {
        loss_kept = 4 * rows * v + 4 * rows * c;  // log_softmax's output, the fp32 rows
        loss_forward = loss_kept + 4 * rows * v;  // the logits
    } else {
        loss_kept = 4 * rows * c + (inv.head_trainable ? 4 * v * c : 0);
        loss_forward = loss_kept + 4 * rows * c + 2 * 4 * kLossChunkRows * v;  // the rows' copy, one chunk
    }
    const int64_t loss_backward = plan.chunked_loss ? loss_kept : 2 * 4 * rows * v;
    // The embedding's dense gradient at the end of backward.
    const int64_t embedding_grad = inv.embedding_trainable ? 4 * v * c : 0;

    Phases p;
    int64_t layer_backward_sharded = 0;
    // Bytes in train/sharded_model.cpp's MappedPool (CPU): anonymous mappings outside glibc's heap, so no
    // allocator slack on them. Per phase: setup, forward, backward.
    std::array<int64_t, 3> pool_bytes = {0, 0, 0};
    // Parameters, gradients, optimizer states.
    if (!sharded) {
        const int64_t all = 4 * (inv.parameters - inv.nf4_elements) +
                            nf4_bytes(inv.nf4_elements, config.adapter.bnb_4bit_use_double_quant);
        const int64_t trainable = 4 * inv.trainable;
        for (MemoryBreakdown* b : {&p.setup, &p.forward, &p.backward}) {
            b->weights = all;
            b->gradients = trainable;
            b->optimizer_states = 2 * trainable;
        }
        p.setup.setup_transient = trainable;  // FlatAdamW copies each trainable tensor, then frees the old
        if (world > 1) {
            // c10d::Reducer's bucket contents (a copy of every gradient) and one bucket in flight.
            const int64_t buckets =
                trainable +
                std::min<int64_t>(trainable, static_cast<int64_t>(config.distributed.bucket_mb * kMiB));
            p.forward.communication = buckets;
            p.backward.communication = buckets;
        }
    } else {
        const ShardedMemory sm = sharded_memory(inv, plan.layers, m.tie_word_embeddings, world, x.on_gpu,
                                                shards_prefetch(config, x.on_gpu), layer_backward,
                                                config.adapter.bnb_4bit_use_double_quant);
        for (MemoryBreakdown* b : {&p.setup, &p.forward, &p.backward}) {
            b->weights = sm.shards;
            b->gradients = sm.trainable_shards;
            b->optimizer_states = 2 * sm.trainable_shards;
        }
        // ShardedModel::create slices the model built whole first: with random init every weight was
        // written (the pages stay resident on CPU) until the slices are taken and malloc_trim gives them
        // back; the optimizer is made after that. A checkpoint's slices are read from the mapped files.
        p.setup.gradients = p.setup.optimizer_states = 0;
        if (config.model.init == "random") p.setup.setup_transient = 4 * inv.parameters;
        p.setup.gathered_units = sm.setup_pool;
        p.forward.gathered_units = sm.forward_pool;
        p.backward.gathered_units = sm.backward_pool;
        p.backward.gradients += sm.backward_unit_gradients;
        p.backward.communication = sm.backward_reduce;
        layer_backward_sharded = sm.backward_in_layer ? layer_backward : 0;
        pool_bytes = {sm.setup_pool + sm.shards, sm.forward_pool + sm.frozen_shards,
                      sm.backward_pool + sm.frozen_shards};
    }
    // On CPU a pretrained checkpoint is read through mmap: the file's pages are resident while loading.
    if (!plan.on_gpu && config.model.init == "pretrained" && !sharded) {
        int64_t stored = 0;  // the base model's tensors (adapters are not in the file)
        for (const Tensor& tensor : inv.tensors) {
            if (tensor.name.find("lora_") == std::string::npos) stored += tensor.elements;
        }
        const int64_t file_bytes = (config.model.dtype == "float32" ? 4 : 2) * stored;
        p.setup.setup_transient += file_bytes;
    }
    p.forward.activations = kept_by_layers + final_norm;
    p.forward.logits_and_loss = loss_forward;
    // Sharded, the embedding's gradient is one of its unit's full gradients (backward_unit_gradients).
    p.backward.activations = kept_by_layers + final_norm +
                             (sharded ? layer_backward_sharded : std::max(layer_backward, embedding_grad));
    p.backward.logits_and_loss = loss_backward;

    MemoryBreakdown* phases[3] = {&p.setup, &p.forward, &p.backward};
    for (int phase = 0; phase < 3; ++phase) {
        MemoryBreakdown* b = phases[phase];
        if (plan.on_gpu) {
            b->runtime = kCudaContextBytes + (world > 1 ? kNcclBytes : 0);
            b->allocator_slack =
                static_cast<int64_t>(kCudaAllocatorSlack * static_cast<double>(sum_non_runtime(*b)));
        } else {
            b->runtime = kCpuProcessBytes;
            b->allocator_slack = static_cast<int64_t>(
                kCpuAllocatorSlack *
                static_cast<double>(sum_non_runtime(*b) - pool_bytes[static_cast<size_t>(phase)]));
        }
    }
    plan.setup_bytes = p.setup.total();
    plan.forward_bytes = p.forward.total();
    plan.backward_bytes = p.backward.total();
    plan.peak_phase = "setup";
    plan.breakdown = p.setup;
    if (plan.forward_bytes > plan.breakdown.total()) {
        plan.peak_phase = "forward";
        plan.breakdown = p.forward;
    }
    if (plan.backward_bytes > plan.breakdown.total()) {
        plan.peak_phase = "backward";
        plan.breakdown = p.backward;
    }
    plan.per_device_bytes = plan.breakdown.total();
    plan.fits = plan.per_device_bytes <= plan.device_bytes;

    // Time: 2 FLOPs per multiply-add; forward 2 x matmul parameters + attention (QK^T and PV over the
    // whole T x T); backward twice the forward for gradients of inputs, plus the weight gradients of the
    // trainable matmuls (frozen ones skip them); checkpointing runs the layers' forward again.
    double matmul_params = 0, trainable_matmul = 0;
    for (const Tensor& tensor : inv.tensors) {
        if (tensor.name == "model.embed_tokens.weight" || tensor.name.find("norm") != std::string::npos)
            continue;
        matmul_params += static_cast<double>(tensor.elements);
        if (tensor.trainable) trainable_matmul += static_cast<double>(tensor.elements);
    }
    if (m.tie_word_embeddings) {
        matmul_params += static_cast<double>(v * c);
        if (inv.head_trainable) trainable_matmul += static_cast<double>(v * c);
    }
    const double head = static_cast<double>(v * c);
    const double attention =
        4.0 * static_cast<double>(plan.layers * seq * m.num_attention_heads * m.head_dim);
    const double forward = 2 * matmul_params + attention;
    double per_token = forward + (2 * matmul_params + 2 * attention) + 2 * trainable_matmul;
    if (t.gradient_checkpointing) per_token += forward - 2 * head;
    plan.tokens_per_step = config.tokens_per_step();
    plan.flops_per_step = per_token * static_cast<double>(plan.tokens_per_step);
    if (plan.on_gpu) {
        plan.peak_flops_per_device =
            (t.bf16 && gpu->bf16_tflops > 0 ? gpu->bf16_tflops : gpu->fp32_tflops) * 1e12;
        plan.mfu = assumptions.mfu_override.value_or(assumptions.gpu_mfu);
    } else {
        const int64_t cores_per_rank =
            std::max<int64_t>(1, host.cpu_cores / std::max<int64_t>(1, config.tasks_per_node()));
        const double per_core =
            assumptions.cpu_gflops_per_core > 0 ? assumptions.cpu_gflops_per_core : kCpuGflopsPerCore;
        plan.peak_flops_per_device = per_core * 1e9 * static_cast<double>(cores_per_rank);
        plan.mfu = assumptions.mfu_override.value_or(assumptions.cpu_mfu);
    }
    plan.step_seconds =
        plan.flops_per_step / static_cast<double>(world) / (plan.peak_flops_per_device * plan.mfu);
    if (t.max_steps) {
        plan.steps = *t.max_steps;
        plan.total_seconds = plan.step_seconds * static_cast<double>(*t.max_steps);
    }

    if (!plan.fits) {
        const MemoryBreakdown& b = plan.breakdown;
        std::ostringstream why;
        why << "needs " << gib(plan.per_device_bytes) << " per device at its peak (" << plan.peak_phase
            << "), " << gib(plan.per_device_bytes - plan.device_bytes) << " more than the "
            << gib(plan.device_bytes) << " of " << plan.device << ": weights " << gib(b.weights)
            << " (fp32 master copies), gradients " << gib(b.gradients) << ", optimizer "
            << gib(b.optimizer_states) << ", activations " << gib(b.activations);
        // What would fit: the same run with the memory levers this engine has.
        std::vector<std::pair<std::string, RunConfig>> options;
        if (!sharded && world > 1) {
            RunConfig o = config;
            o.distributed.sharding = "full";
            options.emplace_back("/distributed/sharding: full", o);
        }
        if (!t.gradient_checkpointing) {
            RunConfig o = config;
            o.training.gradient_checkpointing = true;
            options.emplace_back("/training/gradient_checkpointing: true", o);
            if (!sharded && world > 1) {
                o.distributed.sharding = "full";
                options.emplace_back("/distributed/sharding: full and /training/gradient_checkpointing: true",
                                     o);
            }
        }
        for (const auto& [change, other] : options) {
            Result<Plan> alternative = make_plan(other, m, host, assumptions);
            if (alternative.ok()) {
                why << "; with " << change << ": " << gib(alternative->per_device_bytes)
                    << (alternative->fits ? " (fits)" : " (does not fit)");
            }
        }
        plan.reason = why.str();
    }
    return plan;
}

nlohmann::ordered_json to_json(const Plan& plan) {
    const MemoryBreakdown& b = plan.breakdown;
    nlohmann::ordered_json j;
    j["fits"] = plan.fits;
    j["per_device_bytes"] = plan.per_device_bytes;
    j["device_bytes"] = plan.device_bytes;
    j["headroom_bytes"] = plan.device_bytes - plan.per_device_bytes;
    j["device"] = plan.device;
    j["reason"] = plan.reason;
    j["peak_phase"] = plan.peak_phase;
    j["breakdown"] = {{"weights", b.weights},
                      {"gradients", b.gradients},
                      {"optimizer_states", b.optimizer_states},
                      {"activations", b.activations},
                      {"logits_and_loss", b.logits_and_loss},
                      {"gathered_units", b.gathered_units},
                      {"communication", b.communication},
                      {"setup_transient", b.setup_transient},
                      {"runtime", b.runtime},
                      {"allocator_slack", b.allocator_slack}};
    j["phase_bytes"] = {
        {"setup", plan.setup_bytes}, {"forward", plan.forward_bytes}, {"backward", plan.backward_bytes}};
    j["parameters"] = plan.parameters;
    j["trainable_parameters"] = plan.trainable_parameters;
    j["world_size"] = plan.world_size;
    j["sharding"] = plan.sharding;
    j["gradient_checkpointing"] = plan.gradient_checkpointing;
    j["activation_bytes_per_layer"] = plan.activation_bytes_per_layer;
    j["checkpointed_activation_bytes_per_layer"] = plan.checkpointed_activation_bytes_per_layer;
    j["chunked_loss"] = plan.chunked_loss;
    j["tokens_per_step"] = plan.tokens_per_step;
    j["flops_per_step"] = plan.flops_per_step;
    j["peak_flops_per_device"] = plan.peak_flops_per_device;
    j["mfu"] = plan.mfu;
    j["step_seconds"] = plan.step_seconds;
    j["steps"] = plan.steps ? nlohmann::ordered_json(*plan.steps) : nlohmann::ordered_json(nullptr);
    j["total_seconds"] =
        plan.total_seconds ? nlohmann::ordered_json(*plan.total_seconds) : nlohmann::ordered_json(nullptr);
    return j;
}

std::string format_plan(const Plan& plan) {
    std::ostringstream out;
    const MemoryBreakdown& b = plan.breakdown;
    out << "Model: " << plan.parameters << " parameters, " << plan.trainable_parameters << " trainable; "
        << plan.world_size << " rank(s), sharding " << plan.sharding << ", gradient checkpointing "
        << (plan.gradient_checkpointing ? "on" : "off") << "\n";
    out << "Device: " << plan.device << ", " << gib(plan.device_bytes) << "\n\n";
    out << "Peak memory per device (" << plan.peak_phase << "):\n";
    const std::pair<const char*, int64_t> rows[] = {
        {"weights", b.weights},
        {"gradients", b.gradients},
        {"optimizer states (AdamW m, v)", b.optimizer_states},
        {"activations", b.activations},
        {"logits and loss", b.logits_and_loss},
        {"gathered units", b.gathered_units},
        {"communication buffers", b.communication},
        {"setup (weights held twice)", b.setup_transient},
        {plan.on_gpu ? "CUDA context, NCCL" : "process (LibTorch, BLAS)", b.runtime},
        {"allocator slack", b.allocator_slack},
    };
    for (const auto& [name, bytes] : rows) {
        if (bytes == 0) continue;
        out << "  " << std::left << std::setw(32) << name << std::right << std::setw(12) << gib(bytes) << "  "
            << std::setw(5) << std::fixed << std::setprecision(1)
            << 100.0 * static_cast<double>(bytes) /
                   static_cast<double>(std::max<int64_t>(1, plan.per_device_bytes))
            << "%\n";
    }
    out << "  " << std::left << std::setw(32) << "total" << std::right << std::setw(12)
        << gib(plan.per_device_bytes) << "\n";
    out << "  activations per layer: " << gib(plan.activation_bytes_per_layer) << " kept for backward, "
        << gib(plan.checkpointed_activation_bytes_per_layer) << " with gradient checkpointing; loss "
        << (plan.chunked_loss ? "chunked" : "over whole logits") << "\n\n";
    if (plan.fits) {
        out << "Fits: " << gib(plan.device_bytes - plan.per_device_bytes) << " to spare ("
            << std::setprecision(0)
            << 100.0 * static_cast<double>(plan.per_device_bytes) / static_cast<double>(plan.device_bytes)
            << "% used)\n";
    } else {
        out << "Does not fit: " << plan.reason << "\n";
    }
    out << std::setprecision(3) << "Time: " << plan.tokens_per_step << " tokens per step, "
        << plan.flops_per_step / 1e12 << " TFLOP per step, " << plan.step_seconds << " s per step at "
        << std::setprecision(0) << plan.mfu * 100 << "% MFU of " << std::setprecision(1)
        << plan.peak_flops_per_device / 1e12 << " TFLOP/s per device";
    if (plan.total_seconds) {
        out << "; " << *plan.steps << " steps: " << std::setprecision(2) << *plan.total_seconds / 3600
            << " h";
    } else {
        out << "; the number of steps depends on the data (no /training/max_steps)";
    }
    out << "\n";
    return out.str();
}

}  // namespace slipway::plan
