// The field table of the run config (see run_config_schema.h): one row per field, with help text, range
// and how the editor labels and groups it, plus the generic helpers (type checks, "did you mean", markdown
// docs) that work off the table.
#include "contract/run_config_schema.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "contract/gpu_models.h"

namespace slipway {
namespace {

using ojson = nlohmann::ordered_json;

// JSON <-> member conversions for the handful of member types the config uses.
template <typename T>
ojson to_value(const T& v) {
    return ojson(v);
}
template <typename T>
ojson to_value(const std::optional<T>& v) {
    return v ? ojson(*v) : ojson(nullptr);
}
template <typename T>
void from_value(const nlohmann::json& j, T& out) {
    out = j.get<T>();
}
template <typename T>
void from_value(const nlohmann::json& j, std::optional<T>& out) {
    if (j.is_null()) {
        out.reset();
    } else {
        out = j.get<T>();
    }
}

// Chainable construction of one table row.
class Field {
public:
    Field(std::string section, std::string key, FieldType type, std::string help) {
        spec_.section = std::move(section);
        spec_.key = std::move(key);
        spec_.type = type;
        spec_.help = std::move(help);
    }
    Field& gt(double v) { return bound_min(v, true); }
    Field& ge(double v) { return bound_min(v, false); }
    Field& lt(double v) { return bound_max(v, true); }
    Field& le(double v) { return bound_max(v, false); }
    Field& one_of(std::vector<std::string> choices) {
        spec_.choices = std::move(choices);
        return *this;
    }
    Field& nullable() {
        spec_.nullable = true;
        return *this;
    }
    // The editor's label and the group of related fields it sits in on its page.
    Field& shown_as(std::string label, std::string group) {
        spec_.label = std::move(label);
        spec_.group = std::move(group);
        return *this;
    }
    // Folded behind the page's "Advanced" toggle until asked for (or until it holds a problem).
    Field& advanced() {
        spec_.advanced = true;
        return *this;
    }
    template <typename S, typename T>
    Field& member(S RunConfig::*section, T S::*m) {
        spec_.get = [section, m](const RunConfig& c) { return to_value(c.*section.*m); };
        spec_.set = [section, m](RunConfig& c, const nlohmann::json& j) { from_value(j, c.*section.*m); };
        return *this;
    }
    template <typename T>
    Field& top(T RunConfig::*m) {
        spec_.get = [m](const RunConfig& c) { return to_value(c.*m); };
        spec_.set = [m](RunConfig& c, const nlohmann::json& j) { from_value(j, c.*m); };
        return *this;
    }
    FieldSpec build() const { return spec_; }

private:
    Field& bound_min(double v, bool exclusive) {
        spec_.min = v;
        spec_.min_exclusive = exclusive;
        return *this;
    }
    Field& bound_max(double v, bool exclusive) {
        spec_.max = v;
        spec_.max_exclusive = exclusive;
        return *this;
    }
    FieldSpec spec_;
};

using FT = FieldType;
using RC = RunConfig;

std::vector<FieldSpec> build_fields() {
    std::vector<Field> f;
    auto add = [&f](Field field) -> Field& { return f.emplace_back(std::move(field)); };

    // Top level.
    add({"", "schema", FT::kString, "Schema tag of this document."})
        .shown_as("Schema", "Run")
        .advanced()
        .top(&RC::schema)
        .one_of({kRunConfigSchema});
    add({"", "name", FT::kString, "Run name: the Slurm job name and the run's name in the history."})
        .shown_as("Run name", "Run")
        .top(&RC::name);
    add({"", "comment", FT::kString, "Free text: where this config comes from, what it is for."})
        .shown_as("Description", "Run")
        .top(&RC::comment);

    // model
    add({"model", "path", FT::kString,
         "Hugging Face model folder (config.json + *.safetensors, optionally sharded with an index)."})
        .shown_as("Model folder", "Model")
        .member(&RC::model, &ModelConfig::path);
    add({"model", "dtype", FT::kString, "Storage dtype of the base weights (HF --torch_dtype)."})
        .shown_as("Weight precision", "Model")
        .member(&RC::model, &ModelConfig::dtype)
        .one_of({"float32", "bfloat16", "float16"});
    add({"model", "base_dtype", FT::kString,
         "dtype of the frozen base weights while training LoRA: auto is bfloat16 on GPUs with "
         "training.bf16 (half the weight memory, no cast per step; LoRA weights and optimizer stay fp32) "
         "and float32 elsewhere; float32 keeps every product as exact as an fp32 run."})
        .shown_as("Frozen base precision", "Model")
        .member(&RC::model, &ModelConfig::base_dtype)
        .one_of({"auto", "float32", "bfloat16"});
    add({"model", "init", FT::kString,
         "pretrained: load the weights in path; random: only path/config.json is read and the weights start "
         "from HF's random init with training.seed (training from scratch, e.g. the demo)."})
        .shown_as("Initial weights", "Model")
        .member(&RC::model, &ModelConfig::init)
        .one_of({"pretrained", "random"});

    // tokenizer
    add({"tokenizer", "path", FT::kString, "tokenizer.json; empty means <model.path>/tokenizer.json."})
        .shown_as("Tokenizer file", "Model")
        .member(&RC::tokenizer, &TokenizerConfig::path);

    // data
    add({"data", "train_file", FT::kString, "Training data: JSONL, one JSON object a line."})
        .shown_as("Training data", "Data")
        .member(&RC::data, &DataConfig::train_file);
    add({"data", "validation_file", FT::kString,
         "Validation data (JSONL); empty means split validation_split_percentage off train_file."})
        .shown_as("Validation data", "Data")
        .member(&RC::data, &DataConfig::validation_file);
    add({"data", "text_field", FT::kString, "Field of each JSONL object that holds the text."})
        .shown_as("Text field", "Data")
        .advanced()
        .member(&RC::data, &DataConfig::text_field);
    add({"data", "format", FT::kString,
         "What a line holds: text (text_field, every token trained), messages ({role, content} turns), "
         "sharegpt ({from, value} turns), alpaca (instruction/input/output); auto tells it from the first "
         "line. Conversations are rendered with the model's chat template."})
        .shown_as("Data format", "Data")
        .member(&RC::data, &DataConfig::format)
        .one_of({"auto", "text", "messages", "sharegpt", "alpaca"});
    add({"data", "train_on", FT::kString,
         "Conversations: which tokens are trained: assistant (every assistant turn through its end-of-turn "
         "marker), all, or last_assistant."})
        .shown_as("Train on", "Data")
        .member(&RC::data, &DataConfig::train_on)
        .one_of({"assistant", "all", "last_assistant"});
    add({"data", "chat_template", FT::kString,
         "Conversations: a Jinja chat template file; empty means the model's (tokenizer_config.json or "
         "chat_template.jinja)."})
        .shown_as("Chat template file", "Data")
        .advanced()
        .member(&RC::data, &DataConfig::chat_template);
    add({"data", "truncation", FT::kString,
         "Conversations longer than block_size: drop (counted), truncate_right (keep the start) or "
         "truncate_left (keep the end)."})
        .shown_as("Long conversations", "Preprocessing")
        .member(&RC::data, &DataConfig::truncation)
        .one_of({"drop", "truncate_right", "truncate_left"});
    add({"data", "packing", FT::kBool,
         "Conversations: pack several into each block (attention and positions restart at each one, so "
         "none sees another); off: one conversation a block, each batch cut to its longest."})
        .shown_as("Pack conversations", "Preprocessing")
        .member(&RC::data, &DataConfig::packing);
    add({"data", "block_size", FT::kInt, "Tokens per training sequence."})
        .shown_as("Sequence length", "Data")
        .member(&RC::data, &DataConfig::block_size)
        .ge(2)
        .le(1 << 20);
    add({"data", "split", FT::kString,
         "Where a block may start: document (a document start), paragraph (a document or paragraph "
         "start), concat (anywhere, like HF group_texts)."})
        .shown_as("Sequences start at", "Preprocessing")
        .member(&RC::data, &DataConfig::split)
        .one_of({"document", "paragraph", "concat"});
    add({"data", "validation_split_percentage", FT::kNumber,
         "Percent of train_file documents held out for validation when validation_file is empty."})
        .shown_as("Validation split", "Data")
        .member(&RC::data, &DataConfig::validation_split_percentage)
        .ge(0)
        .lt(100);
    add({"data", "dedup", FT::kBool, "Drop exact duplicate documents (normalized text hash)."})
        .shown_as("Drop duplicate documents", "Preprocessing")
        .member(&RC::data, &DataConfig::dedup);
    add({"data", "cache_dir", FT::kString, "Token cache folder; empty means <training.output_dir>/cache."})
        .shown_as("Token cache folder", "Preprocessing")
        .advanced()
        .member(&RC::data, &DataConfig::cache_dir);
    add({"data", "preprocessing_num_workers", FT::kInt, "Tokenizer threads; 0 means all cores."})
        .shown_as("Tokenizer threads", "Preprocessing")
        .advanced()
        .member(&RC::data, &DataConfig::preprocessing_num_workers)
        .ge(0)
        .le(4096);

    // training
    add({"training", "learning_rate", FT::kNumber, "Peak learning rate of AdamW."})
        .shown_as("Learning rate", "Optimizer")
        .member(&RC::training, &TrainingConfig::learning_rate)
        .gt(0)
        .le(1);
    add({"training", "weight_decay", FT::kNumber,
         "Decoupled weight decay (not applied to biases and norms)."})
        .shown_as("Weight decay", "Optimizer")
        .member(&RC::training, &TrainingConfig::weight_decay)
        .ge(0)
        .le(1);
    add({"training", "adam_beta1", FT::kNumber, "AdamW beta1."})
        .shown_as("Adam beta1", "Optimizer")
        .advanced()
        .member(&RC::training, &TrainingConfig::adam_beta1)
        .ge(0)
        .lt(1);
    add({"training", "adam_beta2", FT::kNumber, "AdamW beta2."})
        .shown_as("Adam beta2", "Optimizer")
        .advanced()
        .member(&RC::training, &TrainingConfig::adam_beta2)
        .ge(0)
        .lt(1);
    add({"training", "adam_epsilon", FT::kNumber, "AdamW epsilon."})
        .shown_as("Adam epsilon", "Optimizer")
        .advanced()
        .member(&RC::training, &TrainingConfig::adam_epsilon)
        .gt(0)
        .le(1);
    add({"training", "max_grad_norm", FT::kNumber, "Gradient clipping by global norm; 0 disables it."})
        .shown_as("Gradient clipping", "Optimizer")
        .member(&RC::training, &TrainingConfig::max_grad_norm)
        .ge(0);
    add({"training", "num_train_epochs", FT::kNumber,
         "Epochs over the training blocks (ignored with max_steps)."})
        .shown_as("Epochs", "Schedule")
        .member(&RC::training, &TrainingConfig::num_train_epochs)
        .gt(0)
        .le(1e6);
    add({"training", "max_steps", FT::kInt, "Optimizer steps; null means num_train_epochs decides."})
        .shown_as("Maximum steps", "Schedule")
        .member(&RC::training, &TrainingConfig::max_steps)
        .nullable()
        .ge(1);
    add({"training", "lr_scheduler_type", FT::kString, "Learning-rate schedule, as HF get_scheduler."})
        .shown_as("Learning-rate schedule", "Schedule")
        .member(&RC::training, &TrainingConfig::lr_scheduler_type)
        .one_of({"linear", "cosine", "constant", "constant_with_warmup"});
    add({"training", "warmup_steps", FT::kInt, "Linear warmup steps (use this or warmup_ratio)."})
        .shown_as("Warmup steps", "Schedule")
        .member(&RC::training, &TrainingConfig::warmup_steps)
        .ge(0);
    add({"training", "warmup_ratio", FT::kNumber,
         "Warmup as a share of all steps (use this or warmup_steps)."})
        .shown_as("Warmup share", "Schedule")
        .advanced()
        .member(&RC::training, &TrainingConfig::warmup_ratio)
        .ge(0)
        .lt(1);
    add({"training", "per_device_train_batch_size", FT::kInt, "Sequences per rank per micro-step."})
        .shown_as("Micro batch per device", "Batch")
        .member(&RC::training, &TrainingConfig::per_device_train_batch_size)
        .ge(1)
        .le(65536);
    add({"training", "per_device_eval_batch_size", FT::kInt, "Sequences per rank per eval step."})
        .shown_as("Eval batch per device", "Batch")
        .advanced()
        .member(&RC::training, &TrainingConfig::per_device_eval_batch_size)
        .ge(1)
        .le(65536);
    add({"training", "gradient_accumulation_steps", FT::kInt, "Micro-steps per optimizer step."})
        .shown_as("Gradient accumulation", "Batch")
        .member(&RC::training, &TrainingConfig::gradient_accumulation_steps)
        .ge(1)
        .le(65536);
    add({"training", "bf16", FT::kBool, "bf16 autocast with fp32 master weights."})
        .shown_as("bf16 mixed precision", "Precision and memory")
        .member(&RC::training, &TrainingConfig::bf16);
    add({"training", "seed", FT::kInt, "Seed of initialization, dropout and data order."})
        .shown_as("Random seed", "Schedule")
        .advanced()
        .member(&RC::training, &TrainingConfig::seed)
        .ge(0)
        .le(4294967295.0);
    add({"training", "logging_steps", FT::kInt, "Log train_loss, lr and throughput every N steps."})
        .shown_as("Log every", "Logging and checkpoints")
        .member(&RC::training, &TrainingConfig::logging_steps)
        .ge(1);
    add({"training", "eval_steps", FT::kInt, "Evaluate every N steps; null means only at the end."})
        .shown_as("Evaluate every", "Logging and checkpoints")
        .member(&RC::training, &TrainingConfig::eval_steps)
        .nullable()
        .ge(1);
    add({"training", "save_steps", FT::kInt, "Save a checkpoint every N steps (and at the end)."})
        .shown_as("Save a checkpoint every", "Logging and checkpoints")
        .member(&RC::training, &TrainingConfig::save_steps)
        .ge(1);
    add({"training", "save_total_limit", FT::kInt, "Keep at most N checkpoints; null keeps all."})
        .shown_as("Checkpoints kept", "Logging and checkpoints")
        .advanced()
        .member(&RC::training, &TrainingConfig::save_total_limit)
        .nullable()
        .ge(1);
    add({"training", "resume_from_checkpoint", FT::kString,
         "Checkpoint folder to resume from, or \"latest\" in output_dir; empty starts fresh."})
        .shown_as("Resume from", "Logging and checkpoints")
        .advanced()
        .member(&RC::training, &TrainingConfig::resume_from_checkpoint);
    add({"training", "output_dir", FT::kString, "Where checkpoints, the adapter or model, and mllog.txt go."})
        .shown_as("Output folder", "Logging and checkpoints")
        .member(&RC::training, &TrainingConfig::output_dir);
    add({"training", "overwrite_output_dir", FT::kBool, "Allow a non-empty output_dir to be overwritten."})
        .shown_as("Overwrite the output folder", "Logging and checkpoints")
        .advanced()
        .member(&RC::training, &TrainingConfig::overwrite_output_dir);
    add({"training", "gradient_checkpointing", FT::kBool,
         "Recompute activations in backward to save memory."})
        .shown_as("Gradient checkpointing", "Precision and memory")
        .member(&RC::training, &TrainingConfig::gradient_checkpointing);
    add({"training", "profile_steps", FT::kString,
         "A:B profiles optimizer steps A to B (1-based, inclusive): <output_dir>/profile/trace.json (a "
         "Chrome "
         "trace for Perfetto; GPU kernels through Kineto where the build has it) and a table of ms per step "
         "by category. Empty: off."})
        .shown_as("Profile steps", "Precision and memory")
        .member(&RC::training, &TrainingConfig::profile_steps);
    add({"training", "report_to", FT::kStringList,
         "Trackers the engine also writes the run's metrics to, as HF's --report_to: tensorboard (event "
         "files in logging_dir), mlflow (an MLflow file store run in <output_dir>/mlruns), all (every "
         "tracker the engine writes), none. The MLLOG lines are always written."})
        .shown_as("Report to", "Logging and checkpoints")
        .member(&RC::training, &TrainingConfig::report_to);
    add({"training", "logging_dir", FT::kString,
         "TensorBoard's folder for this run; empty means <output_dir>/runs/<name>, HF's layout."})
        .shown_as("TensorBoard folder", "Logging and checkpoints")
        .advanced()
        .member(&RC::training, &TrainingConfig::logging_dir);

    // adapter
    add({"adapter", "method", FT::kString,
         "What trains: lora (PEFT LoRA adapters), qlora (LoRA adapters on a base whose linear weights are "
         "stored as 4-bit NF4, bitsandbytes' format), embeddings (only embed_tokens and lm_head, the seeds' "
         "ruadapt step), full (every weight)."})
        .shown_as("What trains", "Method")
        .member(&RC::adapter, &AdapterConfig::method)
        .one_of({"lora", "qlora", "embeddings", "full"});
    add({"adapter", "r", FT::kInt, "LoRA rank."})
        .shown_as("LoRA rank", "LoRA")
        .member(&RC::adapter, &AdapterConfig::r)
        .ge(1)
        .le(65536);
    add({"adapter", "lora_alpha", FT::kNumber, "LoRA alpha: the update is scaled by alpha / r."})
        .shown_as("LoRA alpha", "LoRA")
        .member(&RC::adapter, &AdapterConfig::lora_alpha)
        .gt(0);
    add({"adapter", "lora_dropout", FT::kNumber, "Dropout on the LoRA input."})
        .shown_as("LoRA dropout", "LoRA")
        .member(&RC::adapter, &AdapterConfig::lora_dropout)
        .ge(0)
        .lt(1);
    add({"adapter", "target_modules", FT::kStringList,
         "Module names that get LoRA adapters (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, "
         "down_proj)."})
        .shown_as("Target modules", "LoRA")
        .member(&RC::adapter, &AdapterConfig::target_modules);
    add({"adapter", "modules_to_save", FT::kStringList,
         "Modules trained in full next to the adapters and saved with them (e.g. embed_tokens, lm_head)."})
        .shown_as("Modules trained in full", "Method")
        .member(&RC::adapter, &AdapterConfig::modules_to_save);
    add({"adapter", "rank_pattern", FT::kStringIntMap, "Per-module rank overrides: name pattern -> r."})
        .shown_as("Per-module ranks", "LoRA")
        .advanced()
        .member(&RC::adapter, &AdapterConfig::rank_pattern);
    add({"adapter", "alpha_pattern", FT::kStringNumberMap,
         "Per-module alpha overrides: name pattern -> alpha."})
        .shown_as("Per-module alphas", "LoRA")
        .advanced()
        .member(&RC::adapter, &AdapterConfig::alpha_pattern);
    add({"adapter", "use_rslora", FT::kBool, "Rank-stabilized LoRA: scale by alpha / sqrt(r)."})
        .shown_as("Rank-stabilized LoRA", "LoRA")
        .advanced()
        .member(&RC::adapter, &AdapterConfig::use_rslora);
    add({"adapter", "use_dora", FT::kBool, "Weight-decomposed LoRA (DoRA)."})
        .shown_as("DoRA", "LoRA")
        .advanced()
        .member(&RC::adapter, &AdapterConfig::use_dora);
    add({"adapter", "bnb_4bit_quant_type", FT::kString,
         "QLoRA: the 4-bit code of the frozen weights (nf4, as bitsandbytes; fp4 is not supported)."})
        .shown_as("4-bit code", "QLoRA")
        .advanced()
        .member(&RC::adapter, &AdapterConfig::bnb_4bit_quant_type)
        .one_of({"nf4"});
    add({"adapter", "bnb_4bit_use_double_quant", FT::kBool,
         "QLoRA: quantize the block scales again (8 bits in blocks of 256): about 0.37 bits less per "
         "weight."})
        .shown_as("Double quantization", "QLoRA")
        .member(&RC::adapter, &AdapterConfig::bnb_4bit_use_double_quant);
    add({"adapter", "bnb_4bit_compute_dtype", FT::kString,
         "QLoRA: the dtype the 4-bit weights are dequantized to for each product (bfloat16 on GPUs; float32 "
         "is faster on CPUs)."})
        .shown_as("Compute dtype", "QLoRA")
        .member(&RC::adapter, &AdapterConfig::bnb_4bit_compute_dtype)
        .one_of({"bfloat16", "float16", "float32"});

    // eval
    add({"eval", "metric", FT::kString,
         "What eval_accuracy reports: loss (lower is better, as MLPerf llama2_70b_lora) or token_accuracy."})
        .shown_as("Eval metric", "Evaluation")
        .member(&RC::eval, &EvalConfig::metric)
        .one_of({"loss", "token_accuracy"});
    add({"eval", "target", FT::kNumber, "Target of the metric (MLPerf llama2_70b_lora: 0.925); null = none."})
        .shown_as("Target value", "Evaluation")
        .member(&RC::eval, &EvalConfig::target)
        .nullable();
    add({"eval", "stop_at_target", FT::kBool, "Stop the run with success once the target is reached."})
        .shown_as("Stop at the target", "Evaluation")
        .member(&RC::eval, &EvalConfig::stop_at_target);
    add({"eval", "tasks", FT::kString,
         "Task file (slipway.eval/1: multiple choice, generation, perplexity; engine/eval/README.md) run on "
         "rank 0 "
         "at every evaluation; each metric is logged as eval_task. Empty = none."})
        .shown_as("Evaluation tasks", "Evaluation")
        .advanced()
        .member(&RC::eval, &EvalConfig::tasks);

    // distributed
    add({"distributed", "backend", FT::kString,
         "Collectives: auto (NCCL on GPUs, Gloo on CPUs), nccl, gloo."})
        .shown_as("Collectives backend", "Parallelism")
        .advanced()
        .member(&RC::distributed, &DistributedConfig::backend)
        .one_of({"auto", "nccl", "gloo"});
    add({"distributed", "bucket_mb", FT::kNumber, "Gradient bucket size in MiB (DDP's bucket_cap_mb)."})
        .shown_as("Gradient bucket size", "Parallelism")
        .advanced()
        .member(&RC::distributed, &DistributedConfig::bucket_mb)
        .gt(0)
        .le(4096);
    add({"distributed", "timeout_s", FT::kInt,
         "Seconds a rendezvous or collective may stall before every rank exits with an error."})
        .shown_as("Stall timeout", "Parallelism")
        .member(&RC::distributed, &DistributedConfig::timeout_s)
        .ge(1)
        .le(7 * 24 * 3600);
    add({"distributed", "sharding", FT::kString,
         "none: every rank holds the whole model (DDP); full: weights, gradients and optimizer state are "
         "split over the ranks, each decoder layer gathered only while it computes (FSDP full_shard, "
         "ZeRO-3), for models that do not fit on one device."})
        .shown_as("Sharding", "Parallelism")
        .member(&RC::distributed, &DistributedConfig::sharding)
        .one_of({"none", "full"});
    add({"distributed", "prefetch", FT::kString,
         "With sharding full: gather the next unit while the current one computes (two units in memory). "
         "auto: on with NCCL, off with Gloo (on CPUs the transfer competes with the computation for cores)."})
        .shown_as("Prefetch next unit", "Parallelism")
        .advanced()
        .member(&RC::distributed, &DistributedConfig::prefetch)
        .one_of({"auto", "on", "off"});

    // mlperf
    add({"mlperf", "benchmark", FT::kString,
         "MLPerf Training benchmark this run is a submission of; empty means no MLPerf logging. Set, the "
         "MLLOG carries every key the mlcommons compliance checker (training 4.0.0) requires."})
        .shown_as("MLPerf benchmark", "MLPerf submission")
        .member(&RC::mlperf, &MlperfConfig::benchmark)
        .one_of({"", "llama2_70b_lora"});
    add({"mlperf", "org", FT::kString, "submission_org: the organization that submits the result."})
        .shown_as("Organization", "MLPerf submission")
        .advanced()
        .member(&RC::mlperf, &MlperfConfig::org);
    add({"mlperf", "platform", FT::kString,
         "submission_platform: the system the run is on, e.g. 1xDGX-H100 (as in the system description)."})
        .shown_as("Platform", "MLPerf submission")
        .advanced()
        .member(&RC::mlperf, &MlperfConfig::platform);
    add({"mlperf", "division", FT::kString,
         "submission_division: closed (the reference model, optimizer and hyperparameter rules) or open."})
        .shown_as("Division", "MLPerf submission")
        .advanced()
        .member(&RC::mlperf, &MlperfConfig::division)
        .one_of({"closed", "open"});
    add({"mlperf", "status", FT::kString,
         "submission_status: onprem (available on premises), cloud, preview or research."})
        .shown_as("Availability", "MLPerf submission")
        .advanced()
        .member(&RC::mlperf, &MlperfConfig::status)
        .one_of({"onprem", "cloud", "preview", "research"});

    // slurm
    add({"slurm", "nodes", FT::kInt, "#SBATCH --nodes."})
        .shown_as("Nodes", "Nodes and GPUs")
        .member(&RC::slurm, &SlurmConfig::nodes)
        .ge(1)
        .le(100000);
    add({"slurm", "gpus_per_node", FT::kInt, "#SBATCH --gres=gpu:N; 0 trains on CPUs."})
        .shown_as("GPUs per node", "Nodes and GPUs")
        .member(&RC::slurm, &SlurmConfig::gpus_per_node)
        .ge(0)
        .le(64);
    add({"slurm", "gpu_type", FT::kString,
         "GPU model of the nodes: the planner reads its memory and peak FLOP/s from it (slipway-engine "
         "plan)."})
        .shown_as("GPU model", "Nodes and GPUs")
        .member(&RC::slurm, &SlurmConfig::gpu_type)
        .one_of(gpu_model_keys());
    add({"slurm", "ntasks_per_node", FT::kInt, "Ranks per node; null means one per GPU (1 without GPUs)."})
        .shown_as("Tasks per node", "Nodes and GPUs")
        .advanced()
        .member(&RC::slurm, &SlurmConfig::ntasks_per_node)
        .nullable()
        .ge(1)
        .le(1024);
    add({"slurm", "cpus_per_task", FT::kInt, "#SBATCH --cpus-per-task; null leaves it to Slurm."})
        .shown_as("CPUs per task", "Nodes and GPUs")
        .advanced()
        .member(&RC::slurm, &SlurmConfig::cpus_per_task)
        .nullable()
        .ge(1)
        .le(4096);
    add({"slurm", "time", FT::kString, "#SBATCH --time: minutes, [D-]HH:MM[:SS] or MM:SS (e.g. 4-23:59:59)."})
        .shown_as("Time limit", "Scheduling")
        .member(&RC::slurm, &SlurmConfig::time);
    add({"slurm", "partition", FT::kString, "#SBATCH --partition; empty = the cluster's default."})
        .shown_as("Partition", "Scheduling")
        .member(&RC::slurm, &SlurmConfig::partition);
    add({"slurm", "account", FT::kString, "#SBATCH --account; empty = none."})
        .shown_as("Account", "Scheduling")
        .member(&RC::slurm, &SlurmConfig::account);
    add({"slurm", "qos", FT::kString, "#SBATCH --qos; empty = none."})
        .shown_as("Quality of service", "Scheduling")
        .advanced()
        .member(&RC::slurm, &SlurmConfig::qos);
    add({"slurm", "exclusive", FT::kBool, "#SBATCH --exclusive."})
        .shown_as("Whole nodes only", "Scheduling")
        .advanced()
        .member(&RC::slurm, &SlurmConfig::exclusive);
    add({"slurm", "container_image", FT::kString,
         "Image for pyxis srun --container-image (an enroot .sqsh or a registry image); empty = bare srun."})
        .shown_as("Container image", "Container (pyxis)")
        .member(&RC::slurm, &SlurmConfig::container_image);
    add({"slurm", "container_mounts", FT::kStringList,
         "srun --container-mounts entries, \"src:dst[:flags]\"."})
        .shown_as("Container mounts", "Container (pyxis)")
        .member(&RC::slurm, &SlurmConfig::container_mounts);
    add({"slurm", "container_workdir", FT::kString, "srun --container-workdir."})
        .shown_as("Working folder in the container", "Container (pyxis)")
        .advanced()
        .member(&RC::slurm, &SlurmConfig::container_workdir);
    std::string extra_options;
    for (const std::string& option : slurm_extra_options())
        extra_options += (extra_options.empty() ? "--" : ", --") + option;
    add({"slurm", "extra", FT::kStringList,
         "Further #SBATCH directives, each \"--key=value\" or \"--flag\", of these options: " +
             extra_options + "."})
        .shown_as("More #SBATCH directives", "Scheduling")
        .advanced()
        .member(&RC::slurm, &SlurmConfig::extra);

    add({"slurm", "signal_lead_s", FT::kInt,
         "Seconds before the time limit at which Slurm signals the job (#SBATCH --signal=B:USR1@N): the "
         "engine finishes its step and saves a checkpoint. 0 sends no early signal."})
        .shown_as("Checkpoint before the time limit (s)", "Time limits and preemption")
        .advanced()
        .member(&RC::slurm, &SlurmConfig::signal_lead_s)
        .ge(0)
        .le(86400);
    add({"slurm", "auto_requeue", FT::kBool,
         "#SBATCH --requeue: a job stopped by its time limit (after the early signal's checkpoint) or "
         "preempted goes back to the queue and resumes from its newest checkpoint at the same data "
         "position."})
        .shown_as("Requeue and resume", "Time limits and preemption")
        .member(&RC::slurm, &SlurmConfig::auto_requeue);
    add({"slurm", "max_restarts", FT::kInt,
         "How many times an auto_requeue job requeues itself after its time limit's signal."})
        .shown_as("Most restarts", "Time limits and preemption")
        .advanced()
        .member(&RC::slurm, &SlurmConfig::max_restarts)
        .ge(0)
        .le(1000);

    // container
    add({"container", "base", FT::kString,
         "NGC PyTorch base image of the Dockerfile (torch is never reinstalled)."})
        .shown_as("NGC base image", "Image")
        .member(&RC::container, &ContainerConfig::base);
    add({"container", "apt_packages", FT::kStringList, "Debian/Ubuntu packages added to the image."})
        .shown_as("apt packages", "Image")
        .member(&RC::container, &ContainerConfig::apt_packages);
    add({"container", "pip_packages", FT::kStringList,
         "pip packages added to the image, pinned as name==version."})
        .shown_as("pip packages", "Image")
        .member(&RC::container, &ContainerConfig::pip_packages);
    add({"container", "env", FT::kStringStringMap, "Environment variables set in the image (no secrets)."})
        .shown_as("Environment variables", "Image")
        .advanced()
        .member(&RC::container, &ContainerConfig::env);
    add({"container", "build_engine", FT::kBool, "Build slipway-engine inside the image against its torch."})
        .shown_as("Build the engine in the image", "Image")
        .member(&RC::container, &ContainerConfig::build_engine);

    std::vector<FieldSpec> specs;
    specs.reserve(f.size());
    for (const Field& field : f)
        specs.push_back(field.build());
    return specs;
}

std::string format_number(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
}

bool is_integral(double v) {
    return std::isfinite(v) && v == std::floor(v);
}

}  // namespace

const char* field_type_name(FieldType type) {
    switch (type) {
        case FieldType::kBool:
            return "boolean";
        case FieldType::kInt:
            return "integer";
        case FieldType::kNumber:
            return "number";
        case FieldType::kString:
            return "string";
        case FieldType::kStringList:
            return "list of strings";
        case FieldType::kStringIntMap:
            return "object of integers";
        case FieldType::kStringNumberMap:
            return "object of numbers";
        case FieldType::kStringStringMap:
            return "object of strings";
    }
    return "?";
}

std::string FieldSpec::pointer() const {
    return section.empty() ? "/" + key : "/" + section + "/" + key;
}

std::string FieldSpec::range_text() const {
    if (!choices.empty()) {
        std::string text;
        for (size_t i = 0; i < choices.size(); ++i)  // an empty choice ("none") shows as ""
            text += (i == 0 ? "" : " | ") + (choices[i].empty() ? std::string("\"\"") : choices[i]);
        return text;
    }
    if (min && max) {
        return std::string(min_exclusive ? "(" : "[") + format_number(*min) + ", " + format_number(*max) +
               (max_exclusive ? ")" : "]");
    }
    if (min) return std::string(min_exclusive ? "> " : ">= ") + format_number(*min);
    if (max) return std::string(max_exclusive ? "< " : "<= ") + format_number(*max);
    return "";
}

const std::vector<FieldSpec>& run_config_fields() {
    static const std::vector<FieldSpec> fields = build_fields();
    return fields;
}

const std::vector<std::string>& run_config_sections() {
    static const std::vector<std::string> sections = [] {
        std::vector<std::string> out;
        for (const FieldSpec& f : run_config_fields()) {
            if (!f.section.empty() && std::find(out.begin(), out.end(), f.section) == out.end()) {
                out.push_back(f.section);
            }
        }
        return out;
    }();
    return sections;
}

const FieldSpec* find_field(const std::string& pointer) {
    for (const FieldSpec& f : run_config_fields()) {
        if (f.pointer() == pointer) return &f;
    }
    return nullptr;
}

std::string short_json(const nlohmann::json& value) {
    // Integral floats print as integers ("got -1", not "got -1.0").
    if (value.is_number_float() && is_integral(value.get<double>()) &&
        std::fabs(value.get<double>()) < 1e15) {
        return std::to_string(static_cast<int64_t>(value.get<double>()));
    }
    std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    return text;
}

std::string check_json_type(const FieldSpec& field, const nlohmann::json& value) {
    if (value.is_null()) {
        return field.nullable ? "" : "must be a " + std::string(field_type_name(field.type)) + ", got null";
    }
    auto all_of = [&value](auto predicate) { return std::all_of(value.begin(), value.end(), predicate); };
    bool ok = false;
    switch (field.type) {
        case FieldType::kBool:
            ok = value.is_boolean();
            break;
        case FieldType::kInt:
            ok = value.is_number_integer() || (value.is_number_float() && is_integral(value.get<double>()) &&
                                               std::fabs(value.get<double>()) < 9e15);
            break;
        case FieldType::kNumber:
            ok = value.is_number();
            break;
        case FieldType::kString:
            ok = value.is_string();
            break;
        case FieldType::kStringList:
            ok = value.is_array() && all_of([](const nlohmann::json& e) { return e.is_string(); });
            break;
        case FieldType::kStringIntMap:
            ok = value.is_object() && all_of([](const nlohmann::json& e) { return e.is_number_integer(); });
            break;
        case FieldType::kStringNumberMap:
            ok = value.is_object() && all_of([](const nlohmann::json& e) { return e.is_number(); });
            break;
        case FieldType::kStringStringMap:
            ok = value.is_object() && all_of([](const nlohmann::json& e) { return e.is_string(); });
            break;
    }
    if (ok) return "";
    return "must be a" + std::string(field.type == FieldType::kInt ? "n " : " ") +
           field_type_name(field.type) + ", got " + short_json(value);
}

std::string check_range(const FieldSpec& field, const nlohmann::json& value) {
    if (value.is_null()) return "";
    if (!field.choices.empty() && value.is_string()) {
        const std::string s = value.get<std::string>();
        if (std::find(field.choices.begin(), field.choices.end(), s) != field.choices.end()) return "";
        std::string message = "must be one of " + field.range_text() + ", got " + short_json(value);
        const std::string near = closest_match(s, field.choices);
        if (!near.empty()) message += " (did you mean \"" + near + "\"?)";
        return message;
    }
    if (!value.is_number()) return "";
    const double v = value.get<double>();
    if (!std::isfinite(v)) return "must be finite, got " + short_json(value);
    const bool below = field.min && (field.min_exclusive ? v <= *field.min : v < *field.min);
    const bool above = field.max && (field.max_exclusive ? v >= *field.max : v > *field.max);
    if (below) {
        return std::string("must be ") + (field.min_exclusive ? "> " : ">= ") + format_number(*field.min) +
               ", got " + short_json(value);
    }
    if (above) {
        return std::string("must be ") + (field.max_exclusive ? "< " : "<= ") + format_number(*field.max) +
               ", got " + short_json(value);
    }
    return "";
}

size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
            diagonal = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
        }
    }
    return row[b.size()];
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
    // Allow about one typo per four characters, at least two.
    const size_t limit = std::max<size_t>(2, word.size() / 4);
    std::string best;
    size_t best_distance = limit + 1;
    for (const std::string& c : candidates) {
        const size_t d = edit_distance(word, c);
        if (d < best_distance) {
            best = c;
            best_distance = d;
        }
    }
    return best;
}

std::string run_config_schema_markdown() {
    const RunConfig defaults;
    std::ostringstream out;
    out << "# Run config fields (schema \"" << kRunConfigSchema << "\")\n\n"
        << "Generated by `slipway-engine config schema`. Unknown fields are errors; null is allowed only "
           "where the type says so.\n";
    std::string section = "\x01";
    for (const FieldSpec& f : run_config_fields()) {
        if (f.section != section) {
            section = f.section;
            out << "\n## " << (section.empty() ? "top level" : section) << "\n\n"
                << "| field | type | default | range | meaning |\n|---|---|---|---|---|\n";
        }
        std::string type = field_type_name(f.type);
        if (f.nullable) type += " or null";
        std::string range = f.range_text();
        for (char& c : range) {
            if (c == '|') c = '/';  // keep the markdown table intact
        }
        out << "| `" << f.pointer() << "` | " << type << " | `" << short_json(f.get(defaults)) << "` | "
            << range << " | **" << f.label << ".** " << f.help << " |\n";
    }
    return out.str();
}

}  // namespace slipway
