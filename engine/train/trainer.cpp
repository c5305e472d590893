// The training loop of trainer.h: init (ranks, data, model, optimizer), then steps of accumulated
// micro-batches with gradient averaging across ranks, clipping, scheduled lr, periodic logging and
// evaluation, and the final save. Each part is a small component (batches, trainable, schedule, evaluate,
// checkpoint, outputs, dist); this file only wires them in order.
#include <torch/torch.h>

#include "contract/mllog_keys.h"
#include "train/trainer.h"

#include <torch/version.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <new>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "contract/mllog.h"
#include "contract/node_ranks.h"
#include "data/hash.h"
#include "data/prepare.h"
#include "data/sampler.h"
#include "data/token_cache.h"
#include "dist/gradient_reducer.h"
#include "dist/process_group.h"
#include "dist/rank_hosts.h"
#include "model/cuda_kernels_built.h"
#include "model/frozen_base.h"
#include "model/lora.h"
#include "model/qlora.h"
#include "model/torch_compat.h"
#include "model/weights.h"
#include "track/run_trackers.h"
#include "train/batches.h"
#include "train/checkpoint.h"
#include "train/evaluate.h"
#include "train/fault_injection.h"
#include "train/mlperf_log.h"
#include "train/outputs.h"
#include "train/progress.h"
#include "train/schedule.h"
#include "train/sharded_model.h"
#include "train/step_profiler.h"
#include "train/task_eval.h"
#include "train/trainable.h"

namespace slipway::train {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// HF refuses a non-empty output_dir unless overwrite_output_dir; the token cache living inside is fine, and
// so is what a restarted job's earlier segment left there.
Status check_output_dir(const TrainingConfig& t, const std::string& cache_dir, bool restarted) {
    std::error_code ec;
    if (!fs::exists(t.output_dir, ec) || t.overwrite_output_dir || !t.resume_from_checkpoint.empty() ||
        restarted)
        return Status::Ok();
    for (const auto& entry : fs::directory_iterator(t.output_dir, ec)) {
        if (fs::equivalent(entry.path(), cache_dir, ec)) continue;
        return Status::Error("/training/output_dir: " + t.output_dir +
                             " is not empty; set /training/overwrite_output_dir or choose another folder");
    }
    return Status::Ok();
}

Result<model::LlamaForCausalLM> build_model(const RunConfig& config) {
    if (config.model.init == "random") {
        Result<model::LlamaConfig> llama_config =
            model::LlamaConfig::from_file(config.model.path + "/config.json");
        if (!llama_config.ok()) return llama_config.status();
        model::LlamaForCausalLM llama(*llama_config);
        model::init_weights(llama, static_cast<uint64_t>(config.training.seed));
        return llama;
    }
    if (config.adapter.method == "qlora") {  // the base quantized as it loads: never whole in fp32
        Result<model::LlamaConfig> llama_config =
            model::LlamaConfig::from_file(config.model.path + "/config.json");
        if (!llama_config.ok()) return llama_config.status();
        Result<io::Checkpoint> checkpoint = io::Checkpoint::open_folder(config.model.path);
        if (!checkpoint.ok()) return checkpoint.status();
        model::LlamaForCausalLM llama(*llama_config);
        Result<int64_t> loaded = model::load_quantized_base(llama, *checkpoint, config.adapter);
        if (!loaded.ok()) return Status::Error(config.model.path + ": " + loaded.error());
        return llama;
    }
    return model::load_hf_model(config.model.path);
}

// Discards everything: the MLLOG and progress streams of ranks other than 0.
std::ostream& null_stream() {
    static std::ostream sink(nullptr);
    return sink;
}

// Thrown when a wait for rank 0 found it gone; carries the message wait_for_main composed.
struct LostRank : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// What an exception says, for a person: c10's message without its C++ backtrace, and out of memory named.
std::string describe_exception(const std::exception& e) {
    if (dynamic_cast<const std::bad_alloc*>(&e)) return std::string("out of memory (") + e.what() + ")";
    if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e)) {
        std::string message = c10_error->what_without_backtrace();
        while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back())))
            message.pop_back();
        return dynamic_cast<const c10::OutOfMemoryError*>(&e) ? "out of memory: " + message : message;
    }
    return e.what();
}

// One training run. Members hold what the steps share; collectives may throw (a lost rank), which
// train() turns into an error naming the rank and step; any other exception is this rank's own failure.
class TrainingRun {
public:
    TrainingRun(const RunConfig& config, const TrainOptions& options, std::ostream& mllog,
                std::ostream& progress)
        : config_(config),
          t_(config.training),
          options_(options),
          mllog_out_(mllog),
          progress_out_(progress) {}

    Result<TrainReport> run();
    // After an exception: a collective's failure is a lost (or failed) peer, anything else this rank's own.
    Status stop_after(const std::exception& e);
    // Any other exception (out of memory, a shape error, a filesystem error): run_stop fail naming `cause`,
    // and the other ranks told why, so they name this rank's failure instead of a lost peer.
    Status fail(const std::string& cause);

private:
    // For the failure message: called after a collective threw.
    Status lost_peer(const std::exception& e);
    Status connect_ranks();
    Status setup();
    Status load_cache_and_model(Result<data::PrepareReport>& prepared);
    Status plan_steps();
    // Loads /training/resume_from_checkpoint; every rank confirms the same step and parameters.
    Status resume();
    Result<TrainReport> loop();
    Result<TrainReport> finish();
    // Every rank's setup phase ends here: an error anywhere stops all ranks with a message.
    Status agree(const Status& mine, const std::string& phase);
    bool is_main() const { return !dist_ || dist_->is_main(); }
    int64_t rank() const { return dist_ ? dist_->rank() : 0; }
    int64_t rank_local() const { return options_.dist_env.local_rank; }
    bool dist_backend_is_nccl() const { return dist_ && dist_->backend() == "nccl"; }
    int64_t world_size() const { return dist_ ? dist_->world_size() : 1; }
    bool sharded() const { return sharded_ != nullptr; }
    // `sharded`: QLoRA's base is not quantized here and the model stays where it is (ShardedModel::create
    // quantizes a layer at a time and puts only this rank's slices on the device); otherwise the whole base
    // is quantized and the model moved to the device.
    Status adapt_and_place(model::LlamaForCausalLM& llama, bool sharded = false);
    Status build_sharded_model();
    void report_quantized(int64_t bytes, const std::string& where);
    // The loss of one batch through whichever model this run has (sharded or replicated).
    model::LossResult batch_loss(const Batch& batch, bool count_correct);
    void evaluate_now(int64_t step, int64_t samples);
    // /eval/tasks: rank 0 runs them while the others wait outside any collective; a failure is said once
    // and turns the tasks off for the rest of the run (training goes on).
    void run_eval_tasks(const nlohmann::ordered_json& at);
    Status checkpoint(int64_t done);
    // Every rank writes its shards into rank 0's temporary folder; rank 0 completes it.
    Status sharded_checkpoint(int64_t done);
    void log_hyperparameters();
    // A run on several nodes: each node's heartbeat step, on rank 0, at most every node_steps_interval_s.
    void log_node_steps(const nlohmann::ordered_json& at);
    // `lost_ranks`: the ranks the run lost, named with their nodes in run_stop's metadata.
    void log_run_stop_failed(const std::string& message, const std::vector<int64_t>& lost_ranks = {});
    // A failed append to <output_dir>/mllog.txt (a full disk) is said once, when first seen.
    void warn_once_if_mllog_copy_failed();
    // Rank 0: the trackers of /training/report_to, fed every MLLOG event from here on; `fresh`: no resume.
    void attach_trackers(bool fresh);

