// ShardedModel (sharded_model.h): the unit layout, gathering and giving back a unit's bytes, and UnitCall,
// the autograd function that runs one unit. UnitCall's forward gathers the unit, runs it (keeping its
// activations in a graph of its own, or only its input when the unit is recomputed) and gives the bytes
// back; its backward gathers again, back-propagates through that graph, and returns the reduced slices
// of the trainable gradients as the gradients of the shards, which autograd accumulates into their .grad.
#include <torch/torch.h>

#include "train/sharded_model.h"

#include <malloc.h>
#include <sys/mman.h>
#include <mutex>

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include "model/chunked_loss.h"
#include "model/nf4_io.h"
#include "model/nf4_weight.h"
#include "model/tensor_io.h"
#include "model/torch_compat.h"
#include "train/trainable.h"

namespace slipway::train {

namespace {

// One tensor's place in a flat buffer: a parameter of the model, or a piece of a QLoRA layer's NF4 storage
// (frozen, not a parameter: its packed codes, its absmax or absmax codes, its nested absmax).
struct ParamSlot {
    std::string name;
    torch::Tensor param;  // the model's tensor: a view of FlatBuffer::full
    int64_t offset = 0;
    int64_t numel = 0;
    bool parameter = true;         // false: NF4 storage (for_each_unit hands out parameters only)
    bool from_checkpoint = false;  // the slice is read from the mapped model folder
};

// Unit-sized buffers (gathers, full-size gradients, shards) on the CPU come from their own anonymous
// mappings, kept in a small pool for the next unit of the same size. From glibc's heap they would grow the
// process at every gather (the activations allocated in between split the freed blocks), and a fresh
// mapping per gather pays a page fault per 4 KiB. Elsewhere (CUDA's caching allocator reuses blocks) a
// plain allocation.
class MappedPool {
public:
    static MappedPool& instance() {
        static MappedPool pool;
        return pool;
    }
    void* take(size_t bytes) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            const auto found = free_.find(bytes);
            if (found != free_.end()) {
                void* memory = found->second;
                free_.erase(found);
                return memory;
            }
        }
        void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (memory == MAP_FAILED) throw std::bad_alloc();
        return memory;
    }
    void give(void* memory, size_t bytes) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (free_.count(bytes) < kKeptPerSize) {
                free_.emplace(bytes, memory);
                return;
            }
        }
        munmap(memory, bytes);
    }

private:
    static constexpr size_t kKeptPerSize = 2;  // a unit in use and the next one
    std::mutex mutex_;
    std::multimap<size_t, void*> free_;
};

torch::Tensor unit_buffer(int64_t numel, const torch::TensorOptions& options) {  // (numel)
    if (!options.device().is_cpu() || numel == 0) return torch::empty({numel}, options);
    const size_t bytes =
        static_cast<size_t>(numel) * c10::elementSize(c10::typeMetaToScalarType(options.dtype()));
    return torch::from_blob(
        MappedPool::instance().take(bytes), {numel},
        [bytes](void* memory) { MappedPool::instance().give(memory, bytes); }, options);
}

}  // namespace

// One flat buffer of a unit: its tensors of one kind and dtype end to end, padded to a multiple of the
// world size. (Frozen tensors may come in two dtypes: the parameters, and NF4 codes as bytes.)
struct FlatBuffer {
    enum class Kind { kFrozen, kDecay, kNoDecay };
    Kind kind = Kind::kFrozen;
    torch::ScalarType dtype = torch::kFloat32;
    std::vector<ParamSlot> slots;
    int64_t numel = 0, padded = 0, shard_numel = 0;
    torch::Tensor shard;  // (padded / N): this rank's slice; trainable ones are the optimizer's parameters
    torch::Tensor full;   // (padded): the gathered unit; holds bytes only between gather() and release()
    bool trainable() const { return kind != Kind::kFrozen; }
};

struct ShardedUnit {
    std::string name;                 // "embed", "layers.N", "head"
    std::vector<FlatBuffer> buffers;  // in Kind order, empty ones left out
};

// All-gathers started ahead of their unit's turn.
struct PendingGathers {
    struct Gather {
        FlatBuffer* buffer = nullptr;
        torch::Tensor gathered;               // (padded): moves into buffer->full when done
        c10::intrusive_ptr<c10d::Work> work;  // null when done already (one rank)
    };
    std::map<const ShardedUnit*, std::vector<Gather>> by_unit;
};

