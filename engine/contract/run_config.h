// RunConfig: the typed form of the run config JSON (schema "slipway.run/1"), the one document that
// describes a training run completely. The app writes it, the engine reads it, and it is exported so a
// run can be repeated exactly. Field names follow HF TrainingArguments / PEFT LoraConfig. Defaults live
// here; the documentation, ranges and JSON mapping of every field live in run_config_schema.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/status.h"

namespace slipway {

inline constexpr const char* kRunConfigSchema = "slipway.run/1";

struct ModelConfig {
    std::string path;                 // HF folder: config.json + *.safetensors [+ index]
    std::string dtype = "bfloat16";   // float32 | bfloat16 | float16: storage dtype of the base weights
    std::string init = "pretrained";  // pretrained | random (from config.json only, seeded)
    // auto | float32 | bfloat16: the dtype the frozen base weights are held in while training (auto:
    // bfloat16 for LoRA on a GPU under bf16, HF's recipe; float32 otherwise)
    std::string base_dtype = "auto";
};

struct TokenizerConfig {
    std::string path;  // tokenizer.json; empty = <model.path>/tokenizer.json
};

struct DataConfig {
    std::string train_file;       // JSONL, one object a line
    std::string validation_file;  // JSONL; empty = split validation_split_percentage off train_file
    std::string text_field = "text";
    std::string format = "auto";         // auto | text | messages | sharegpt | alpaca
    std::string train_on = "assistant";  // conversations: assistant | all | last_assistant
    std::string chat_template;           // conversations: a template file; empty = the model's
    std::string truncation = "drop";  // conversations over block_size: drop | truncate_left | truncate_right
    bool packing = true;  // conversations: several a block, attention kept within each; false: one a block
    int64_t block_size = 1024;
    std::string split = "document";  // document | paragraph | concat: where a block may start
    double validation_split_percentage = 5.0;
    bool dedup = false;
    std::string cache_dir;                  // empty = <output_dir>/cache
    int64_t preprocessing_num_workers = 0;  // 0 = all cores
};

struct TrainingConfig {
    double learning_rate = 5e-5;
    double weight_decay = 0.0;
    double adam_beta1 = 0.9;
    double adam_beta2 = 0.999;
    double adam_epsilon = 1e-8;
    double max_grad_norm = 1.0;
    double num_train_epochs = 3.0;
    std::optional<int64_t> max_steps;  // overrides num_train_epochs when set
    std::string lr_scheduler_type = "linear";
    int64_t warmup_steps = 0;
    double warmup_ratio = 0.0;
    int64_t per_device_train_batch_size = 8;
    int64_t per_device_eval_batch_size = 8;
    int64_t gradient_accumulation_steps = 1;
    bool bf16 = false;
    int64_t seed = 42;
    int64_t logging_steps = 10;
    std::optional<int64_t> eval_steps;  // null = evaluate only at the end
    int64_t save_steps = 500;
    std::optional<int64_t> save_total_limit;  // null = keep every checkpoint
    std::string resume_from_checkpoint;       // empty = start fresh; a path, or "latest"
    std::string output_dir = "output";
    bool overwrite_output_dir = false;
    bool gradient_checkpointing = false;
    std::string profile_steps;  // "A:B": profile optimizer steps A..B (1-based, inclusive); empty: off
    std::vector<std::string> report_to = {"tensorboard"};  // tensorboard | none | all, as HF's --report_to
    std::string logging_dir;  // TensorBoard's folder; empty: <output_dir>/runs/<name>
};

struct AdapterConfig {
    std::string method = "lora";  // lora | qlora | embeddings | full
    int64_t r = 8;
    double lora_alpha = 8.0;
    double lora_dropout = 0.0;
    std::vector<std::string> target_modules = {"q_proj", "v_proj"};
    std::vector<std::string> modules_to_save;
    std::map<std::string, int64_t> rank_pattern;
    std::map<std::string, double> alpha_pattern;
    bool use_rslora = false;
    bool use_dora = false;
    // QLoRA (method qlora): the frozen linear weights as bitsandbytes' 4-bit codes.
    std::string bnb_4bit_quant_type = "nf4";
    bool bnb_4bit_use_double_quant = true;
    std::string bnb_4bit_compute_dtype = "bfloat16";

    bool uses_lora() const { return method == "lora" || method == "qlora"; }
};

struct EvalConfig {
    std::string metric = "loss";  // loss (lower is better) | token_accuracy (higher is better)
    std::optional<double> target;
    bool stop_at_target = false;
    std::string tasks;  // task file (engine/eval/README.md) run at every evaluation; "" = none
};

struct DistributedConfig {
    std::string backend = "auto";  // auto | nccl | gloo
    double bucket_mb = 25.0;
    int64_t timeout_s = 600;
    // none: every rank holds the whole model (DDP); full: parameters, gradients and optimizer state are
    // sharded over the ranks one decoder layer at a time (ZeRO-3, FSDP's FULL_SHARD).
    std::string sharding = "none";
    // With sharding full: start the next unit's all-gather while the current one computes. auto: on NCCL
    // (GPUs compute while the network moves bytes), off on Gloo (CPU ranks have no core to spare for it).
    std::string prefetch = "auto";
};

// MLPerf Training submission logging (mlcommons/logging, training ruleset 4.0.0). With a benchmark set,
// the MLLOG carries every key the compliance checker requires (submission_*, cache_clear, blocks, ...).
struct MlperfConfig {
    std::string benchmark;            // "" = no MLPerf logging | llama2_70b_lora
    std::string org;                  // submission_org: the submitting organization
    std::string platform;             // submission_platform: the system, e.g. 1xDGX-H100
    std::string division = "closed";  // closed | open
    std::string status = "onprem";    // onprem | cloud | preview | research