    const RunConfig& config_;
    const TrainingConfig& t_;
    const TrainOptions& options_;
    std::ostream& mllog_out_;
    std::ostream& progress_out_;
    std::ostream* progress_ = &progress_out_;
    std::unique_ptr<track::RunTrackers>
        trackers_;  // rank 0: /training/report_to; outlives log_, which feeds it
    std::unique_ptr<MllogWriter> log_;
    std::optional<MlperfLog> mlperf_;  // submission and block lines when /mlperf/benchmark is set
    std::unique_ptr<dist::DistContext> dist_;
    std::unique_ptr<dist::GradientReducer> reducer_;
    std::unique_ptr<ShardedModel> sharded_;        // /distributed/sharding: full
    std::optional<TaskEvaluator> task_evaluator_;  // /eval/tasks: on rank 0, or on every rank when sharded

    torch::Device device_{torch::kCPU};
    std::string cache_dir_;
    std::optional<data::TokenCache> cache_;
    std::optional<model::LlamaForCausalLM> llama_;
    Trainable trainable_;
    std::unique_ptr<FlatAdamW> optimizer_;
    std::optional<data::DistributedBlockSampler> sampler_;
    std::optional<LrSchedule> schedule_;
    int64_t total_steps_ = 0, global_batch_ = 0, tokens_per_step_ = 0;
    bool has_validation_ = false;

    LoopPosition start_;
    uint64_t epoch_ = 0;
    size_t cursor_ = 0;
    int64_t current_step_ = 0;
    bool target_reached_ = false;
    bool mllog_copy_failure_reported_ = false;
    std::optional<Clock::time_point> last_node_steps_;
    bool last_node_steps_complete_ = false;  // every node had a heartbeat step in the last node_steps
    EvalResult last_eval_;
    int64_t last_eval_step_ = -1;
    TrainReport report_;
};

Status TrainingRun::agree(const Status& mine, const std::string& phase) {
    if (!dist_) return mine;
    std::vector<double> failed{mine.ok() ? 0.0 : 1.0};
    dist_->allreduce_sum(failed);
    if (!mine.ok()) return mine;
    if (failed[0] > 0) {
        return Status::Error("rank " + std::to_string(rank()) +
                             ": stopping: " + std::to_string(int(failed[0])) +
                             " other rank(s) failed while " + phase + " (their output says why)");
    }
    return Status::Ok();
}

Status TrainingRun::connect_ranks() {
    // Which engine this is, once per run: a cluster's engine is built against the environment's own torch.
    if (options_.dist_env.rank == 0)
        *progress_ << "engine: libtorch " << TORCH_VERSION_MAJOR << "." << TORCH_VERSION_MINOR << "."
                   << TORCH_VERSION_PATCH << ", "
                   << (model::cuda_kernels_built()
                           ? "with Slipway's CUDA kernels"
                           : "without Slipway's CUDA kernels (built without nvcc/NCCL: ATen only)")
                   << "\n";
    if (options_.dist_env.world_size <= 1) return Status::Ok();
    Result<std::unique_ptr<dist::DistContext>> connected =
        dist::DistContext::connect(options_.dist_env, config_.distributed);
    if (!connected.ok()) return connected.status();
    dist_ = std::move(*connected);
    if (!is_main()) progress_ = &null_stream();
    *progress_ << "rank " << rank() << " of " << world_size() << ": " << dist_->backend()
               << " process group via " << dist_->master()
               << (dist_->listens_on_master_only() ? "" : " (the store listens on every interface)") << "\n";
    *progress_ << "ranks by node: " << dist::describe_rank_hosts(dist_->hosts()) << "\n";
    return Status::Ok();
}

Status TrainingRun::setup() {
    cache_dir_ = config_.data.cache_dir.empty() ? t_.output_dir + "/cache" : config_.data.cache_dir;
    // Checked by every rank before any writes, so they all see the same folder.
    if (Status s = agree(check_output_dir(t_, cache_dir_, options_.resume_latest_if_any),
                         "checking the output folder");
        !s.ok())
        return s;
    model::set_torch_threads(options_.threads > 0 ? options_.threads
                                                  : static_cast<int>(std::thread::hardware_concurrency()));

    log_ = std::make_unique<MllogWriter>(is_main() ? mllog_out_ : null_stream());
    if (is_main()) {
        std::error_code ec;
        fs::create_directories(t_.output_dir, ec);
        Status made =
            ec ? Status::Error("/training/output_dir: cannot create " + t_.output_dir + ": " + ec.message())
               : Status::Ok();
        const bool fresh = t_.resume_from_checkpoint.empty() && !options_.resume_latest_if_any;
        if (made.ok()) {
            if (fresh) std::remove((t_.output_dir + "/mllog.txt").c_str());  // a resumed run appends
            made = log_->tee_to_file(t_.output_dir + "/mllog.txt");
        }
        if (made.ok()) attach_trackers(fresh);
        if (Status s = agree(made, "creating the output folder"); !s.ok()) return s;
    } else if (Status s = agree(Status::Ok(), "creating the output folder"); !s.ok()) {
        return s;
    }
    log_->interval_start(mllog_key::kInitStart);
    mlperf_.emplace(config_.mlperf, *log_);
    mlperf_->log_submission();

    // Data: rank 0 prepares (a cache hit when it exists); the others then find the cache ready.
    data::PrepareOptions prepare_options;
    prepare_options.engine_version = options_.engine_version;
    Result<data::PrepareReport> prepared = Status::Error("not prepared");
    if (is_main()) prepared = data::prepare_token_cache(config_, prepare_options);
    if (dist_) {  // tokenizing may take longer than any collective timeout: wait while rank 0 beats
        if (Status s = dist_->wait_for_main("preparing the token cache", prepared.status()); !s.ok())
            return s;
    }
    // Everything each rank does on its own, then one agreement before the first collective: a rank that
    // fails here stops the others with a message instead of leaving them to time out.
    if (Status s = agree(load_cache_and_model(prepared), "loading the data and the model"); !s.ok()) return s;
    model::LlamaForCausalLM& llama = *llama_;
    const auto bucket_bytes = static_cast<size_t>(config_.distributed.bucket_mb * 1024 * 1024);
    if (sharded()) {  // every rank built its slices from the same seeded model or the same files
        optimizer_ =
            std::make_unique<FlatAdamW>(trainable_.names, trainable_.tensors, sharded_->shard_decays(), t_);
        llama->train();
        if (Status s = agree(plan_steps(), "planning the steps"); !s.ok()) return s;
        return resume();
    }
    if (dist_) dist_->broadcast_from_main(trainable_.tensors, bucket_bytes);
    optimizer_ = make_adamw(trainable_, t_);
    llama->train();
    if (Status s = agree(plan_steps(), "planning the steps"); !s.ok()) return s;
    if (Status s = resume(); !s.ok()) return s;
    if (dist_) {  // after resume: a resumed run reduces in the buckets of the run it continues
        reducer_ =
            std::make_unique<dist::GradientReducer>(trainable_.names, trainable_.tensors, dist_->group(),
                                                    config_.distributed.bucket_mb, start_.gradient_buckets);
        *progress_ << "gradients averaged over " << world_size() << " ranks in " << reducer_->bucket_count()
                   << " buckets of <= " << config_.distributed.bucket_mb << " MiB"
                   << (start_.gradient_buckets.empty() ? "" : ", as the checkpoint's run had them") << "\n";
    }
    return Status::Ok();
}

