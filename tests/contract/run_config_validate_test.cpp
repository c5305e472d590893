// Table-driven validate() cases: each bad config must produce exactly the expected pointer and message,
// and a valid config must produce none.
#include <gtest/gtest.h>

#include <functional>

#include "contract/run_config.h"

namespace slipway {
namespace {

RunConfig valid_config() {
    RunConfig c;
    c.model.path = "/models/llama";
    c.data.train_file = "train.jsonl";
    return c;
}

// A valid MLPerf llama2_70b_lora submission on top of valid_config().
void as_mlperf_submission(RunConfig& c) {
    c.mlperf.benchmark = "llama2_70b_lora";
    c.mlperf.org = "Slipway";
    c.mlperf.platform = "1xDGX-H100";
    c.adapter.r = 16;
}

struct Case {
    std::string label;
    std::function<void(RunConfig&)> mutate;
    std::string pointer;
    std::string message;
    ConfigProblem::Severity severity = ConfigProblem::Severity::kError;
};

// A case that breaks one thing of a valid MLPerf submission.
Case mlperf_case(std::string label, std::function<void(RunConfig&)> mutate, std::string pointer,
                 std::string message) {
    return Case{std::move(label),
                [mutate](RunConfig& c) {
                    as_mlperf_submission(c);
                    mutate(c);
                },
                std::move(pointer), std::move(message)};
}

std::ostream& operator<<(std::ostream& os, const Case& c) {
    return os << c.label;
}

class Validate : public testing::TestWithParam<Case> {};

TEST_P(Validate, ReportsExactlyTheExpectedProblem) {
    RunConfig config = valid_config();
    GetParam().mutate(config);
    const ConfigProblems problems = validate(config);
    ASSERT_EQ(problems.size(), 1u) << format_problems(problems);
    EXPECT_EQ(problems[0].pointer, GetParam().pointer);
    EXPECT_EQ(problems[0].message, GetParam().message);
    EXPECT_EQ(problems[0].severity, GetParam().severity);
}

const auto kWarning = ConfigProblem::Severity::kWarning;

INSTANTIATE_TEST_SUITE_P(
    RunConfig, Validate,
    testing::Values(
        // Ranges from the field table.
        Case{"lr_negative", [](RunConfig& c) { c.training.learning_rate = -1; }, "/training/learning_rate",
             "must be > 0, got -1"},
        Case{"lr_too_big", [](RunConfig& c) { c.training.learning_rate = 3; }, "/training/learning_rate",
             "must be <= 1, got 3"},
        Case{"beta2_one", [](RunConfig& c) { c.training.adam_beta2 = 1.0; }, "/training/adam_beta2",
             "must be < 1, got 1"},
        Case{"batch_zero", [](RunConfig& c) { c.training.per_device_train_batch_size = 0; },
             "/training/per_device_train_batch_size", "must be >= 1, got 0"},
        Case{"block_size_one", [](RunConfig& c) { c.data.block_size = 1; }, "/data/block_size",
             "must be >= 2, got 1"},
        Case{"max_steps_zero", [](RunConfig& c) { c.training.max_steps = 0; }, "/training/max_steps",
             "must be >= 1, got 0"},
        Case{"dropout_one", [](RunConfig& c) { c.adapter.lora_dropout = 1.0; }, "/adapter/lora_dropout",
             "must be < 1, got 1"},
        Case{"scheduler_typo", [](RunConfig& c) { c.training.lr_scheduler_type = "cosin"; },
             "/training/lr_scheduler_type",
             "must be one of linear | cosine | constant | constant_with_warmup, got \"cosin\" (did you mean "
             "\"cosine\"?)"},
        Case{"dtype_unknown", [](RunConfig& c) { c.model.dtype = "int8"; }, "/model/dtype",
             "must be one of float32 | bfloat16 | float16, got \"int8\""},
        Case{"schema_other", [](RunConfig& c) { c.schema = "slipway.run/2"; }, "/schema",
             "must be one of slipway.run/1, got \"slipway.run/2\" (did you mean \"slipway.run/1\"?)"},
        Case{"nan_lr", [](RunConfig& c) { c.training.learning_rate = std::nan(""); },
             "/training/learning_rate", "must be finite, got null"},
        // Required fields.
        Case{"no_model", [](RunConfig& c) { c.model.path.clear(); }, "/model/path", "is required"},
        Case{"no_train_file", [](RunConfig& c) { c.data.train_file.clear(); }, "/data/train_file",
             "is required"},
        Case{"no_name", [](RunConfig& c) { c.name.clear(); }, "/name", "is required"},
        Case{"newline_in_path", [](RunConfig& c) { c.data.train_file = "a\nrm -rf /"; }, "/data/train_file",
             "must not contain control characters (newline, tab, ...)"},
        // Cross-field rules.
        Case{"warmup_both",
             [](RunConfig& c) {
                 c.training.warmup_steps = 100;
                 c.training.warmup_ratio = 0.1;
             },
             "/training/warmup_ratio", "set either warmup_steps (100) or warmup_ratio, not both"},
        Case{"warmup_beyond_max_steps",
             [](RunConfig& c) {
                 c.training.warmup_steps = 100;
                 c.training.max_steps = 50;
             },
             "/training/warmup_steps", "must be < max_steps (50), got 100"},
        Case{"constant_with_warmup_steps",
             [](RunConfig& c) {
                 c.training.lr_scheduler_type = "constant";
                 c.training.warmup_steps = 10;
             },
             "/training/lr_scheduler_type",
             "\"constant\" ignores warmup; use \"constant_with_warmup\" to warm up", kWarning},
        Case{"target_without_eval_steps", [](RunConfig& c) { c.eval.target = 0.925; }, "/eval/target",
             "a target needs /training/eval_steps to be checked during the run"},
        Case{"stop_without_target", [](RunConfig& c) { c.eval.stop_at_target = true; },
             "/eval/stop_at_target", "needs /eval/target"},
        Case{"accuracy_target_above_one",
             [](RunConfig& c) {
                 c.eval.metric = "token_accuracy";
                 c.eval.target = 1.5;
                 c.training.eval_steps = 10;
             },
             "/eval/target", "token_accuracy is a share: must be in [0, 1], got 1.5"},
        Case{"eval_without_validation_data",
             [](RunConfig& c) {
                 c.training.eval_steps = 10;
                 c.data.validation_split_percentage = 0;
             },
             "/training/eval_steps",
             "evaluation needs /data/validation_file or /data/validation_split_percentage > 0"},
        Case{"tasks_without_validation_data",
             [](RunConfig& c) {
                 c.eval.tasks = "tasks.json";
                 c.data.validation_split_percentage = 0;
             },
             "/eval/tasks",
             "tasks run at each evaluation, which needs /data/validation_file or "
             "/data/validation_split_percentage > 0"},
        Case{"lora_field_with_full",
             [](RunConfig& c) {
                 c.adapter.method = "full";
                 c.adapter.r = 64;
             },
             "/adapter/r", "is a LoRA setting, but /adapter/method is \"full\""},
        Case{"lora_modules_with_embeddings",
             [](RunConfig& c) {
                 c.adapter.method = "embeddings";
                 c.adapter.target_modules = {"q_proj", "k_proj"};
             },
             "/adapter/target_modules", "is a LoRA setting, but /adapter/method is \"embeddings\""},
        Case{"lora_without_targets", [](RunConfig& c) { c.adapter.target_modules.clear(); },
             "/adapter/target_modules", "LoRA needs at least one target module"},
        Case{"bad_module_name",
             [](RunConfig& c) {
                 c.adapter.target_modules = {"q_proj", "v proj"};
             },
             "/adapter/target_modules/1", "must be a module name, got \"v proj\""},
        Case{"rank_pattern_zero",
             [](RunConfig& c) {
                 c.adapter.rank_pattern = {{"q_proj", 0}};
             },
             "/adapter/rank_pattern/q_proj", "must be >= 1, got 0"},
        Case{"nccl_on_cpu",
             [](RunConfig& c) {
                 c.distributed.backend = "nccl";
                 c.slurm.gpus_per_node = 0;
             },
             "/distributed/backend", "nccl needs GPUs, but /slurm/gpus_per_node is 0 (use gloo or auto)"},
        Case{"tasks_not_one_per_gpu",
             [](RunConfig& c) {
                 c.slurm.gpus_per_node = 8;
                 c.slurm.ntasks_per_node = 4;
             },
             "/slurm/ntasks_per_node", "one rank per GPU: must equal gpus_per_node (8) or be null, got 4"},
        Case{"bad_time", [](RunConfig& c) { c.slurm.time = "2 days"; }, "/slurm/time",
             "must be minutes, MM:SS, HH:MM:SS, D-HH or D-HH:MM[:SS], got \"2 days\""},
        Case{"partition_injection", [](RunConfig& c) { c.slurm.partition = "gpu;rm"; }, "/slurm/partition",
             "must be a Slurm partition name, got \"gpu;rm\""},
        Case{"extra_not_option", [](RunConfig& c) { c.slurm.extra = {"mail-type=END"}; }, "/slurm/extra/0",
             "must be an #SBATCH option like \"--mail-type=END\", got \"mail-type=END\""},
        Case{"extra_owned_directive", [](RunConfig& c) { c.slurm.extra = {"--nodes=4"}; }, "/slurm/extra/0",
             "--nodes is set from /slurm/nodes, not through extra"},
        // Time limits and preemption have fields of their own: the sbatch script's trap and resume go with
        // them.
        Case{"extra_signal", [](RunConfig& c) { c.slurm.extra = {"--signal=B:USR1@60"}; }, "/slurm/extra/0",
             "--signal is set from /slurm/signal_lead_s, not through extra"},
        Case{"extra_requeue",
             [](RunConfig& c) {
                 c.slurm.extra = {"--mail-type=END", "--requeue"};
             },
             "/slurm/extra/1", "--requeue is set from /slurm/auto_requeue, not through extra"},
        Case{"signal_lead_negative", [](RunConfig& c) { c.slurm.signal_lead_s = -1; }, "/slurm/signal_lead_s",
             "must be >= 0, got -1"},
        // An allow-list, not a block-list: options that would move the log follow and fetch read, drop the
        // job's environment (the rendezvous secret) or run the run folder twice are refused.
        Case{"extra_chdir",
             [](RunConfig& c) {
                 c.slurm.extra = {"--mail-type=END", "--chdir=/tmp"};
             },
             "/slurm/extra/1",
             "--chdir is not passed through to sbatch (not on the allow-list of /slurm/extra in "
             "`slipway-engine config schema`)"},
        Case{"extra_error_log", [](RunConfig& c) { c.slurm.extra = {"--error=/dev/null"}; }, "/slurm/extra/0",
             "--error is not passed through to sbatch (not on the allow-list of /slurm/extra in "
             "`slipway-engine config schema`)"},
        Case{"extra_export", [](RunConfig& c) { c.slurm.extra = {"--export=NONE"}; }, "/slurm/extra/0",
             "--export is not passed through to sbatch (not on the allow-list of /slurm/extra in "
             "`slipway-engine config schema`)"},
        Case{"extra_array", [](RunConfig& c) { c.slurm.extra = {"--array=1-4"}; }, "/slurm/extra/0",
             "--array is not passed through to sbatch (not on the allow-list of /slurm/extra in "
             "`slipway-engine config schema`)"},
        Case{"mount_relative", [](RunConfig& c) { c.slurm.container_mounts = {"data:/data"}; },
             "/slurm/container_mounts/0",
             "must be \"/src:/dst[:flags]\" with absolute paths and no commas, got "
             "\"data:/data\""},
        Case{"image_without_workdir", [](RunConfig& c) { c.slurm.container_image = "/scratch/img.sqsh"; },
             "/slurm/container_workdir", "empty: the job starts in the image's own working directory",
             kWarning},
        Case{"pip_unpinned", [](RunConfig& c) { c.container.pip_packages = {"peft"}; },
             "/container/pip_packages/0", "must be pinned as name==version, got \"peft\""},
        Case{"pip_reinstalls_torch", [](RunConfig& c) { c.container.pip_packages = {"torch==2.3.0"}; },
             "/container/pip_packages/0", "torch comes with the NGC base image and must not be reinstalled"},
        Case{"apt_injection", [](RunConfig& c) { c.container.apt_packages = {"vim && curl evil"}; },
             "/container/apt_packages/0",
             "must be a Debian package name[=version], got \"vim && curl evil\""},
        Case{"secret_in_env",
             [](RunConfig& c) {
                 c.container.env = {{"HF_TOKEN", "hf_abc"}};
             },
             "/container/env/HF_TOKEN",
             "looks like a secret: secrets never go into a run config (keep them in the cluster's "
             "environment or "
             "the system keychain)"},
        // MLPerf: what the compliance checker (training 4.0.0) will demand of the log.
        mlperf_case(
            "mlperf_unknown_benchmark", [](RunConfig& c) { c.mlperf.benchmark = "llama2-70b-lora"; },
            "/mlperf/benchmark",
            "must be one of \"\" | llama2_70b_lora, got \"llama2-70b-lora\" (did you mean "
            "\"llama2_70b_lora\"?)"),
        Case{"mlperf_requeued",
             [](RunConfig& c) {
                 as_mlperf_submission(c);
                 c.slurm.auto_requeue = true;
             },
             "/slurm/auto_requeue",
             "an MLPerf result is one uninterrupted run: a requeued run resumes (its log marks where) but is "
             "not a valid result",
             kWarning},
        mlperf_case(
            "mlperf_no_org", [](RunConfig& c) { c.mlperf.org.clear(); }, "/mlperf/org", "is required"),
        mlperf_case(
            "mlperf_no_platform", [](RunConfig& c) { c.mlperf.platform.clear(); }, "/mlperf/platform",
            "is required"),
        mlperf_case(
            "mlperf_status_unknown", [](RunConfig& c) { c.mlperf.status = "available"; }, "/mlperf/status",
            "must be one of onprem | cloud | preview | research, got \"available\""),
        mlperf_case(
            "mlperf_open_llama", [](RunConfig& c) { c.mlperf.division = "open"; }, "/mlperf/division",
            "the training 4.0.0 rules accept llama2_70b_lora only in the closed division, got \"open\""),
        mlperf_case(
            "mlperf_rank_8", [](RunConfig& c) { c.adapter.r = 8; }, "/adapter/r",
            "llama2_70b_lora (closed) requires lora_rank 16, got 8"),
        mlperf_case(
            "mlperf_full_training",
            [](RunConfig& c) {
                c.adapter = AdapterConfig{};
                c.adapter.method = "full";
            },
            "/adapter/method", "llama2_70b_lora trains LoRA adapters: must be \"lora\", got \"full\""),
        mlperf_case(
            "mlperf_token_accuracy", [](RunConfig& c) { c.eval.metric = "token_accuracy"; }, "/eval/metric",
            "llama2_70b_lora reports the evaluation loss as eval_accuracy: must be \"loss\", got "
            "\"token_accuracy\""),
        mlperf_case(
            "mlperf_no_validation", [](RunConfig& c) { c.data.validation_split_percentage = 0; },
            "/data/validation_file",
            "an MLPerf log needs eval_accuracy: give a validation file or a split percentage > 0")),
    [](const testing::TestParamInfo<Case>& info) { return info.param.label; });

TEST(Validate, ValidConfigHasNoProblems) {
    EXPECT_TRUE(validate(valid_config()).empty()) << format_problems(validate(valid_config()));
}

TEST(Validate, MlperfSubmissionIsValid) {
    RunConfig c = valid_config();
    as_mlperf_submission(c);
    EXPECT_TRUE(validate(c).empty()) << format_problems(validate(c));
    // Without a benchmark the other MLPerf fields are not looked at.
    c.mlperf = MlperfConfig{};
    c.mlperf.division = "open";
    EXPECT_TRUE(validate(c).empty()) << format_problems(validate(c));
}

TEST(Validate, SecretNamesAreJudgedByWholeWords) {
    for (const char* secret :
         {"HF_TOKEN", "WANDB_API_KEY", "AWS_SECRET_ACCESS_KEY", "db_password", "GH_OAUTH_TOKEN"})
        EXPECT_TRUE(is_secret_env_name(secret)) << secret;
    for (const char* plain :
         {"TOKENIZERS_PARALLELISM", "HF_HOME", "NCCL_DEBUG", "KEYBOARD", "MAX_TOKENS_PER_STEP"})
        EXPECT_FALSE(is_secret_env_name(plain)) << plain;
    RunConfig c = valid_config();
    c.container.env = {{"TOKENIZERS_PARALLELISM", "false"}};
    EXPECT_TRUE(validate(c).empty()) << format_problems(validate(c));
}

TEST(Validate, ReturnsAllProblemsNotJustTheFirst) {
    RunConfig c = valid_config();
    c.training.learning_rate = 0;
    c.training.adam_beta1 = 2;
    c.adapter.r = 0;
    c.slurm.time = "soon";
    const ConfigProblems problems = validate(c);
    EXPECT_EQ(problems.size(), 4u) << format_problems(problems);
    EXPECT_TRUE(has_errors(problems));
}

TEST(Validate, BlockSizeAgainstModelMaxPositions) {
    RunConfig c = valid_config();
    c.data.block_size = 8192;
    ValidationContext context;
    context.model_max_positions = 4096;
    const ConfigProblems problems = validate(c, context);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].to_string(),
              "/data/block_size: must be <= the model's max_position_embeddings (4096), got 8192");
    c.data.block_size = 4096;
    EXPECT_TRUE(validate(c, context).empty());
}

TEST(Validate, WarningsDoNotCountAsErrors) {
    RunConfig c = valid_config();
    c.slurm.container_image = "/scratch/img.sqsh";
    const ConfigProblems problems = validate(c);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_FALSE(has_errors(problems));
    EXPECT_EQ(
        problems[0].to_string(),
        "/slurm/container_workdir: warning: empty: the job starts in the image's own working directory");
}

}  // namespace
}  // namespace slipway