namespace {

// Rings of sends and receives save copies on large buffers; on small ones the N-1 round trips cost more than
// one collective (the 8 MiB demo model ran 2.3x slower in wall time with rings everywhere).
bool worth_a_ring(const torch::Tensor& flat) {
    return flat.numel() * static_cast<int64_t>(flat.element_size()) >= (int64_t{1} << 20);
}

// All-gather on Gloo as a ring of sends and receives straight between the ranks' buffers: c10d's Gloo
// allgather gathers into a flat buffer of its own and copies out of it. chunks: N x (padded / N); this
// rank's shard is copied into its own chunk; at step s it forwards chunk r-s to rank r+1 and receives
// chunk r-s-1 from rank r-1.
void ring_all_gather(const ShardComm& comm, const torch::Tensor& shard, std::vector<torch::Tensor> chunks) {
    const int64_t world = comm.world_size, rank = comm.rank;
    chunks[static_cast<size_t>(rank)].copy_(shard);
    const auto next = static_cast<int>((rank + 1) % world),
               previous = static_cast<int>((rank + world - 1) % world);
    for (int64_t step = 0; step + 1 < world; ++step) {
        std::vector<torch::Tensor> outgoing{chunks[static_cast<size_t>((rank - step + world) % world)]};
        std::vector<torch::Tensor> incoming{chunks[static_cast<size_t>((rank - step - 1 + world) % world)]};
        const auto tag = static_cast<int>(step);
        auto sent = comm.group->send(outgoing, next, tag);
        comm.group->recv(incoming, previous, tag)->wait();
        sent->wait();
    }
}

// Gathers a unit's buffers (only its trainable ones: `only_trainable`) into fresh buffers: at once
// (`in_background` false: done on return) or started as collectives whose Work the caller waits for.
std::vector<PendingGathers::Gather> start_gathers(const ShardComm& comm, ShardedUnit& unit,
                                                  bool only_trainable, bool in_background) {
    std::vector<PendingGathers::Gather> gathers;
    for (FlatBuffer& buffer : unit.buffers) {
        if (only_trainable && !buffer.trainable()) continue;
        PendingGathers::Gather g;
        g.buffer = &buffer;
        g.gathered = unit_buffer(buffer.padded, buffer.shard.options().requires_grad(false));  // (padded)
        if (comm.world_size == 1) {
            g.gathered.copy_(buffer.shard.detach());
        } else if (!in_background && comm.point_to_point && worth_a_ring(g.gathered)) {
            ring_all_gather(comm, buffer.shard.detach(), g.gathered.chunk(comm.world_size));
        } else {
            std::vector<std::vector<torch::Tensor>> outputs{g.gathered.chunk(comm.world_size)};
            std::vector<torch::Tensor> inputs{buffer.shard.detach()};
            g.work = comm.group->allgather(outputs, inputs);
        }
        gathers.push_back(std::move(g));
    }
    return gathers;
}

}  // namespace

// What one UnitCall needs in its backward (owned by the ShardedModel until the next forward).
class UnitCallState {
public:
    // `next_forward`: the units that run after these; `next_backward`: those whose backward follows this
    // one's.
    UnitCallState(ShardedModel* sharded, std::vector<ShardedUnit*> units,
                  std::vector<ShardedUnit*> next_forward, std::vector<ShardedUnit*> next_backward,
                  bool recompute, bool input_needs_grad,
                  std::function<torch::Tensor(const torch::Tensor&)> compute)
        : sharded_(sharded),
          units_(std::move(units)),
          next_forward_(std::move(next_forward)),
          next_backward_(std::move(next_backward)),
          recompute_(recompute),
          input_needs_grad_(input_needs_grad),
          compute_(std::move(compute)) {}

    const std::vector<ShardedUnit*>& units() const { return units_; }

    torch::Tensor forward(const torch::Tensor& input) {
        gather();
        sharded_->prefetch(next_forward_);
        torch::Tensor out;
        if (recompute_) {
            input_ = input;
            torch::NoGradGuard no_grad;
            out = compute_(input);
        } else {
            torch::AutoGradMode enable(true);  // a graph of this unit's own, kept for backward
            input_ = leaf_of(input);
            output_ = compute_(input_);
            out = output_.detach();
        }
        release();
        return out;
    }