Status TrainingRun::load_cache_and_model(Result<data::PrepareReport>& prepared) {
    data::PrepareOptions prepare_options;
    prepare_options.engine_version = options_.engine_version;
    if (!is_main()) prepared = data::prepare_token_cache(config_, prepare_options);  // a cache hit now
    if (!prepared.ok()) return prepared.status();
    *progress_ << (prepared->cache_hit ? "cache hit: " : "prepared: ") << prepared->cache_path << "\n";
    if (prepared->meta.conversations()) *progress_ << data::describe_conversations(prepared->meta) << "\n";
    Result<data::TokenCache> cache = data::TokenCache::open(prepared->cache_path);
    if (!cache.ok()) return cache.status();
    cache_.emplace(std::move(*cache));
    // Replicated, rank 0 runs the tasks on its replica; sharded, every rank takes part.
    if ((is_main() || config_.distributed.sharding == "full") && !config_.eval.tasks.empty()) {
        Result<TaskEvaluator> tasks = TaskEvaluator::load(config_);
        if (!tasks.ok()) return tasks.status();
        task_evaluator_.emplace(std::move(*tasks));
    }

    if (config_.distributed.sharding == "full") return build_sharded_model();
    // Model: every rank builds the same one; rank 0's trainable weights are broadcast (DDP's initial sync).
    torch::manual_seed(static_cast<uint64_t>(t_.seed));
    Result<model::LlamaForCausalLM> built = build_model(config_);
    if (!built.ok()) return built.status();
    llama_.emplace(std::move(*built));
    model::LlamaForCausalLM& llama = *llama_;
    if (Status s = adapt_and_place(llama); !s.ok()) return s;
    llama->model->gradient_checkpointing = t_.gradient_checkpointing;
    Result<Trainable> trainable = select_trainable(llama, config_.adapter);
    if (!trainable.ok()) return trainable.status();
    trainable_ = std::move(*trainable);
    const model::LlamaConfig& c = llama->config;
    const bool bf16_activations = t_.bf16 && !device_.is_cpu();
    *progress_ << "attention: "
               << model::attention_backend(
                      c.num_attention_heads, c.num_key_value_heads, config_.data.block_size, c.head_dim,
                      torch::TensorOptions().device(device_).dtype(bf16_activations ? torch::kBFloat16
                                                                                    : torch::kFloat32),
                      c.sliding_window)
               << "\n";
    if (config_.adapter.method != "full") {
        const torch::ScalarType base_dtype =
            model::frozen_base_dtype(config_.model.base_dtype, config_.adapter.method, t_.bf16, device_);
        const model::FrozenBaseLayout layout = model::lay_out_frozen_base(*llama, base_dtype);
        *progress_ << "frozen base: " << layout.converted_bytes / (1 << 20) << " MiB in "
                   << (base_dtype == torch::kBFloat16 ? "bfloat16" : "float32") << ", "
                   << layout.packed_groups << " q|k|v and gate|up groups packed\n";
    }
    return Status::Ok();
}

// Checks the vocabulary, adds LoRA adapters, and moves the model to this rank's device.
void TrainingRun::report_quantized(int64_t bytes, const std::string& where) {
    std::ostringstream mib;  // the progress stream's own format stays as it is
    mib << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / (1 << 20);
    *progress_ << "QLoRA: the decoder's linear weights as NF4"
               << (config_.adapter.bnb_4bit_use_double_quant ? " with double quantization" : "") << ", "
               << mib.str() << " MiB" << where << "; compute in " << config_.adapter.bnb_4bit_compute_dtype
               << "\n";
}

Status TrainingRun::adapt_and_place(model::LlamaForCausalLM& llama, bool sharded) {
    if (cache_->meta().vocab_size > static_cast<uint64_t>(llama->config.vocab_size)) {
        return Status::Error("the tokenizer has " + std::to_string(cache_->meta().vocab_size) +
                             " tokens but the model only " + std::to_string(llama->config.vocab_size));
    }
    if (config_.adapter.uses_lora()) {
        Result<std::vector<std::string>> adapted = model::apply_lora(llama, config_.adapter);
        if (!adapted.ok()) return adapted.status();
        *progress_ << "LoRA on " << adapted->size() << " layers\n";
    }
    if (config_.adapter.method == "qlora" && !sharded) {
        Result<int64_t> bytes = model::quantize_base(llama, config_.adapter);
        if (!bytes.ok()) return bytes.status();
        report_quantized(*bytes, "");
    }
    // One GPU per rank when the run asks for GPUs and this LibTorch has CUDA (NGC's); CPU otherwise.
    // A Gloo group reduces CPU tensors only: GPUs need the NCCL backend once there are several ranks.
    device_ = model::training_device((config_.slurm.gpus_per_node > 0 && !dist_) || dist_backend_is_nccl(),
                                     rank_local());
    if (!device_.is_cpu() && !sharded) {
        llama->to(device_);
        model::move_quantized_base(llama, device_);
    }
    *progress_ << "device: " << device_.str() << "\n";
    return Status::Ok();
}

