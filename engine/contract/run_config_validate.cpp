// validate(): range and choice checks from the field table, required fields, and the cross-field rules
// of a run config (warmup, eval target, adapter method, model limits, Slurm and container values).
#include <algorithm>
#include <regex>

#include "contract/report_targets.h"
#include "contract/run_config.h"
#include "contract/run_config_schema.h"

namespace slipway {

const std::vector<std::string>& slurm_extra_options() {
    // clang-format off
    static const std::vector<std::string> options = {
        "constraint", "exclude", "nodelist", "reservation", "switches", "licenses", "network", "contiguous",
        "mem", "mem-per-cpu", "mem-per-gpu", "tmp", "gpu-bind", "gpu-freq", "cpu-freq", "hint", "distribution",
        "mem-bind", "sockets-per-node", "cores-per-socket", "threads-per-core", "spread-job", "use-min-nodes",
        "begin", "deadline", "dependency", "kill-on-invalid-dep", "hold", "time-min", "nice", "priority",
        "comment", "wckey", "mail-type", "mail-user"};
    // clang-format on
    return options;
}

namespace {

// Collects problems; one helper per kind of rule keeps validate() a flat list of rules.
class Checker {
public:
    void error(std::string pointer, std::string message) {
        problems.push_back({std::move(pointer), std::move(message), ConfigProblem::Severity::kError});
    }
    void warning(std::string pointer, std::string message) {
        problems.push_back({std::move(pointer), std::move(message), ConfigProblem::Severity::kWarning});
    }
    void require(const std::string& pointer, const std::string& value) {
        if (value.empty()) error(pointer, "is required");
    }
    void match(const std::string& pointer, const std::string& value, const std::regex& pattern,
               const std::string& what) {
        if (!value.empty() && !std::regex_match(value, pattern))
            error(pointer, what + ", got \"" + value + "\"");
    }
    ConfigProblems problems;
};

bool has_control_chars(const std::string& s) {
    return std::any_of(s.begin(), s.end(),
                       [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// Strings end up in shell scripts, #SBATCH lines and file names: no newlines or other control bytes
// (the free-text comment excepted).
void check_control_chars(const RunConfig& config, Checker& check) {
    for (const FieldSpec& f : run_config_fields()) {
        if (f.pointer() == "/comment") continue;
        const nlohmann::json value = f.get(config);
        auto inspect = [&](const std::string& pointer, const nlohmann::json& v) {
            if (v.is_string() && has_control_chars(v.get<std::string>())) {
                check.error(pointer, "must not contain control characters (newline, tab, ...)");
            }
        };
        if (value.is_string()) inspect(f.pointer(), value);
        if (value.is_array()) {
            for (size_t i = 0; i < value.size(); ++i)
                inspect(f.pointer() + "/" + std::to_string(i), value[i]);
        }
        if (value.is_object()) {
            for (const auto& [k, v] : value.items()) {
                if (has_control_chars(k))
                    check.error(f.pointer(), "keys must not contain control characters");
                inspect(f.pointer() + "/" + k, v);
            }
        }
    }
}

void check_ranges(const RunConfig& config, Checker& check) {
    for (const FieldSpec& f : run_config_fields()) {
        const std::string message = check_range(f, nlohmann::json(f.get(config)));
        if (!message.empty()) check.error(f.pointer(), message);
    }
}

void check_training(const RunConfig& config, Checker& check) {
    const TrainingConfig& t = config.training;
    check.require("/training/output_dir", t.output_dir);
    if (t.warmup_steps > 0 && t.warmup_ratio > 0) {
        check.error("/training/warmup_ratio", "set either warmup_steps (" + std::to_string(t.warmup_steps) +
                                                  ") or warmup_ratio, not both");
    }
    if (t.lr_scheduler_type == "constant" && (t.warmup_steps > 0 || t.warmup_ratio > 0)) {
        check.warning("/training/lr_scheduler_type",
                      "\"constant\" ignores warmup; use \"constant_with_warmup\" to warm up");
    }
    if (t.max_steps && t.warmup_steps > 0 && t.warmup_steps >= *t.max_steps) {
        check.error("/training/warmup_steps", "must be < max_steps (" + std::to_string(*t.max_steps) +
                                                  "), got " + std::to_string(t.warmup_steps));
    }
}

void check_data(const RunConfig& config, const ValidationContext& context, Checker& check) {
    check.require("/model/path", config.model.path);
    check.require("/data/train_file", config.data.train_file);
    check.require("/data/text_field", config.data.text_field);
    const bool has_validation =
        !config.data.validation_file.empty() || config.data.validation_split_percentage > 0;
    if (config.training.eval_steps && !has_validation) {
        check.error("/training/eval_steps",
                    "evaluation needs /data/validation_file or /data/validation_split_percentage > 0");
    }
    if (context.model_max_positions && config.data.block_size > *context.model_max_positions) {
        check.error("/data/block_size", "must be <= the model's max_position_embeddings (" +
                                            std::to_string(*context.model_max_positions) + "), got " +
                                            std::to_string(config.data.block_size));
    }
}

void check_eval(const RunConfig& config, Checker& check) {
    const EvalConfig& e = config.eval;
    if (e.target && !config.training.eval_steps) {
        check.error("/eval/target", "a target needs /training/eval_steps to be checked during the run");
    }
    if (e.stop_at_target && !e.target) check.error("/eval/stop_at_target", "needs /eval/target");
    if (e.target && e.metric == "token_accuracy" && (*e.target < 0 || *e.target > 1)) {
        check.error("/eval/target",
                    "token_accuracy is a share: must be in [0, 1], got " + short_json(*e.target));
    }
    if (!e.tasks.empty() && config.data.validation_file.empty() &&
        config.data.validation_split_percentage <= 0) {
        check.error("/eval/tasks",
                    "tasks run at each evaluation, which needs /data/validation_file or "
                    "/data/validation_split_percentage > 0");
    }
    if (e.target && e.metric == "loss" && *e.target <= 0) {
        check.error("/eval/target", "a loss target must be > 0, got " + short_json(*e.target));
    }
}

void check_adapter(const RunConfig& config, Checker& check) {
    const AdapterConfig& a = config.adapter;
    static const std::regex module_name("[A-Za-z0-9_.*\\[\\]-]+");
    // Fields of a method that is off would be silently ignored: say so instead.
    const RunConfig defaults;
    for (const FieldSpec& f : run_config_fields()) {
        if (f.section != "adapter" || f.key == "method" || f.get(config) == f.get(defaults)) continue;
        const bool qlora_field = f.key.rfind("bnb_4bit_", 0) == 0;
        if (qlora_field && a.method != "qlora") {
            check.error(f.pointer(), "is a QLoRA setting, but /adapter/method is \"" + a.method + "\"");
        } else if (!qlora_field && !a.uses_lora()) {
            check.error(f.pointer(), "is a LoRA setting, but /adapter/method is \"" + a.method + "\"");
        }
    }
    if (!a.uses_lora()) return;
    if (a.target_modules.empty())
        check.error("/adapter/target_modules", "LoRA needs at least one target module");
    auto check_names = [&](const std::string& pointer, const std::vector<std::string>& names) {
        for (size_t i = 0; i < names.size(); ++i) {
            check.match(pointer + "/" + std::to_string(i), names[i], module_name, "must be a module name");
            if (names[i].empty()) check.error(pointer + "/" + std::to_string(i), "must not be empty");
        }
    };
    check_names("/adapter/target_modules", a.target_modules);
    check_names("/adapter/modules_to_save", a.modules_to_save);
    for (const auto& [pattern, rank] : a.rank_pattern) {
        if (rank < 1)
            check.error("/adapter/rank_pattern/" + pattern, "must be >= 1, got " + std::to_string(rank));
    }
    for (const auto& [pattern, alpha] : a.alpha_pattern) {
        if (!(alpha > 0))
            check.error("/adapter/alpha_pattern/" + pattern, "must be > 0, got " + short_json(alpha));
    }
}

// A bf16 frozen base is the replicated LoRA path's: full and embeddings training update the base, and
// sharded units hold their own flat buffers.
void check_profile_steps(const RunConfig& config, Checker& check) {
    const std::string& range = config.training.profile_steps;
    if (range.empty()) return;
    std::smatch m;
    static const std::regex pattern("([0-9]{1,9}):([0-9]{1,9})");
    if (!std::regex_match(range, m, pattern) || std::stoll(m[1]) < 1 || std::stoll(m[1]) > std::stoll(m[2])) {
        check.error("/training/profile_steps",
                    "must be A:B with 1 <= A <= B (optimizer steps), got \"" + range + "\"");
    }
}

// HF's --report_to names; wandb is HF's too, but the engine does not write it.
void check_report_to(const RunConfig& config, Checker& check) {
    const std::vector<std::string>& targets = report_to_names();
    const std::vector<std::string>& report_to = config.training.report_to;
    for (size_t i = 0; i < report_to.size(); ++i) {
        const std::string& name = report_to[i];
        if (std::find(targets.begin(), targets.end(), name) != targets.end()) continue;
        std::string message = "must be tensorboard, mlflow, all or none, got \"" + name + "\"";
        const std::vector<std::string>& unwritten = report_to_unwritten();
        if (std::find(unwritten.begin(), unwritten.end(), name) != unwritten.end())
            message += " (the engine does not write " + name + " runs)";
        else if (const std::string near = closest_match(name, targets); !near.empty())
            message += " (did you mean \"" + near + "\"?)";
        check.error("/training/report_to/" + std::to_string(i), message);
    }
    const bool none = std::find(report_to.begin(), report_to.end(), "none") != report_to.end();
    if (none && report_to.size() > 1)
        check.error("/training/report_to", "\"none\" cannot be listed with other trackers");
}

void check_base_dtype(const RunConfig& config, Checker& check) {
    if (config.model.base_dtype != "bfloat16") return;
    if (config.adapter.method != "lora") {
        check.error("/model/base_dtype", "bfloat16 holds a frozen LoRA base; /adapter/method is \"" +
                                             config.adapter.method + "\" (use auto or float32)");
    } else if (config.distributed.sharding == "full") {
        check.error(
            "/model/base_dtype",
            "bfloat16 is not available with /distributed/sharding \"full\" yet (use auto or float32)");
    }
}

void check_distributed(const RunConfig& config, Checker& check) {
    if (config.distributed.backend == "nccl" && config.slurm.gpus_per_node == 0) {
        check.error("/distributed/backend",
                    "nccl needs GPUs, but /slurm/gpus_per_node is 0 (use gloo or auto)");
    }
}

// What the mlcommons compliance checker (training 4.0.0) demands of the log, checked before the run: a log
// that cannot pass is refused up front rather than after hours on a cluster.
void check_mlperf(const RunConfig& config, Checker& check) {
    const MlperfConfig& m = config.mlperf;
    if (!m.enabled()) return;
    check.require("/mlperf/org", m.org);
    check.require("/mlperf/platform", m.platform);
    if (m.benchmark != "llama2_70b_lora") return;
    if (m.division != "closed") {
        check.error("/mlperf/division",
                    "the training 4.0.0 rules accept llama2_70b_lora only in the closed division, got \"" +
                        m.division + "\"");
    }
    if (config.adapter.method != "lora") {
        check.error("/adapter/method", "llama2_70b_lora trains LoRA adapters: must be \"lora\", got \"" +
                                           config.adapter.method + "\"");
    } else if (config.adapter.r != 16) {
        check.error("/adapter/r", "llama2_70b_lora (closed) requires lora_rank 16, got " +
                                      std::to_string(config.adapter.r));
    }
    if (config.eval.metric != "loss") {
        check.error("/eval/metric",
                    "llama2_70b_lora reports the evaluation loss as eval_accuracy: must be \"loss\", got \"" +
                        config.eval.metric + "\"");
    }
    if (config.data.validation_file.empty() && config.data.validation_split_percentage <= 0) {
        check.error("/data/validation_file",
                    "an MLPerf log needs eval_accuracy: give a validation file or a split percentage > 0");
    }
}

void check_slurm(const RunConfig& config, Checker& check) {
    const SlurmConfig& s = config.slurm;
    if (s.ntasks_per_node && s.gpus_per_node > 0 && *s.ntasks_per_node != s.gpus_per_node) {
        check.error("/slurm/ntasks_per_node", "one rank per GPU: must equal gpus_per_node (" +
                                                  std::to_string(s.gpus_per_node) + ") or be null, got " +
                                                  std::to_string(*s.ntasks_per_node));
    }
    // sbatch --time forms: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S.
    static const std::regex slurm_time(
        "(\\d+)|(\\d+:\\d{1,2})|(\\d+:\\d{1,2}:\\d{1,2})|(\\d+-\\d+)|(\\d+-\\d+:\\d{1,2})|(\\d+-\\d+:\\d{1,2}"
        ":\\d{1,2})"
        "|(UNLIMITED|INFINITE)");
    check.require("/slurm/time", s.time);
    check.match("/slurm/time", s.time, slurm_time, "must be minutes, MM:SS, HH:MM:SS, D-HH or D-HH:MM[:SS]");
    static const std::regex slurm_name("[A-Za-z0-9_.,+-]+");
    check.match("/slurm/partition", s.partition, slurm_name, "must be a Slurm partition name");
    check.match("/slurm/account", s.account, slurm_name, "must be a Slurm account name");
    check.match("/slurm/qos", s.qos, slurm_name, "must be a Slurm QOS name");

    // Directives the renderer writes from dedicated fields may not be given again through extra.
    static const std::vector<std::pair<std::string, std::string>> owned = {
        {"job-name", "/name"},
        {"nodes", "/slurm/nodes"},
        {"ntasks-per-node", "/slurm/ntasks_per_node"},
        {"gres", "/slurm/gpus_per_node"},
        {"gpus-per-node", "/slurm/gpus_per_node"},
        {"cpus-per-task", "/slurm/cpus_per_task"},
        {"time", "/slurm/time"},
        {"partition", "/slurm/partition"},
        {"account", "/slurm/account"},
        {"qos", "/slurm/qos"},
        {"exclusive", "/slurm/exclusive"},
        {"signal", "/slurm/signal_lead_s"},
        {"requeue", "/slurm/auto_requeue"},
        {"no-requeue", "/slurm/auto_requeue"},
        {"output", "(set by Slipway: slurm-%j.out)"},
    };
    static const std::regex directive("--([a-z][a-z0-9-]*)(=[^\\s].*)?");
    for (size_t i = 0; i < s.extra.size(); ++i) {
        const std::string pointer = "/slurm/extra/" + std::to_string(i);
        std::smatch m;
        if (!std::regex_match(s.extra[i], m, directive)) {
            check.error(pointer,
                        "must be an #SBATCH option like \"--mail-type=END\", got \"" + s.extra[i] + "\"");
            continue;
        }
        const std::string name = m[1];
        const auto own =
            std::find_if(owned.begin(), owned.end(), [&](const auto& o) { return o.first == name; });
        if (own != owned.end()) {
            check.error(pointer, "--" + name + " is set from " + own->second + ", not through extra");
        } else if (const std::vector<std::string>& allowed = slurm_extra_options();
                   std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
            check.error(pointer, "--" + name +
                                     " is not passed through to sbatch (not on the allow-list of "
                                     "/slurm/extra in `slipway-engine config schema`)");
        }
    }
    if (s.auto_requeue && config.mlperf.enabled()) {
        check.warning(
            "/slurm/auto_requeue",
            "an MLPerf result is one uninterrupted run: a requeued run resumes (its log marks where) "
            "but is not a valid result");
    }
    static const std::regex mount("(/[^:,\\s]*):(/[^:,\\s]*)(:[a-z+]+)?");
    for (size_t i = 0; i < s.container_mounts.size(); ++i) {
        check.match("/slurm/container_mounts/" + std::to_string(i), s.container_mounts[i], mount,
                    "must be \"/src:/dst[:flags]\" with absolute paths and no commas");
        if (s.container_mounts[i].empty())
            check.error("/slurm/container_mounts/" + std::to_string(i), "is empty");
    }
    static const std::regex absolute_path("/.*");
    check.match("/slurm/container_workdir", s.container_workdir, absolute_path, "must be an absolute path");
    static const std::regex no_space("[^\\s,]+");
    check.match("/slurm/container_image", s.container_image, no_space, "must not contain spaces or commas");
    if (!s.container_image.empty() && s.container_workdir.empty()) {
        check.warning("/slurm/container_workdir",
                      "empty: the job starts in the image's own working directory");
    }
}

void check_container(const RunConfig& config, Checker& check) {
    const ContainerConfig& c = config.container;
    static const std::regex image("[a-z0-9][a-z0-9._/:@-]*");
    check.require("/container/base", c.base);
    check.match("/container/base", c.base, image,
                "must be an image reference like nvcr.io/nvidia/pytorch:24.04-py3");
    static const std::regex apt_name("[a-z0-9][a-z0-9+.-]*(=[A-Za-z0-9.+:~-]+)?");
    for (size_t i = 0; i < c.apt_packages.size(); ++i) {
        check.match("/container/apt_packages/" + std::to_string(i), c.apt_packages[i], apt_name,
                    "must be a Debian package name[=version]");
    }
    static const std::regex pinned(
        "([A-Za-z0-9][A-Za-z0-9._-]*)(\\[[A-Za-z0-9,._-]+\\])?==[A-Za-z0-9.+!_-]+");
    // The NGC image's torch is built for its CUDA and NCCL; reinstalling it breaks the image (seed 000).
    static const std::vector<std::string> image_owned = {"torch", "torchvision", "torchaudio",
                                                         "nvidia-nccl-cu12"};
    for (size_t i = 0; i < c.pip_packages.size(); ++i) {
        const std::string pointer = "/container/pip_packages/" + std::to_string(i);
        std::smatch m;
        if (!std::regex_match(c.pip_packages[i], m, pinned)) {
            check.error(pointer, "must be pinned as name==version, got \"" + c.pip_packages[i] + "\"");
            continue;
        }
        std::string name = m[1];
        std::transform(name.begin(), name.end(), name.begin(), ::tolower);
        if (std::find(image_owned.begin(), image_owned.end(), name) != image_owned.end()) {
            check.error(pointer, name + " comes with the NGC base image and must not be reinstalled");
        }
    }
    static const std::regex env_name("[A-Za-z_][A-Za-z0-9_]*");
    for (const auto& [name, value] : c.env) {
        const std::string pointer = "/container/env/" + name;
        check.match(pointer, name, env_name, "must be an environment variable name");
        if (is_secret_env_name(name)) {
            check.error(pointer,
                        "looks like a secret: secrets never go into a run config (keep them in the "
                        "cluster's environment or the system keychain)");
        }
    }
}

}  // namespace

bool is_secret_env_name(const std::string& name) {
    std::vector<std::string> words(1);
    for (char c : name) {
        if (c == '_') {
            words.emplace_back();
        } else {
            words.back() += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        }
    }
    static const std::vector<std::string> secret_words = {"TOKEN",  "SECRET", "SECRETS",    "PASSWORD",
                                                          "PASSWD", "APIKEY", "CREDENTIAL", "CREDENTIALS"};
    static const std::vector<std::string> key_owners = {"API", "PRIVATE", "ACCESS", "SECRET"};
    for (size_t i = 0; i < words.size(); ++i) {
        if (std::find(secret_words.begin(), secret_words.end(), words[i]) != secret_words.end()) return true;
        if (words[i] == "KEY" && i > 0 &&
            std::find(key_owners.begin(), key_owners.end(), words[i - 1]) != key_owners.end())
            return true;
    }
    return false;
}

ConfigProblems validate(const RunConfig& config, const ValidationContext& context) {
    Checker check;
    if (config.name.empty()) check.error("/name", "is required");
    if (config.name.size() > 128) check.error("/name", "must be at most 128 characters");
    check_control_chars(config, check);
    check_ranges(config, check);
    check_data(config, context, check);
    check_training(config, check);
    check_eval(config, check);
    check_adapter(config, check);
    check_base_dtype(config, check);
    check_profile_steps(config, check);
    check_report_to(config, check);
    check_distributed(config, check);
    check_mlperf(config, check);
    check_slurm(config, check);
    check_container(config, check);
    return check.problems;
}

}  // namespace slipway