    torch::autograd::variable_list backward(const torch::Tensor& grad_output) {
        gather();
        sharded_->prefetch(next_backward_);
        torch::autograd::variable_list inputs;
        {
            torch::AutoGradMode enable(true);
            if (recompute_) {  // as in the forward: same autocast, same units
                model::Bf16Autocast autocast(sharded_->bf16_, sharded_->device_type_);
                input_ = leaf_of(input_);
                output_ = compute_(input_);
            }
            if (input_needs_grad_) inputs.push_back(input_);
            for (ShardedUnit* unit : units_) {
                for (FlatBuffer& buffer : unit->buffers) {
                    if (!buffer.trainable()) continue;
                    for (ParamSlot& slot : buffer.slots)
                        inputs.push_back(slot.param);
                }
            }
        }
        torch::autograd::variable_list grads;
        if (!inputs.empty()) {
            grads = torch::autograd::grad({output_}, inputs, {grad_output}, /*retain_graph=*/false,
                                          /*create_graph=*/false, /*allow_unused=*/true);
        }
        torch::autograd::variable_list result;
        size_t next = 0;
        result.push_back(input_needs_grad_ ? grads[next++] : torch::Tensor());
        torch::NoGradGuard no_grad;
        for (ShardedUnit* unit : units_) {
            for (FlatBuffer& buffer : unit->buffers) {
                if (!buffer.trainable()) continue;
                torch::Tensor flat = unit_buffer(buffer.padded, buffer.shard.options()).zero_();  // (padded)
                for (ParamSlot& slot : buffer.slots) {
                    const torch::Tensor& g = grads[next++];
                    if (g.defined()) flat.narrow(0, slot.offset, slot.numel).copy_(g.reshape({-1}));
                }
                result.push_back(sharded_->reduce_to_shard(flat));
            }
        }
        result.push_back(torch::Tensor());  // the state pointer
        output_ = torch::Tensor();
        input_ = torch::Tensor();
        release();
        return result;
    }

private:
    void gather() { sharded_->gather_units(units_); }
    void release() { sharded_->release_units(units_); }
    // The input as a leaf of this unit's graph, asking for its gradient when the caller needs it.
    torch::Tensor leaf_of(const torch::Tensor& input) const {
        return input_needs_grad_ ? input.detach().requires_grad_(true) : input.detach();
    }

    ShardedModel* sharded_;
    std::vector<ShardedUnit*> units_, next_forward_, next_backward_;
    bool recompute_, input_needs_grad_;
    std::function<torch::Tensor(const torch::Tensor&)> compute_;
    torch::Tensor input_, output_;
};

namespace {

class UnitCall : public torch::autograd::Function<UnitCall> {
public:
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& input,
                                 at::TensorList /*shards: only for autograd's edges*/, int64_t state) {
        ctx->saved_data["state"] = state;
        return reinterpret_cast<UnitCallState*>(state)->forward(input);
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        auto* state = reinterpret_cast<UnitCallState*>(ctx->saved_data["state"].toInt());
        return state->backward(grads[0]);
    }
};

std::string unit_of(const std::string& name) {
    const std::string layers = "model.layers.";
    if (name.rfind(layers, 0) == 0)
        return "layers." + name.substr(layers.size(), name.find('.', layers.size()) - layers.size());
    if (name.rfind("model.embed_tokens.", 0) == 0) return "embed";
    return "head";  // model.norm, lm_head
}

const char* kind_suffix(FlatBuffer::Kind kind) {
    return kind == FlatBuffer::Kind::kDecay     ? "decay"
           : kind == FlatBuffer::Kind::kNoDecay ? "no_decay"
                                                : "frozen";
}

}  // namespace

ShardedModel::ShardedModel(model::LlamaForCausalLM model, ShardComm comm)
    : model_(std::move(model)), comm_(std::move(comm)), pending_(std::make_unique<PendingGathers>()) {}

ShardedModel::~ShardedModel() = default;