// Sharded: every rank builds the model's skeleton (random init: the whole seeded model, the same on every
// rank), keeps its own slices (read from the mapped safetensors for an HF folder) and frees the rest.
Status TrainingRun::build_sharded_model() {
    torch::manual_seed(static_cast<uint64_t>(t_.seed));
    std::optional<io::Checkpoint> folder;
    std::optional<model::LlamaForCausalLM> skeleton;
    if (config_.model.init == "random") {
        Result<model::LlamaForCausalLM> built = build_model(config_);
        if (!built.ok()) return built.status();
        skeleton.emplace(std::move(*built));
    } else {
        Result<model::LlamaConfig> llama_config =
            model::LlamaConfig::from_file(config_.model.path + "/config.json");
        if (!llama_config.ok()) return llama_config.status();
        Result<io::Checkpoint> opened = io::Checkpoint::open_folder(config_.model.path);
        if (!opened.ok()) return opened.status();
        folder.emplace(std::move(*opened));
        skeleton.emplace(model::LlamaForCausalLM(*llama_config));
    }
    model::LlamaForCausalLM& llama = *skeleton;
    if (Status s = adapt_and_place(llama, /*sharded=*/true); !s.ok()) return s;
    if (Result<Trainable> trainable = select_trainable(llama, config_.adapter); !trainable.ok())
        return trainable.status();  // sets requires_grad, which decides each parameter's buffer
    // QLoRA: each decoder layer quantized (from the folder's mapped bytes, or from the random init) just
    // before its slices are taken.
    int64_t nf4_bytes = 0;
    ShardedModel::PrepareUnit quantize_layer;
    if (config_.adapter.method == "qlora") {
        quantize_layer = [&](const std::string& unit) -> Status {
            if (unit.rfind("layers.", 0) != 0) return Status::Ok();
            Result<int64_t> bytes = model::quantize_layer(llama, config_.adapter, std::stoll(unit.substr(7)),
                                                          folder ? &*folder : nullptr, device_);
            if (!bytes.ok()) return bytes.status();
            nf4_bytes += *bytes;
            return Status::Ok();
        };
    }
    ShardComm comm;
    if (dist_) {
        comm.group = dist_->group();
        comm.rank = rank();
        comm.world_size = world_size();
        comm.reduce_scatter = dist_->has_reduce_scatter();
        comm.point_to_point = dist_->backend() == "gloo";
        const std::string& prefetch = config_.distributed.prefetch;
        comm.prefetch = prefetch == "on" || (prefetch == "auto" && dist_backend_is_nccl());
    }
    Result<std::unique_ptr<ShardedModel>> made =
        ShardedModel::create(llama, comm, folder ? &*folder : nullptr, quantize_layer, device_);
    if (!made.ok()) return Status::Error(config_.model.path + ": " + made.status().message());
    sharded_ = std::move(*made);
    if (config_.adapter.method == "qlora")
        report_quantized(nf4_bytes, ", 1/" + std::to_string(world_size()) + " of it on this rank");
    sharded_->set_gradient_checkpointing(t_.gradient_checkpointing);
    sharded_->set_bf16(t_.bf16, device_.type());
    llama_.emplace(llama);
    trainable_.names = sharded_->shard_names();
    trainable_.tensors = sharded_->shards();
    *progress_ << "sharded over " << world_size() << " rank(s): " << sharded_->local_elements()
               << " parameters on this rank, in " << sharded_->unit_count() << " units\n";
    return Status::Ok();
}

model::LossResult TrainingRun::batch_loss(const Batch& b, bool count_correct) {
    return sharded_ ? sharded_->loss(b.ids, count_correct, b.trained, b.documents)
                    : model::causal_lm_loss(*llama_, b.ids, count_correct, b.trained, b.documents);
}

Status TrainingRun::plan_steps() {
    model::LlamaForCausalLM& llama = *llama_;
    // Steps: each rank takes its strided share of every epoch's shuffled blocks.
    Result<data::DistributedBlockSampler> sampler = data::DistributedBlockSampler::create(
        cache_->num_blocks(data::Split::kTrain), world_size(), rank(), static_cast<uint64_t>(t_.seed));
    if (!sampler.ok()) return sampler.status();
    sampler_.emplace(std::move(*sampler));
    const int64_t batch = t_.per_device_train_batch_size;
    const int64_t micro_batches = static_cast<int64_t>(sampler_->num_samples()) / batch;
    if (micro_batches < 1) {
        return Status::Error("the training set has " +
                             std::to_string(cache_->num_blocks(data::Split::kTrain)) +
                             " blocks: fewer than one batch of " + std::to_string(batch) + " per rank on " +
                             std::to_string(world_size()) + " ranks");
    }
    total_steps_ = total_training_steps(t_, micro_batches);
    Result<LrSchedule> schedule = LrSchedule::create(t_.lr_scheduler_type, t_.learning_rate,
                                                     warmup_steps_for(t_, total_steps_), total_steps_);
    if (!schedule.ok()) return schedule.status();
    schedule_.emplace(std::move(*schedule));
    global_batch_ = batch * t_.gradient_accumulation_steps * world_size();
    tokens_per_step_ = global_batch_ * static_cast<int64_t>(cache_->block_size());
    has_validation_ = cache_->num_blocks(data::Split::kValidation) > 0;
    log_hyperparameters();
    log_->interval_end(mllog_key::kInitStop);
    log_->interval_start(mllog_key::kRunStart);
    *progress_ << "training " << total_steps_ << " steps of " << global_batch_ << " sequences x "
               << cache_->block_size() << " tokens; " << llama->config.parameter_count() << " parameters, "
               << trainable_.names.size() << " trainable tensors\n";
    return Status::Ok();
}

namespace {

// XXH64 over the bytes of every tensor, in order: equal on every rank exactly when they hold the same values.
uint64_t parameter_checksum(const std::vector<torch::Tensor>& tensors) {
    data::Xxh64Stream hash;
    for (const torch::Tensor& t : tensors) {
        const torch::Tensor host = t.detach().to(torch::kCPU).contiguous();
        hash.update(host.data_ptr(), host.numel() * host.element_size());
    }
    return hash.digest();
}

}  // namespace