    bool enabled() const { return !benchmark.empty(); }
};

struct SlurmConfig {
    int64_t nodes = 1;
    int64_t gpus_per_node = 1;
    std::string gpu_type = "h100-80gb";      // a key of gpu_models(): memory and peak FLOPs for the planner
    std::optional<int64_t> ntasks_per_node;  // null = one task per GPU (or 1 without GPUs)
    std::optional<int64_t> cpus_per_task;
    std::string time = "01:00:00";
    std::string partition;
    std::string account;
    std::string qos;
    bool exclusive = false;
    std::string container_image;                // .sqsh or registry image for pyxis; empty = bare srun
    std::vector<std::string> container_mounts;  // "src:dst[:flags]"
    std::string container_workdir;
    std::vector<std::string> extra;  // further "--key=value" #SBATCH directives, from slurm_extra_options()
    // Time limits and preemption: Slurm signals the batch script this many seconds before the time limit
    // (--signal=B:USR1@N; 0: no early signal); the engine then finishes its step and checkpoints.
    int64_t signal_lead_s = 120;
    // --requeue: after such a stop (or a preemption) the job goes back to the queue and resumes from its
    // newest checkpoint, up to max_restarts times.
    bool auto_requeue = false;
    int64_t max_restarts = 3;
};

// The sbatch options (names without "--") that /slurm/extra passes through: where, when and with what the
// job runs, and whom it tells. Not on it: options Slipway sets from other fields, and those that would
// move or hide the log that follow and fetch read (--chdir, --error, --input, --open-mode), drop the
// environment srun's tasks need, the rendezvous secret included (--export), or run one run folder twice
// (--array).
const std::vector<std::string>& slurm_extra_options();

struct ContainerConfig {
    std::string base = "nvcr.io/nvidia/pytorch:24.04-py3";
    std::vector<std::string> apt_packages;
    std::vector<std::string> pip_packages;  // pinned: name==version
    std::map<std::string, std::string> env;
    bool build_engine = true;
};

struct RunConfig {
    std::string schema = kRunConfigSchema;
    std::string name = "run";
    std::string comment;
    ModelConfig model;
    TokenizerConfig tokenizer;
    DataConfig data;
    TrainingConfig training;
    AdapterConfig adapter;
    EvalConfig eval;
    DistributedConfig distributed;
    MlperfConfig mlperf;
    SlurmConfig slurm;
    ContainerConfig container;

    // Derived values.
    int64_t tasks_per_node() const;
    int64_t world_size() const;          // nodes x tasks per node
    int64_t global_batch_size() const;   // per-device batch x accumulation x world size
    int64_t tokens_per_step() const;     // global batch x block_size
    bool eval_higher_is_better() const;  // token_accuracy: yes; loss: no
};

// One problem found in a run config: where (JSON pointer) and what.
struct ConfigProblem {
    enum class Severity { kError, kWarning };
    std::string pointer;
    std::string message;
    Severity severity = Severity::kError;

    bool is_error() const { return severity == Severity::kError; }
    std::string to_string() const;  // "/training/learning_rate: must be > 0, got -1"
};
using ConfigProblems = std::vector<ConfigProblem>;

bool has_errors(const ConfigProblems& problems);
std::string format_problems(const ConfigProblems& problems);  // one per line

// What validation may know beyond the config itself.
struct ValidationContext {
    std::optional<int64_t> model_max_positions;  // from <model.path>/config.json when readable
};

// Reads <model.path>/config.json if it is there; silently empty otherwise (the model may be remote).
ValidationContext validation_context_for(const RunConfig& config);

// JSON -> RunConfig. Type errors and unknown keys become problems; defaults fill what is absent.
struct ParsedRunConfig {
    RunConfig config;
    ConfigProblems problems;
};
ParsedRunConfig parse_run_config(const nlohmann::json& document);

// Environment variable names that hold secrets, judged by their _-separated words: HF_TOKEN and
// WANDB_API_KEY are, TOKENIZERS_PARALLELISM is not. Such values go neither into a run config nor an image.
bool is_secret_env_name(const std::string& name);

// Range, choice and cross-field checks. Returns every problem, not just the first.
ConfigProblems validate(const RunConfig& config, const ValidationContext& context = {});

// RunConfig -> JSON with every field, in the stable order of the schema.
nlohmann::ordered_json to_json(const RunConfig& config);

// File helpers: parse + validate; the error lists every problem, prefixed with the file name.
Result<RunConfig> load_run_config(const std::string& path);
Status save_run_config(const RunConfig& config, const std::string& path);

// Reads and parses a JSON file; the error names the file and the line/column of a syntax error.
Result<nlohmann::json> read_json_file(const std::string& path);

// A run config document from `path`: a run config, or the run.json a finished run writes
// ({"engine_version", "world_size", "config": {...}}), whose config is returned so a run repeats exactly.
Result<nlohmann::json> read_run_document(const std::string& path);

}  // namespace slipway