namespace {

// The pieces of an NF4 weight that are as large as the weight (the 16 and 256 code values stay replicated).
std::vector<std::pair<std::string, torch::Tensor>> nf4_storage(const std::string& weight_name,
                                                               const model::Nf4Weight& w) {
    std::vector<std::pair<std::string, torch::Tensor>> pieces;
    pieces.emplace_back(weight_name, w.packed);
    if (w.double_quantized()) {
        pieces.emplace_back(weight_name + ".absmax", w.absmax_codes);
        pieces.emplace_back(weight_name + ".nested_absmax", w.nested_absmax);
    } else {
        pieces.emplace_back(weight_name + ".absmax", w.absmax);
    }
    return pieces;
}

void add_slot(ShardedUnit& unit, FlatBuffer::Kind kind, ParamSlot slot) {
    const torch::ScalarType dtype = slot.param.scalar_type();
    auto buffer = std::find_if(unit.buffers.begin(), unit.buffers.end(),
                               [&](const FlatBuffer& b) { return b.kind == kind && b.dtype == dtype; });
    if (buffer == unit.buffers.end()) {
        unit.buffers.push_back(FlatBuffer{});
        buffer = std::prev(unit.buffers.end());
        buffer->kind = kind;
        buffer->dtype = dtype;
    }
    slot.offset = buffer->numel;
    slot.numel = slot.param.numel();
    buffer->numel += slot.numel;
    buffer->slots.push_back(std::move(slot));
}

// Lays out one unit: its parameters (in model order, so q/k/v and gate/up lie side by side, which lets
// joint_linear use them without a copy) and the NF4 storage of its quantized linear layers.
std::unique_ptr<ShardedUnit> lay_out_unit(model::LlamaForCausalLM& model, const std::string& unit_name,
                                          bool with_checkpoint) {
    auto unit = std::make_unique<ShardedUnit>();
    unit->name = unit_name;
    for (auto& item : model->named_parameters()) {
        if (unit_of(item.key()) != unit_name) continue;
        const FlatBuffer::Kind kind = !item.value().requires_grad() ? FlatBuffer::Kind::kFrozen
                                      : decays_weight(item.key())   ? FlatBuffer::Kind::kDecay
                                                                    : FlatBuffer::Kind::kNoDecay;
        const bool from_checkpoint = with_checkpoint && item.key().find(".lora_") == std::string::npos;
        add_slot(*unit, kind, {item.key(), item.value(), 0, 0, /*parameter=*/true, from_checkpoint});
    }
    for (const auto& item : model->named_modules()) {
        auto linear = std::dynamic_pointer_cast<model::LinearImpl>(item.value());
        if (!linear || !linear->nf4 || unit_of(item.key() + ".weight") != unit_name) continue;
        for (auto& [name, tensor] : nf4_storage(item.key() + ".weight", *linear->nf4))
            add_slot(*unit, FlatBuffer::Kind::kFrozen, {name, tensor, 0, 0, /*parameter=*/false, false});
    }
    std::sort(unit->buffers.begin(), unit->buffers.end(), [](const FlatBuffer& a, const FlatBuffer& b) {
        return std::make_pair(a.kind, a.dtype) < std::make_pair(b.kind, b.dtype);
    });
    return unit;
}

// Copies this rank's elements of each tensor that overlaps its slice [begin, end) of the buffer: from the
// mapped file (only these bytes are read) or from the tensor's own values (fresh adapters, random init,
// NF4 codes).
Status take_slices(FlatBuffer& buffer, int64_t begin, const io::Checkpoint* checkpoint) {
    const int64_t end = begin + buffer.shard_numel;
    for (ParamSlot& slot : buffer.slots) {
        const int64_t from = std::max(begin, slot.offset), to = std::min(end, slot.offset + slot.numel);
        if (from >= to) continue;
        torch::Tensor source = slot.param;
        if (slot.from_checkpoint) {
            const auto found = checkpoint->tensors().find(slot.name);
            if (found == checkpoint->tensors().end())
                return Status::Error("the model folder has no tensor \"" + slot.name + "\"");
            if (found->second.shape != slot.param.sizes().vec()) {
                return Status::Error(
                    "\"" + slot.name + "\" has shape " + model::shape_text(found->second.shape) +
                    " in the model folder, the model expects " + model::shape_text(slot.param.sizes().vec()));
            }
            Result<torch::Tensor> mapped = model::tensor_of(found->second);
            if (!mapped.ok()) return Status::Error("\"" + slot.name + "\": " + mapped.error());
            source = *mapped;
        }
        buffer.shard.narrow(0, from - begin, to - from)
            .copy_(source.reshape({-1}).narrow(0, from - slot.offset, to - from));
    }
    return Status::Ok();
}

// Whether `name` in a model folder belongs to a parameter, or to a linear weight's 4-bit form.
bool known_tensor(const std::string& name, const torch::OrderedDict<std::string, torch::Tensor>& parameters) {
    if (parameters.contains(name)) return true;
    for (const std::string& suffix : model::nf4_key_suffixes()) {
        if (name.size() > suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
            parameters.contains(name.substr(0, name.size() - suffix.size())))
            return true;
    }
    return false;
}

}  // namespace