Status TrainingRun::resume() {
    std::string request = t_.resume_from_checkpoint;
    Result<std::string> newest = Status::Error("not looked for");  // rank 0's newest intact checkpoint
    if (options_.resume_latest_if_any) {
        // Rank 0 looks (a lagging filesystem may show another rank less); every rank takes its answer.
        if (is_main()) newest = resolve_checkpoint("latest", t_.output_dir, progress_);
        std::vector<double> found{newest.ok() ? 1.0 : 0.0};
        if (dist_) dist_->allreduce_sum(found);
        if (found[0] > 0) {
            request = "latest";
        } else {
            *progress_ << "restart " << options_.restart << ": no checkpoint in " << t_.output_dir
                       << (request.empty() ? " yet: training from the start\n"
                                           : ": resuming as configured\n");
        }
    }
    if (request.empty()) return Status::Ok();
    // "latest" is rank 0's answer (another rank may list the folder before a lagging filesystem shows the
    // newest save); the others take the same step. Every rank takes part in the sum whatever it asked for.
    const bool latest = request == "latest";
    Result<std::string> dir = Status::Error("not resolved");
    if (newest.ok()) {
        dir = newest;  // already verified above
    } else if (is_main() || !latest) {
        dir = resolve_checkpoint(request, t_.output_dir, progress_);
    }
    if (dist_) {
        std::vector<double> chosen{is_main() && dir.ok() ? static_cast<double>(checkpoint_step(*dir)) : 0.0,
                                   is_main() && !dir.ok() ? 1.0 : 0.0};
        dist_->allreduce_sum(chosen);
        if (!is_main() && latest) {
            dir = chosen[1] > 0
                      ? Status::Error("rank " + std::to_string(rank()) +
                                      ": stopping: rank 0 found no checkpoint to resume from")
                      : resolve_checkpoint(checkpoint_dir(t_.output_dir, static_cast<int64_t>(chosen[0])),
                                           t_.output_dir);
        }
    }
    Result<LoopPosition> loaded = dir.status();
    if (dir.ok()) {
        loaded = sharded() ? load_sharded_checkpoint(*dir, rank(), world_size(), trainable_.names,
                                                     trainable_.tensors, *optimizer_)
                           : load_checkpoint(*dir, *llama_, *optimizer_, trainable_.names);
    }
    if (loaded.ok() && loaded->world_size != world_size()) {
        loaded = Status::Error(*dir + ": saved with world size " + std::to_string(loaded->world_size) +
                               ", this run has " + std::to_string(world_size()) +
                               " (the data position would not match)");
    }
    if (!dist_) {
        if (!loaded.ok()) return loaded.status();
    } else {
        // Every rank confirms the step and (unsharded: the ranks hold the same values) a checksum of its
        // trainable parameters before the first step: ranks that loaded different checkpoints would
        // otherwise train on, averaging gradients of different models.
        const uint64_t checksum = loaded.ok() && !sharded() ? parameter_checksum(trainable_.tensors) : 0;
        std::vector<double> seen(static_cast<size_t>(3 * world_size()), 0.0);
        double* mine = &seen[static_cast<size_t>(3 * rank())];
        mine[0] = loaded.ok() ? static_cast<double>(loaded->step) : -1.0;
        mine[1] = static_cast<double>(checksum >> 32);  // halves: exact in fp64
        mine[2] = static_cast<double>(checksum & 0xffffffffu);
        dist_->allreduce_sum(seen);
        if (!loaded.ok()) return loaded.status();
        const std::string me = "rank " + std::to_string(rank()) + ": ";
        auto hex = [](double hi, double lo) {
            return data::hex64((static_cast<uint64_t>(hi) << 32) | static_cast<uint64_t>(lo));
        };
        for (int64_t r = 1; r < world_size(); ++r) {
            const double* theirs = &seen[static_cast<size_t>(3 * r)];
            if (theirs[0] < 0)
                return Status::Error(me + "stopping: rank " + std::to_string(r) +
                                     " could not load its checkpoint (its output says why)");
            if (theirs[0] != seen[0]) {
                return Status::Error(me + "the ranks resumed at different steps: rank 0 at step " +
                                     std::to_string(static_cast<int64_t>(seen[0])) + ", rank " +
                                     std::to_string(r) + " at step " +
                                     std::to_string(static_cast<int64_t>(theirs[0])) + " (" + request + ")");
            }
            if (theirs[1] != seen[1] || theirs[2] != seen[2]) {
                return Status::Error(me + "rank " + std::to_string(r) + "'s parameters after loading step " +
                                     std::to_string(static_cast<int64_t>(seen[0])) +
                                     " differ from rank 0's " + "(checksum " + hex(theirs[1], theirs[2]) +
                                     " vs " + hex(seen[1], seen[2]) +
                                     "): the ranks do not see the same checkpoint");
            }
        }
        *progress_ << "every rank resumed at step " << loaded->step
                   << (sharded() ? "" : " with parameter checksum " + data::hex64(checksum)) << "\n";
    }
    start_ = *loaded;
    *progress_ << "resumed from " << *dir << " at step " << start_.step << "\n";
    // Where the curve continues: the app marks a run's segments on its plots from these.
    log_->point_in_time(mllog_key::kResume, start_.step,
                        {{mllog_field::kSamplesCount, start_.step * global_batch_},
                         {mllog_field::kStepNum, start_.step},
                         {mllog_field::kCheckpoint, *dir},
                         {mllog_field::kRestart, options_.restart}});
    return Status::Ok();
}

void TrainingRun::log_node_steps(const nlohmann::ordered_json& at) {
    if (!dist_ || dist_->rank() != 0) return;
    const std::vector<NodeRanks> nodes = group_ranks_by_node(dist_->hosts());
    if (nodes.size() < 2) return;
    const auto now = Clock::now();
    // Soon again while a node has not reported yet (the first steps), else at the interval.
    const double interval = last_node_steps_complete_ ? options_.node_steps_interval_s : 1.0;
    if (last_node_steps_ && std::chrono::duration<double>(now - *last_node_steps_).count() < interval) return;
    last_node_steps_ = now;
    const std::vector<NodeStep> steps =
        node_steps(nodes, dist_->heartbeat_steps(std::chrono::milliseconds(1000)));
    last_node_steps_complete_ =
        std::all_of(steps.begin(), steps.end(), [](const NodeStep& s) { return s.step.has_value(); });
    log_->point_in_time(mllog_key::kNodeSteps, node_steps_json(steps), at);
}

void TrainingRun::log_hyperparameters() {
    if (dist_)
        log_->point_in_time(mllog_key::kNodeRanks, node_ranks_json(group_ranks_by_node(dist_->hosts())));
    log_->point_in_time(mllog_key::kGlobalBatchSize, global_batch_);
    log_->point_in_time(mllog_key::kOptBaseLearningRate, t_.learning_rate);
    if (config_.adapter.uses_lora()) {
        log_->point_in_time(mllog_key::kLoraRank, config_.adapter.r);
        log_->point_in_time(mllog_key::kLoraAlpha, config_.adapter.lora_alpha);
    }
    log_->point_in_time(mllog_key::kGradientAccumulationSteps, t_.gradient_accumulation_steps);
    log_->point_in_time(mllog_key::kOptGradientClipNorm, t_.max_grad_norm);
    log_->point_in_time(mllog_key::kOptAdamwWeightDecay, t_.weight_decay);
    log_->point_in_time(mllog_key::kOptLearningRateTrainingSteps, total_steps_);
    log_->point_in_time(mllog_key::kOptLearningRateWarmupSteps, schedule_->warmup_steps());
    log_->point_in_time(mllog_key::kSeed, t_.seed);
    log_->point_in_time(mllog_key::kTrainSamples,
                        static_cast<int64_t>(cache_->num_blocks(data::Split::kTrain)));
    log_->point_in_time(mllog_key::kEvalSamples,
                        static_cast<int64_t>(cache_->num_blocks(data::Split::kValidation)));
}

void TrainingRun::evaluate_now(int64_t step, int64_t samples) {
    const nlohmann::ordered_json at = {{mllog_field::kSamplesCount, samples}, {mllog_field::kStepNum, step}};
    mlperf_->end_block(samples);
    log_->interval_start(mllog_key::kEvalStart, nullptr, at);
    EvalSums sums;
    {
        model::Bf16Autocast autocast(t_.bf16, device_.type());
        if (sharded()) {
            sharded_->set_training(false);
            sums = evaluate_share([this](const Batch& b) { return batch_loss(b, true); }, *cache_,
                                  t_.per_device_eval_batch_size, rank(), world_size(), device_,
                                  /*every_rank_in_step=*/true);
            sharded_->set_training(true);
        } else {
            sums = evaluate_share(*llama_, *cache_, t_.per_device_eval_batch_size, rank(), world_size(),
                                  device_);
        }
    }
    if (dist_) {
        std::vector<double> v = sums.as_vector();
        dist_->allreduce_sum(v);
        sums = EvalSums::from_vector(v);
    }
    last_eval_ = sums.result();
    last_eval_step_ = step;
    const double metric = config_.eval.metric == "loss" ? last_eval_.loss : last_eval_.token_accuracy;
    log_->interval_end(mllog_key::kEvalStop, nullptr, at);
    log_->point_in_time(mllog_key::kEvalLoss, last_eval_.loss, at);
    log_->point_in_time(mllog_key::kEvalTokenAccuracy, last_eval_.token_accuracy, at);
    log_->point_in_time(mllog_key::kEvalAccuracy, metric, at);
    std::ostringstream line;
    line << "eval at step " << step << ": loss " << std::fixed << std::setprecision(4) << last_eval_.loss
         << ", token accuracy " << last_eval_.token_accuracy << "\n";
    *progress_ << line.str();
    run_eval_tasks(at);
    if (config_.eval.target) {
        target_reached_ =
            config_.eval_higher_is_better() ? metric >= *config_.eval.target : metric <= *config_.eval.target;
    }
}

void TrainingRun::run_eval_tasks(const nlohmann::ordered_json& at) {
    if (config_.eval.tasks.empty()) return;
    if (sharded()) {  // every rank, in step: the same forwards gather the same units
        if (!task_evaluator_) return;
        eval::ShardedScoring scoring;
        scoring.hook = sharded_->inference_hook();
        if (dist_) {
            scoring.agree = [this](int64_t id) {  // rank 0's pick (ids < 2^53 survive the doubles)
                std::vector<double> picked{is_main() ? static_cast<double>(id) : 0.0};
                dist_->allreduce_sum(picked);
                return static_cast<int64_t>(picked[0]);
            };
        }
        const Status status = task_evaluator_->run(*llama_, device_, t_.bf16, *log_, at, *progress_, scoring);
        if (!status.ok()) {  // the same failure on every rank (too long a sample): all stop running them
            *progress_ << "warning: eval tasks failed, not run again in this run: " << status.message()
                       << "\n";
            task_evaluator_.reset();
        }
        return;
    }
    if (task_evaluator_) {
        const Status status = task_evaluator_->run(*llama_, device_, t_.bf16, *log_, at, *progress_);
        if (!status.ok()) {
            *progress_ << "warning: eval tasks failed, not run again in this run: " << status.message()
                       << "\n";
            task_evaluator_.reset();
        }
    }
    if (!dist_) return;
    const Status waited = dist_->wait_for_main("running the eval tasks", Status::Ok());
    if (!waited.ok()) throw LostRank(waited.message());
}

// Rank 0 writes; the others go on and meet it at the next collective.
Status TrainingRun::checkpoint(int64_t done) {
    if (sharded()) return sharded_checkpoint(done);
    LoopPosition position{done, epoch_, cursor_, world_size(), {}};
    if (reducer_)
        position.gradient_buckets = reducer_->layout();  // every rank: it may rebuild (a collective)
    Status status = Status::Ok();
    if (is_main()) {
        Result<std::string> saved =
            save_checkpoint(t_.output_dir, *llama_, *optimizer_, trainable_.names, position);
        if (saved.ok()) {
            log_->point_in_time(mllog_key::kCheckpointSaved, *saved, {{mllog_field::kStepNum, done}});
            if (t_.save_total_limit) prune_checkpoints(t_.output_dir, *t_.save_total_limit);
        } else {
            status = saved.status();
        }
    }
    if (!dist_) return status;
    // A failed save is a warning on rank 0 (training goes on); the others only wait for it to finish.
    const Status waited = dist_->wait_for_main("saving checkpoint " + std::to_string(done), Status::Ok());
    if (!waited.ok()) throw LostRank(waited.message());
    return status;
}

Status TrainingRun::sharded_checkpoint(int64_t done) {
    const LoopPosition position{done, epoch_, cursor_, world_size(), {}};
    Result<std::string> tmp =
        is_main() ? begin_checkpoint(t_.output_dir, done) : Result<std::string>(std::string());
    auto everyone = [&](const Status& mine, const std::string& phase) {
        if (!dist_) return mine;
        const Status waited = dist_->wait_for_main(phase, mine);  // rank 0's file work may be slow
        if (waited.code() == StatusCode::kUnavailable) throw LostRank(waited.message());
        return waited;
    };
    if (Status s = everyone(tmp.status(), "creating checkpoint " + std::to_string(done)); !s.ok()) return s;
    const std::string tmp_dir = checkpoint_tmp_dir(t_.output_dir, done);
    Status written =
        write_rank_shards(tmp_dir, rank(), world_size(), trainable_.names, trainable_.tensors, *optimizer_);
    if (dist_) {  // did every rank write its file?
        std::vector<double> failed{written.ok() ? 0.0 : 1.0};
        dist_->allreduce_sum(failed);
        if (written.ok() && failed[0] > 0)
            written = Status::Error(std::to_string(int(failed[0])) + " rank(s) could not write their shards");
    }
    Status status = written;
    if (is_main()) {
        if (written.ok()) {
            Result<std::string> saved = finish_checkpoint(t_.output_dir, tmp_dir, *optimizer_,
                                                          trainable_.names, position, /*sharded=*/true);
            if (saved.ok()) {
                log_->point_in_time(mllog_key::kCheckpointSaved, *saved, {{mllog_field::kStepNum, done}});
                if (t_.save_total_limit) prune_checkpoints(t_.output_dir, *t_.save_total_limit);
            }
            status = saved.status();
        } else {
            status = discard_checkpoint(t_.output_dir, tmp_dir, done, written.message());
        }
    }
    // A failed save is a warning (training goes on); the others wait for rank 0 to finish the folder.
    if (dist_) {
        const Status waited = dist_->wait_for_main("saving checkpoint " + std::to_string(done), Status::Ok());
        if (!waited.ok()) throw LostRank(waited.message());
    }
    return status;
}