Result<std::unique_ptr<ShardedModel>> ShardedModel::create(model::LlamaForCausalLM model, ShardComm comm,
                                                           const io::Checkpoint* checkpoint,
                                                           const PrepareUnit& prepare, torch::Device device) {
    std::unique_ptr<ShardedModel> sharded(new ShardedModel(std::move(model), std::move(comm)));
    const int64_t world = sharded->comm_.world_size, rank = sharded->comm_.rank;
    const auto named = sharded->model_->named_parameters();
    if (checkpoint) {  // every tensor of the folder must be a parameter of the model (or its 4-bit form)
        for (const auto& [name, view] : checkpoint->tensors()) {
            if (!known_tensor(name, named))
                return Status::Error("unexpected tensor \"" + name + "\" in the model folder");
        }
    }
    std::vector<std::string> unit_names;  // in model order: embed, layers..., head
    for (const auto& item : named) {
        const std::string unit_name = unit_of(item.key());
        if (std::find(unit_names.begin(), unit_names.end(), unit_name) == unit_names.end())
            unit_names.push_back(unit_name);
    }
    torch::NoGradGuard no_grad;
    for (const std::string& unit_name : unit_names) {
        if (prepare) {
            if (Status s = prepare(unit_name); !s.ok()) return s;
        }
        sharded->units_.push_back(lay_out_unit(sharded->model_, unit_name, checkpoint != nullptr));
        ShardedUnit& unit = *sharded->units_.back();
        for (FlatBuffer& buffer : unit.buffers) {
            buffer.padded = (buffer.numel + world - 1) / world * world;
            buffer.shard_numel = buffer.padded / world;
            const torch::TensorOptions options =
                buffer.slots[0].param.options().device(device).requires_grad(false);
            buffer.shard = unit_buffer(buffer.shard_numel, options).zero_();  // (padded / N)
            if (Status s = take_slices(buffer, rank * buffer.shard_numel, checkpoint); !s.ok()) return s;
            if (buffer.trainable()) {
                buffer.shard.set_requires_grad(true);
                sharded->shard_names_.push_back(unit.name + "." + kind_suffix(buffer.kind));
                sharded->shards_.push_back(buffer.shard);
                sharded->shard_decays_.push_back(buffer.kind == FlatBuffer::Kind::kDecay);
            }
            // The tensors become views of the unit's gathered buffer, which holds no bytes until a gather.
            // (Views are made while it has its bytes, untouched: slicing checks the storage's size.)
            buffer.full = torch::empty({buffer.padded}, options);
            for (ParamSlot& slot : buffer.slots)
                slot.param.set_data(buffer.full.narrow(0, slot.offset, slot.numel).view(slot.param.sizes()));
            model::release_storage(buffer.full);
        }
    }
    // The parameters are views on `device` now; what else the model holds (RoPE's inv_freq) follows them.
    if (!device.is_cpu()) sharded->model_->to(device);
    // The whole model built by a random init is gone now: give its bytes back to the system.
    malloc_trim(0);
    return sharded;
}

int64_t ShardedModel::local_elements() const {
    int64_t n = 0;
    for (const auto& unit : units_) {
        for (const FlatBuffer& buffer : unit->buffers)
            n += buffer.shard_numel;
    }
    return n;
}

void ShardedModel::gather(ShardedUnit& unit, bool only_trainable) {
    torch::NoGradGuard no_grad;
    std::vector<PendingGathers::Gather> gathers;
    if (const auto pending = pending_->by_unit.find(&unit); pending != pending_->by_unit.end()) {
        gathers = std::move(pending->second);
        pending_->by_unit.erase(pending);
    } else {
        gathers = start_gathers(comm_, unit, only_trainable, /*in_background=*/false);
    }
    for (PendingGathers::Gather& g : gathers) {
        if (g.work) g.work->wait();
        // The bytes move into `full`: writing into `full` itself would bump the version counter of the
        // views autograd saved in forward.
        model::adopt_storage(g.buffer->full, g.gathered);
    }
}