Result<TrainReport> TrainingRun::loop() {
    report_.output_dir = t_.output_dir;
    epoch_ = start_.epoch;
    sampler_->set_epoch(epoch_);
    std::vector<uint64_t> order = sampler_->indices();
    cursor_ = static_cast<size_t>(start_.cursor);
    const int64_t batch = t_.per_device_train_batch_size, accumulation = t_.gradient_accumulation_steps;
    double window_loss = 0;
    int64_t window_steps = 0;
    const auto run_start = Clock::now();
    auto window_start = run_start;
    auto last_progress = run_start - std::chrono::hours(1);

    StepProfiler profiler(t_.profile_steps, t_.output_dir, device_, *progress_);
    for (int64_t step = start_.step; step < total_steps_; ++step) {
        current_step_ = step + 1;
        profiler.step_begins(current_step_);
        mlperf_->before_step(step * global_batch_);
        if (dist_) {
            dist_->mark_progress(current_step_, dist::DistContext::StepPoint::kStart);
            hang_here_if_injected(rank(), current_step_);
        }
        const double lr = schedule_->lr(step);
        // The step's micro-batches first: a conversation step's loss is the mean over all its trained
        // targets (HF's num_items_in_batch), so each micro-batch weighs by its share of them.
        std::vector<Batch> batches;
        int64_t step_targets = 0;
        for (int64_t micro = 0; micro < accumulation; ++micro) {
            if (cursor_ + static_cast<size_t>(batch) > order.size()) {  // next epoch
                sampler_->set_epoch(++epoch_);
                order = sampler_->indices();
                cursor_ = 0;
            }
            batches.push_back(load_batch(*cache_, data::Split::kTrain, order, cursor_,
                                         static_cast<size_t>(batch), device_));
            cursor_ += static_cast<size_t>(batch);
            step_targets += batches.back().trained.defined() ? batches.back().trained.size(0) : 0;
        }
        std::vector<double> weights;
        for (const Batch& b : batches) {
            const bool by_targets = b.trained.defined();
            weights.push_back(!by_targets         ? 1.0 / static_cast<double>(accumulation)
                              : step_targets == 0 ? 0.0
                                                  : static_cast<double>(b.trained.size(0)) /
                                                        static_cast<double>(step_targets));
        }
        std::vector<torch::Tensor> micro_losses;  // read once after the micro-steps: no host sync between
        for (int64_t micro = 0; micro < accumulation; ++micro) {
            const bool sync = reducer_ && micro == accumulation - 1;  // earlier micro-steps only accumulate
            if (sync) reducer_->before_sync_forward();
            model::LossResult r;
            {
                const StepProfiler::Phase forward = profiler.phase("forward");
                model::Bf16Autocast autocast(t_.bf16, device_.type());  // fp32 master weights, bf16 matmuls
                r = batch_loss(batches[static_cast<size_t>(micro)], /*count_correct=*/false);
            }
            throw_here_if_injected(rank(), current_step_, [] {
                (void)torch::matmul(torch::zeros({2, 3}), torch::zeros({2, 3}));
            });
            const torch::Tensor scaled = batches[static_cast<size_t>(micro)].trained.defined()
                                             ? r.loss * weights[static_cast<size_t>(micro)]
                                         : accumulation == 1 ? r.loss
                                                             : r.loss / static_cast<double>(accumulation);
            if (sync) {
                reducer_->before_sync_backward(scaled);
                dist_->mark_progress(current_step_, dist::DistContext::StepPoint::kSyncBackward);
            }
            {
                const StepProfiler::Phase backward = profiler.phase("backward");
                scaled.backward();  // with the reducer: returns with every gradient averaged over ranks
            }
            micro_losses.push_back(r.loss.detach());
        }
        double step_loss = 0;
        const torch::Tensor read =
            torch::stack(micro_losses).to(torch::kCPU, torch::kFloat64);  // (accumulation)
        for (int64_t micro = 0; micro < accumulation; ++micro) {
            step_loss += batches[static_cast<size_t>(micro)].trained.defined()
                             ? read[micro].item<double>() * weights[static_cast<size_t>(micro)]
                             : read[micro].item<double>() / static_cast<double>(accumulation);
        }
        // One small collective per step: the mean loss, and whether any rank was asked to stop.
        bool stop = options_.stop_requested && options_.stop_requested->load();
        if (dist_) {
            std::vector<double> shared{step_loss, stop ? 1.0 : 0.0};
            dist_->mark_progress(current_step_, dist::DistContext::StepPoint::kStepEnd);
            dist_->allreduce_sum(shared);
            step_loss = shared[0] / static_cast<double>(world_size());
            stop = shared[1] > 0;
        }
        // Equal on every rank; sharded, each rank holds a part of the gradient and the squares are summed.
        const double grad_norm = sharded() && dist_
                                     ? optimizer_->clip_grad_norm(t_.max_grad_norm,
                                                                  [this](double squares) {
                                                                      std::vector<double> v{squares};
                                                                      dist_->allreduce_sum(v);
                                                                      return v[0];
                                                                  })
                                     : optimizer_->clip_grad_norm(t_.max_grad_norm);
        const int64_t done = step + 1, samples = done * global_batch_;
        if (!std::isfinite(step_loss) || !std::isfinite(grad_norm)) {
            log_->interval_end(
                mllog_key::kRunStop, nullptr,
                {{mllog_field::kStatus, run_stop_status::kAborted}, {mllog_field::kStepNum, done}});
            return Status::Error("step " + std::to_string(done) + ": non-finite " +
                                 (std::isfinite(step_loss) ? "gradient norm" : "loss") + " (loss " +
                                 std::to_string(step_loss) + ", grad norm " + std::to_string(grad_norm) +
                                 "); the optimizer step was not taken");
        }
        {
            const StepProfiler::Phase optimizer = profiler.phase("optimizer");
            optimizer_->step(lr);
            optimizer_->zero_grad();
        }
        if (Status s = profiler.step_ends(done); !s.ok()) return Status::Error("profile: " + s.message());
        window_loss += step_loss;
        ++window_steps;
        report_.final_train_loss = step_loss;
        report_.steps = done;

        if (done % t_.logging_steps == 0 || done == total_steps_) {
            const auto now = Clock::now();
            const double seconds = std::chrono::duration<double>(now - window_start).count();
            const double tokens_per_second =
                static_cast<double>(tokens_per_step_ * window_steps) / std::max(seconds, 1e-9);
            const nlohmann::ordered_json at = {{mllog_field::kSamplesCount, samples},
                                               {mllog_field::kStepNum, done}};
            const double mean_loss = window_loss / static_cast<double>(window_steps);
            log_->point_in_time(mllog_key::kTrainLoss, mean_loss, at);
            log_->point_in_time(mllog_key::kLearningRate, lr, at);
            log_->point_in_time(mllog_key::kGradNorm, grad_norm, at);
            log_->point_in_time(mllog_key::kTokensPerSecond, tokens_per_second, at);
            log_node_steps(at);
            warn_once_if_mllog_copy_failed();
            if (std::chrono::duration<double>(now - last_progress).count() >= options_.progress_interval_s ||
                done == total_steps_) {
                *progress_ << progress_line({done, total_steps_, mean_loss, lr, grad_norm, tokens_per_second,
                                             std::chrono::duration<double>(now - run_start).count()});
                last_progress = now;
            }
            window_loss = 0;
            window_steps = 0;
            window_start = now;
        }
        if (stop) {  // SIGTERM on some rank: save where we are, then stop everywhere
            *progress_ << "stop requested (SIGTERM): saving a checkpoint at step " << done << "\n";
            if (Status saved = checkpoint(done); !saved.ok())
                *progress_ << "warning: " << saved.message() << "\n";
            log_->interval_end(
                mllog_key::kRunStop, nullptr,
                {{mllog_field::kStatus, run_stop_status::kAborted}, {mllog_field::kStepNum, done}});
            report_.status = run_stop_status::kAborted;
            report_.interrupted = true;
            if (dist_) dist_->barrier();  // rank 0 hosts the store: it leaves after everyone has read it
            return report_;
        }
        if (has_validation_ && t_.eval_steps && done % *t_.eval_steps == 0) {
            evaluate_now(done, samples);
            if (target_reached_ && config_.eval.stop_at_target) {
                *progress_ << "target " << *config_.eval.target << " reached at step " << done << "\n";
                break;
            }
        }
        if (done % t_.save_steps == 0 && done < total_steps_) {
            const Status saved = checkpoint(done);
            if (!saved.ok()) *progress_ << "warning: " << saved.message() << "\n";  // training goes on
        }
        if (options_.stop_after_steps > 0 && done >= options_.stop_after_steps) {
            log_->interval_end(
                mllog_key::kRunStop, nullptr,
                {{mllog_field::kStatus, run_stop_status::kAborted}, {mllog_field::kStepNum, done}});
            report_.status = run_stop_status::kAborted;
            *progress_ << "stopped after step " << done << " (--stop-after-steps)\n";
            if (dist_) dist_->barrier();
            return report_;
        }
    }
    return finish();
}