void ShardedModel::gather_units(const std::vector<ShardedUnit*>& units) {
    for (ShardedUnit* unit : units)
        gather(*unit, /*only_trainable=*/false);
}

void ShardedModel::release_units(const std::vector<ShardedUnit*>& units) {
    for (ShardedUnit* unit : units)
        release(*unit);
}

void ShardedModel::prefetch(const std::vector<ShardedUnit*>& units) {
    if (!comm_.prefetch || comm_.world_size == 1) return;
    torch::NoGradGuard no_grad;
    for (ShardedUnit* unit : units) {
        if (!pending_->by_unit.count(unit))
            pending_->by_unit[unit] = start_gathers(comm_, *unit, false, /*in_background=*/true);
    }
}

void ShardedModel::release(ShardedUnit& unit) {
    for (FlatBuffer& buffer : unit.buffers)
        model::release_storage(buffer.full);
    if (bf16_) model::clear_autocast_cache();  // its bf16 copies of the released weights
}

torch::Tensor ShardedModel::reduce_to_shard(const torch::Tensor& flat) {
    const int64_t world = comm_.world_size;
    if (world == 1) return flat;
    const int64_t shard_numel = flat.size(0) / world;
    std::vector<torch::Tensor> chunks = flat.chunk(world);  // (padded / N) each
    if (comm_.reduce_scatter) {
        torch::Tensor out = torch::empty({shard_numel}, flat.options());
        std::vector<torch::Tensor> outputs{out};
        std::vector<std::vector<torch::Tensor>> inputs{chunks};
        comm_.group->reduce_scatter(outputs, inputs)->wait();
        return out.div_(static_cast<double>(world));
    }
    if (!comm_.point_to_point || !worth_a_ring(flat)) {  // allreduce, then keep this rank's slice
        std::vector<torch::Tensor> tensors{flat};
        comm_.group->allreduce(tensors)->wait();
        return chunks[static_cast<size_t>(comm_.rank)].div(static_cast<double>(world));
    }
    // Gloo has no reduce-scatter in LibTorch 1.13: a ring of sends and receives moves (N-1)/N of the
    // buffer per rank, half of what an allreduce moves. At step s rank r sends its partial sum of chunk
    // r-s-1 to rank r+1 and adds what rank r-1 sends into chunk r-s-2; after N-1 steps chunk r is whole.
    const int64_t rank = comm_.rank, next = (rank + 1) % world, previous = (rank + world - 1) % world;
    torch::Tensor received = torch::empty({shard_numel}, flat.options());  // (padded / N)
    for (int64_t step = 0; step + 1 < world; ++step) {
        std::vector<torch::Tensor> outgoing{
            chunks[static_cast<size_t>((rank - step - 1 + 2 * world) % world)]};
        std::vector<torch::Tensor> incoming{received};
        const auto tag = static_cast<int>(step);
        auto sent = comm_.group->send(outgoing, static_cast<int>(next), tag);
        comm_.group->recv(incoming, static_cast<int>(previous), tag)->wait();
        sent->wait();
        chunks[static_cast<size_t>((rank - step - 2 + 2 * world) % world)].add_(received);
    }
    return chunks[static_cast<size_t>(rank)].div(static_cast<double>(world));
}

torch::Tensor ShardedModel::run_unit(std::vector<ShardedUnit*> units, std::vector<ShardedUnit*> next,
                                     const torch::Tensor& input, bool recompute,
                                     std::function<torch::Tensor(const torch::Tensor&)> compute) {
    std::vector<torch::Tensor> shards;
    for (ShardedUnit* unit : units) {
        for (FlatBuffer& buffer : unit->buffers) {
            if (buffer.trainable()) shards.push_back(buffer.shard);
        }
    }
    const bool input_needs_grad = input.requires_grad();
    if (!torch::GradMode::is_enabled() || (!input_needs_grad && shards.empty())) {
        gather_units(units);
        prefetch(next);
        torch::Tensor out;
        {
            torch::NoGradGuard no_grad;
            out = compute(input);
        }
        release_units(units);
        return out;
    }
    std::vector<ShardedUnit*> next_backward =
        calls_.empty() ? std::vector<ShardedUnit*>{} : calls_.back()->units();
    calls_.push_back(std::make_unique<UnitCallState>(this, std::move(units), std::move(next),
                                                     std::move(next_backward), recompute, input_needs_grad,
                                                     std::move(compute)));
    return UnitCall::apply(input, at::TensorList(shards), reinterpret_cast<int64_t>(calls_.back().get()));
}