Result<TrainReport> TrainingRun::finish() {
    if (device_.is_cuda()) {  // the training's peak, before the final evaluation and outputs
        if (const std::optional<model::GpuMemoryPeak> peak = model::gpu_memory_peak(device_.index())) {
            *progress_ << "peak GPU memory (" << device_.str() << "): " << peak->allocated_bytes
                       << " bytes allocated, " << peak->reserved_bytes << " bytes reserved\n";
        }
    }
    if (has_validation_ && last_eval_step_ != report_.steps)
        evaluate_now(report_.steps, report_.steps * global_batch_);
    report_.final_eval_loss = last_eval_.loss;
    const Status final_checkpoint = checkpoint(report_.steps);
    if (!final_checkpoint.ok()) *progress_ << "warning: " << final_checkpoint.message() << "\n";

    const Status saved = sharded()
                             ? save_sharded_outputs(*sharded_, config_, options_.engine_version, is_main())
                         : is_main() ? save_outputs(*llama_, config_, options_.engine_version, world_size())
                                     : Status::Ok();
    if (!saved.ok()) log_run_stop_failed(saved.message());
    if (dist_) {
        if (Status s = dist_->wait_for_main("saving the outputs", saved); !s.ok()) return s;
        dist_->barrier();  // rank 0 hosts the store: it leaves after everyone has read it
    } else if (!saved.ok()) {
        return saved;
    }
    report_.status =
        !config_.eval.target || target_reached_ ? run_stop_status::kSuccess : run_stop_status::kAborted;
    log_->interval_end(mllog_key::kRunStop, nullptr,
                       {{mllog_field::kStatus, report_.status}, {mllog_field::kStepNum, report_.steps}});
    if (const Status closed = log_->close_files(); !closed.ok() && !mllog_copy_failure_reported_)
        *progress_ << "warning: " << closed.message() << "\n";
    return report_;
}

void TrainingRun::attach_trackers(bool fresh) {
    // A tracker that fails warns once and stops; training and the MLLOG lines go on.
    trackers_ = std::make_unique<track::RunTrackers>(
        config_, [this](const std::string& message) { *progress_ << "warning: " << message << "\n"; }, fresh);
    for (const std::string& where : trackers_->destinations())
        *progress_ << "metrics also go to " << where << "\n";
    log_->add_listener([trackers = trackers_.get()](const MllogEvent& event) { trackers->on_event(event); });
}

void TrainingRun::warn_once_if_mllog_copy_failed() {
    if (mllog_copy_failure_reported_) return;
    if (const Status s = log_->file_status(); !s.ok()) {
        // Training goes on: the log on standard output (Slurm's slurm-N.out) still has every line.
        *progress_ << "warning: " << s.message() << "\n";
        mllog_copy_failure_reported_ = true;
    }
}

Result<TrainReport> TrainingRun::run() {
    if (Status s = connect_ranks(); !s.ok()) return s;
    if (Status s = setup(); !s.ok()) return s;
    return loop();
}

void TrainingRun::log_run_stop_failed(const std::string& message, const std::vector<int64_t>& lost_ranks) {
    if (!log_) return;  // only rank 0's writes anywhere
    MllogJson metadata = {{mllog_field::kStatus, run_stop_status::kFail},
                          {mllog_field::kStepNum, current_step_},
                          {mllog_field::kError, message}};
    if (!lost_ranks.empty()) {
        std::vector<std::string> nodes;
        for (const int64_t r : lost_ranks) {
            const std::string node =
                dist_ && static_cast<size_t>(r) < dist_->hosts().size() ? dist_->hosts()[r] : std::string();
            if (!node.empty() && std::find(nodes.begin(), nodes.end(), node) == nodes.end())
                nodes.push_back(node);
        }
        metadata[mllog_field::kLostRanks] = lost_ranks;
        metadata[mllog_field::kLostNodes] = nodes;
    }
    log_->interval_end(mllog_key::kRunStop, nullptr, metadata);
}

Status TrainingRun::stop_after(const std::exception& e) {
    if (dist_ && (dynamic_cast<const LostRank*>(&e) || dist::is_collective_failure(e))) return lost_peer(e);
    return fail(describe_exception(e));
}

Status TrainingRun::lost_peer(const std::exception& e) {
    // A failed wait for rank 0 already says what happened (and why, when rank 0 failed on its own).
    const std::string message = dynamic_cast<const LostRank*>(&e)
                                    ? std::string(e.what())
                                    : dist_->describe_failure(e.what(), current_step_);
    log_run_stop_failed(message, dist_->blamed_ranks());
    if (reducer_) reducer_->abandon();
    dist_->abandon();
    return Status::Error(StatusCode::kUnavailable, message);
}

Status TrainingRun::fail(const std::string& cause) {
    const std::string where =
        current_step_ > 0 ? "during step " + std::to_string(current_step_) : "before the first step";
    const std::string message =
        (dist_ ? "rank " + std::to_string(rank()) + " " : "") + "failed " + where + ": " + cause;
    log_run_stop_failed(message);
    if (dist_) {
        dist_->report_failure(message);
        // Collectives of this step may still be under way: the group cannot be destroyed.
        if (reducer_) reducer_->abandon();
        dist_->abandon();
    }
    return Status::Error(message);
}

}  // namespace

Result<TrainReport> train(const RunConfig& config, const TrainOptions& options, std::ostream& mllog,
                          std::ostream& progress) {
    const ConfigProblems problems = validate(config, validation_context_for(config));
    if (has_errors(problems)) return Status::Error("invalid run config:\n" + format_problems(problems));
    TrainingRun run(config, options, mllog, progress);
    try {
        return run.run();
    } catch (const std::exception& e) {
        return run.stop_after(e);
    } catch (...) {
        return run.fail("an exception that is not a std::exception");
    }
}

}  // namespace slipway::train