model::LossResult ShardedModel::loss(const torch::Tensor& ids, bool count_correct,
                                     const torch::Tensor& trained, const model::DocumentLayout& documents) {
    calls_.clear();  // the previous micro-step's backward is done
    model::LlamaModelImpl& inner = *model_->model;
    ShardedUnit* embed = units_.front().get();
    const std::vector<ShardedUnit*> head = head_units();
    auto next_after = [&](size_t unit) {  // units_: embed, layers..., head
        return unit + 1 < units_.size() - 1 ? std::vector<ShardedUnit*>{units_[unit + 1].get()} : head;
    };
    torch::Tensor x = run_unit({embed}, next_after(0), ids, false, [&inner](const torch::Tensor& in) {
        return inner.embed_tokens(in);  // (B, T) -> (B, T, C)
    });
    const model::LlamaModelImpl::Tables rope =
        inner.layer_inputs(ids.size(1), x.scalar_type(), x.device(), documents);
    const bool recompute = recompute_layers_ && model_->is_training();
    for (size_t i = 0; i < inner.layers->size(); ++i) {
        model::DecoderLayerImpl* layer = inner.layers->ptr<model::DecoderLayerImpl>(i).get();
        x = run_unit({units_[i + 1].get()}, next_after(i + 1), x, recompute,
                     [layer, cos = rope.cos, sin = rope.sin, mask = rope.mask](const torch::Tensor& in) {
                         return layer->forward(in, cos, sin, mask);  // (B, T, C)
                     });
    }
    auto correct = std::make_shared<int64_t>(0);
    model::LlamaForCausalLM& llama = model_;
    model::LossResult result;
    result.tokens = trained.defined() ? trained.size(0) : ids.size(0) * (ids.size(1) - 1);
    result.loss = run_unit(
        head, {}, x, false, [&llama, &inner, ids, trained, count_correct, correct](const torch::Tensor& in) {
            const torch::Tensor hidden = inner.norm(in);  // (B, T, C)
            const auto [h, targets] = model::next_token_pairs(hidden, ids, trained);
            if (targets.size(0) == 0)
                return (hidden.sum() * 0.0).to(torch::kFloat32);  // nothing trained here
            model::ChunkedLoss l =
                model::chunked_cross_entropy(h, llama->output_weight(), targets, 256, count_correct);
            *correct = l.correct;
            return l.loss;
        });
    result.correct = *correct;
    return result;
}

std::vector<ShardedUnit*> ShardedModel::head_units() {
    std::vector<ShardedUnit*> units{units_.back().get()};
    if (!model_->lm_head) units.push_back(units_.front().get());  // tied: the head reads the embeddings
    return units;
}

model::UnitHook ShardedModel::inference_hook() {
    auto held = std::make_shared<std::vector<ShardedUnit*>>();  // gathered until the next call
    return [this, held](const std::string& unit) {
        release_units(*held);
        held->clear();
        if (unit.empty()) return;
        if (unit == "head") {
            *held = head_units();
        } else {
            for (auto& u : units_) {
                if (u->name == unit) held->push_back(u.get());
            }
        }
        gather_units(*held);
    };
}

void ShardedModel::set_training(bool training) {
    if (training) {
        model_->train();
    } else {
        model_->eval();
    }
}

void ShardedModel::set_bf16(bool on, torch::DeviceType device) {
    bf16_ = on;
    device_type_ = device;
}

void ShardedModel::for_each_unit(
    const std::function<void(const std::map<std::string, torch::Tensor>&)>& visit, bool only_trainable) {
    torch::NoGradGuard no_grad;
    for (auto& unit : units_) {
        std::map<std::string, torch::Tensor> tensors;
        for (FlatBuffer& buffer : unit->buffers) {
            if (only_trainable && !buffer.trainable()) continue;
            for (ParamSlot& slot : buffer.slots) {
                if (slot.parameter) tensors[slot.name] = slot.param;
            }
        }
        if (tensors.empty()) continue;
        gather(*unit, only_trainable);
        visit(tensors);
        release(*unit);
    }
}

void ShardedModel::with_trainable_gathered(const std::function<void()>& fn) {
    for (auto& unit : units_)
        gather(*unit, /*only_trainable=*/true);
    fn();
    for (auto& unit : units_)
        release(*unit);
}

}  // namespace slipway::train
