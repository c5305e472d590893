// The flag table of hf_flags.h and the argparse-like parser that applies it to a RunConfig.
#include "contract/hf_flags.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>

#include "contract/report_targets.h"
#include "contract/run_config_schema.h"
#include "contract/utf8.h"

namespace slipway {
namespace {

// How a flag's text value lands in the config: set a field by pointer, or run a custom action.
struct FlagRule {
    HfFlag doc;
    bool takes_value = true;    // false: bare flag, optionally followed by a boolean word
    std::string field_pointer;  // non-empty: direct mapping onto this field
    // Custom action; returns an error message or "". May append notes.
    std::function<std::string(RunConfig&, const std::string&, std::vector<std::string>&)> apply;
};

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

bool is_bool_word(const std::string& s) {
    static const std::vector<std::string> words = {"true", "false", "1", "0", "yes", "no"};
    return std::find(words.begin(), words.end(), lower(s)) != words.end();
}

std::string parse_bool(const std::string& s, bool& out) {
    const std::string v = lower(s);
    if (v == "true" || v == "1" || v == "yes") {
        out = true;
    } else if (v == "false" || v == "0" || v == "no") {
        out = false;
    } else {
        return "expected true or false, got \"" + s + "\"";
    }
    return "";
}

std::vector<std::string> split_list(const std::string& s) {
    // The seed passes lists as "q_proj,v_proj" and "None" for no list.
    std::vector<std::string> out;
    if (s.empty() || s == "None" || s == "none") return out;
    size_t start = 0;
    while (start <= s.size()) {
        const size_t comma = s.find(',', start);
        const std::string item =
            s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!item.empty()) out.push_back(item);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

// Text -> JSON of the field's type, then through the same type check as a JSON config.
std::string set_field_from_text(RunConfig& config, const std::string& pointer, const std::string& text) {
    const FieldSpec* field = find_field(pointer);
    if (field == nullptr) return "internal: no field " + pointer;
    nlohmann::json value;
    if (field->nullable && (text == "None" || text == "none" || text == "null")) {
        value = nullptr;
    } else {
        switch (field->type) {
            case FieldType::kBool: {
                bool b = false;
                const std::string error = parse_bool(text, b);
                if (!error.empty()) return error;
                value = b;
                break;
            }
            case FieldType::kInt:
            case FieldType::kNumber: {
                try {
                    size_t used = 0;
                    const double d = std::stod(text, &used);
                    if (used != text.size()) throw std::invalid_argument(text);
                    // HF uses -1 for "unset" in max_steps and similar.
                    if (field->nullable && d == -1) {
                        value = nullptr;
                    } else if (field->type == FieldType::kInt) {
                        if (!(std::fabs(d) < 9e15) || d != std::floor(d)) {
                            return "expected an integer, got \"" + text + "\"";
                        }
                        value = static_cast<int64_t>(d);
                    } else {
                        value = d;
                    }
                } catch (const std::exception&) {
                    return "expected a number, got \"" + text + "\"";
                }
                break;
            }
            case FieldType::kString:
                value = text;
                break;
            case FieldType::kStringList:
                value = split_list(text);
                break;
            default:
                return "cannot be set from a flag";
        }
    }
    const std::string type_error = check_json_type(*field, value);
    if (!type_error.empty()) return type_error;
    field->set(config, value);
    return "";
}

std::string load_pattern_file(RunConfig& config, const std::string& path, const std::string& pointer) {
    Result<nlohmann::json> json = read_json_file(path);
    if (!json.ok()) return json.error();
    const FieldSpec* field = find_field(pointer);
    const std::string type_error = check_json_type(*field, *json);
    if (!type_error.empty()) return path + ": " + type_error;
    field->set(config, *json);
    return "";
}

std::vector<FlagRule> build_rules() {
    std::vector<FlagRule> rules;
    auto direct = [&rules](std::string name, std::string pointer, std::string help) {
        const FieldSpec* field = find_field(pointer);
        FlagRule rule{{name, pointer, std::move(help)}, field->type != FieldType::kBool, pointer, nullptr};
        rules.push_back(std::move(rule));
    };
    auto custom = [&rules](std::string name, std::string target, std::string help, bool takes_value,
                           decltype(FlagRule::apply) apply) {
        rules.push_back(
            {{std::move(name), std::move(target), std::move(help)}, takes_value, "", std::move(apply)});
    };
    auto ignored = [&custom](std::string name, std::string why, bool takes_value) {
        custom(name, "(no effect)", why, takes_value,
               [name, why](RunConfig&, const std::string&, std::vector<std::string>& notes) {
                   notes.push_back("--" + name + " ignored: " + why);
                   return std::string();
               });
    };
    auto unsupported = [&custom](std::string name, std::string why, bool takes_value) {
        custom(name, "(unsupported)", why, takes_value,
               [why](RunConfig&, const std::string&, std::vector<std::string>&) { return why; });
    };

    direct("model_name_or_path", "/model/path", "HF model folder.");
    direct("tokenizer_name", "/tokenizer/path", "tokenizer.json (or a folder with one).");
    direct("train_file", "/data/train_file", "Training JSONL.");
    direct("validation_file", "/data/validation_file", "Validation JSONL.");
    direct("block_size", "/data/block_size", "Tokens per sequence.");
    direct("validation_split_percentage", "/data/validation_split_percentage",
           "Held-out percent of train_file.");
    direct("preprocessing_num_workers", "/data/preprocessing_num_workers", "Tokenizer threads.");
    direct("output_dir", "/training/output_dir", "Output folder.");
    direct("overwrite_output_dir", "/training/overwrite_output_dir", "Allow overwriting output_dir.");
    direct("learning_rate", "/training/learning_rate", "Peak learning rate.");
    custom("report_to", "/training/report_to",
           "Trackers the metrics also go to: tensorboard, mlflow, all, none.", true,
           [](RunConfig& c, const std::string& v, std::vector<std::string>& notes) {
               // A seed script's wandb must not stop its import: kept are the trackers the engine writes; a
               // list of only others gets TensorBoard, the nearest the engine has.
               const std::vector<std::string> names = split_list(v);
               const std::vector<std::string>& written = report_to_names();
               c.training.report_to.clear();
               for (const std::string& name : names) {
                   if (std::find(written.begin(), written.end(), name) != written.end())
                       c.training.report_to.push_back(name);
                   else
                       notes.push_back("--report_to " + name + " ignored: the engine does not write " + name +
                                       " runs (its metrics go to mllog.txt and TensorBoard)");
               }
               if (c.training.report_to.empty())
                   c.training.report_to.push_back(names.empty() ? "none" : "tensorboard");
               return std::string();
           });
    direct("logging_dir", "/training/logging_dir", "TensorBoard's folder.");
    direct("ddp_timeout", "/distributed/timeout_s", "Seconds a collective may wait for a rank.");
    direct("ddp_backend", "/distributed/backend", "auto | nccl | gloo.");
    direct("ddp_bucket_cap_mb", "/distributed/bucket_mb", "Gradient bucket size in MiB.");
    direct("weight_decay", "/training/weight_decay", "AdamW weight decay.");
    direct("adam_beta1", "/training/adam_beta1", "AdamW beta1.");
    direct("adam_beta2", "/training/adam_beta2", "AdamW beta2.");
    direct("adam_epsilon", "/training/adam_epsilon", "AdamW epsilon.");
    direct("max_grad_norm", "/training/max_grad_norm", "Gradient clipping norm.");
    direct("profile_steps", "/training/profile_steps",
           "A:B: profile optimizer steps A to B (trace + table).");
    direct("num_train_epochs", "/training/num_train_epochs", "Epochs.");
    direct("max_steps", "/training/max_steps", "Optimizer steps (-1: use epochs).");
    direct("lr_scheduler_type", "/training/lr_scheduler_type", "Schedule.");
    direct("warmup_steps", "/training/warmup_steps", "Warmup steps.");
    direct("warmup_ratio", "/training/warmup_ratio", "Warmup share.");
    direct("per_device_train_batch_size", "/training/per_device_train_batch_size", "Micro batch per rank.");
    direct("per_device_eval_batch_size", "/training/per_device_eval_batch_size", "Eval batch per rank.");
    direct("gradient_accumulation_steps", "/training/gradient_accumulation_steps", "Micro-steps per step.");
    direct("bf16", "/training/bf16", "bf16 mixed precision.");
    direct("seed", "/training/seed", "Random seed.");
    direct("logging_steps", "/training/logging_steps", "Log every N steps.");
    direct("eval_steps", "/training/eval_steps", "Evaluate every N steps.");
    direct("save_steps", "/training/save_steps", "Checkpoint every N steps.");
    direct("save_total_limit", "/training/save_total_limit", "Checkpoints kept.");
    direct("resume_from_checkpoint", "/training/resume_from_checkpoint", "Resume from a checkpoint.");
    direct("gradient_checkpointing", "/training/gradient_checkpointing", "Activation recomputation.");
    direct("lora_rank", "/adapter/r", "LoRA rank (the seed's name for r).");
    direct("lora_alpha", "/adapter/lora_alpha", "LoRA alpha.");
    direct("lora_dropout", "/adapter/lora_dropout", "LoRA dropout.");
    direct("trainable", "/adapter/target_modules", "Comma-separated LoRA target modules (the seed's name).");
    direct("modules_to_save", "/adapter/modules_to_save",
           "Comma-separated modules trained in full; None = none.");
    direct("use_dora", "/adapter/use_dora", "DoRA.");
    direct("use_rslora", "/adapter/use_rslora", "rsLoRA.");
    direct("bnb_4bit_quant_type", "/adapter/bnb_4bit_quant_type", "4-bit code (nf4).");
    direct("bnb_4bit_use_double_quant", "/adapter/bnb_4bit_use_double_quant", "Double quantization.");
    direct("bnb_4bit_compute_dtype", "/adapter/bnb_4bit_compute_dtype", "QLoRA compute dtype.");

    custom("peft", "/adapter/method", "True: LoRA; False: embeddings-only (the seed's \"ruadapt default\").",
           false, [](RunConfig& c, const std::string& v, std::vector<std::string>&) {
               bool peft = true;
               const std::string error = parse_bool(v, peft);
               if (!error.empty()) return error;
               // --load_in_4bit may come first: LoRA on the 4-bit base stays QLoRA.
               if (!peft || c.adapter.method != "qlora") c.adapter.method = peft ? "lora" : "embeddings";
               return std::string();
           });
    custom("load_in_4bit", "/adapter/method", "True: QLoRA (LoRA on a 4-bit NF4 base).", false,
           [](RunConfig& c, const std::string& v, std::vector<std::string>&) {
               bool four_bit = false;
               const std::string error = parse_bool(v, four_bit);
               if (!error.empty()) return error;
               if (four_bit) c.adapter.method = "qlora";
               if (!four_bit && c.adapter.method == "qlora") c.adapter.method = "lora";
               return std::string();
           });
    custom("torch_dtype", "/model/dtype", "bfloat16 | float16 | float32 (auto keeps the config's dtype).",
           true, [](RunConfig& c, const std::string& v, std::vector<std::string>& notes) {
               if (v == "auto") {
                   notes.push_back("--torch_dtype auto: keeping /model/dtype \"" + c.model.dtype + "\"");
                   return std::string();
               }
               std::string error = set_field_from_text(c, "/model/dtype", v);
               if (!error.empty()) return error;
               // HF loads the base in this dtype: fp32 stays fp32; bf16 is /model/base_dtype auto's choice
               // wherever a frozen LoRA base trains on GPUs under bf16 (full training keeps fp32 masters).
               if (v == "float32") {
                   c.model.base_dtype = "float32";
               } else {
                   c.model.base_dtype = "auto";
                   notes.push_back(
                       "--torch_dtype " + v +
                       ": /model/base_dtype auto (a frozen LoRA base in bfloat16 on GPUs under bf16)");
               }
               return std::string();
           });
    auto strategy = [](const std::string& what) {
        return [what](RunConfig& c, const std::string& v, std::vector<std::string>& notes) {
            if (v == "steps") return std::string();
            if (v == "no") {
                if (what == "eval") c.training.eval_steps.reset();
                if (what == "save")
                    notes.push_back("--save_strategy no: a checkpoint is still saved at the end");
                return std::string();
            }
            return "only \"steps\" and \"no\" are supported, got \"" + v + "\"";
        };
    };
    custom(
        "fsdp", "/distributed/sharding",
        "full_shard (optionally with auto_wrap / offload words): full; empty or no: none.", true,
        [](RunConfig& c, const std::string& v, std::vector<std::string>& notes) {
            // HF takes a space-separated list of options; only the sharding strategy matters here.
            std::vector<std::string> words;
            for (size_t start = 0; start < v.size();) {
                const size_t space = v.find(' ', start);
                const std::string word =
                    v.substr(start, space == std::string::npos ? std::string::npos : space - start);
                if (!word.empty()) words.push_back(lower(word));
                if (space == std::string::npos) break;
                start = space + 1;
            }
            std::string sharding = "none";
            for (const std::string& word : words) {
                if (word == "full_shard") {
                    sharding = "full";
                } else if (word == "auto_wrap") {
                    notes.push_back("--fsdp auto_wrap: the engine always wraps one decoder layer per unit");
                } else if (word == "no" || word == "false") {
                } else {
                    return "only full_shard (with auto_wrap) is supported, got \"" + word + "\"";
                }
            }
            c.distributed.sharding = sharding;
            return std::string();
        });
    custom("evaluation_strategy", "/training/eval_steps", "steps | no.", true, strategy("eval"));
    custom("eval_strategy", "/training/eval_steps", "steps | no (newer HF name).", true, strategy("eval"));
    custom("save_strategy", "/training/save_steps", "steps | no.", true, strategy("save"));
    custom("rank_pattern_path", "/adapter/rank_pattern", "JSON file of per-module ranks.", true,
           [](RunConfig& c, const std::string& v, std::vector<std::string>&) {
               return load_pattern_file(c, v, "/adapter/rank_pattern");
           });
    custom("alpha_pattern_path", "/adapter/alpha_pattern", "JSON file of per-module alphas.", true,
           [](RunConfig& c, const std::string& v, std::vector<std::string>&) {
               return load_pattern_file(c, v, "/adapter/alpha_pattern");
           });

    ignored("do_train", "training always runs", false);
    ignored("do_eval", "evaluation runs when eval_steps or a validation set is given", false);
    ignored("log_on_each_node", "only rank 0 logs", true);
    ignored("bf16_full_eval", "eval follows /training/bf16", false);
    ignored("overwrite_cache", "the token cache is keyed by a hash of every input", false);
    ignored("ddp_find_unused_parameters", "the engine reduces only trainable parameters", true);
    ignored("low_cpu_mem_usage", "weights are memory-mapped", false);
    unsupported("fp16", "fp16 training is not supported: use --bf16", false);
    unsupported("dataset_name", "datasets are not downloaded: give --train_file (JSONL)", true);
    unsupported("deepspeed", "DeepSpeed is not used: the engine does its own data parallelism", true);
    return rules;
}

const std::vector<FlagRule>& rules() {
    static const std::vector<FlagRule> table = build_rules();
    return table;
}

// Exact name, else a unique prefix (argparse's allow_abbrev).
const FlagRule* find_rule(const std::string& name, std::string& error) {
    std::vector<const FlagRule*> prefixed;
    for (const FlagRule& r : rules()) {
        if (r.doc.name == name) return &r;
        if (r.doc.name.compare(0, name.size(), name) == 0) prefixed.push_back(&r);
    }
    if (prefixed.size() == 1) return prefixed.front();
    if (prefixed.size() > 1) {
        error = "--" + name + ": ambiguous, could be";
        for (const FlagRule* r : prefixed)
            error += " --" + r->doc.name;
        return nullptr;
    }
    std::vector<std::string> names;
    for (const FlagRule& r : rules())
        names.push_back(r.doc.name);
    const std::string near = closest_match(name, names);
    error = "--" + name + ": unknown flag" + (near.empty() ? "" : " (did you mean --" + near + "?)");
    return nullptr;
}

}  // namespace

const std::vector<HfFlag>& hf_flags() {
    static const std::vector<HfFlag> docs = [] {
        std::vector<HfFlag> out;
        for (const FlagRule& r : rules())
            out.push_back(r.doc);
        return out;
    }();
    return docs;
}

std::string hf_flag_for(const std::string& pointer) {
    for (const FlagRule& r : rules()) {
        if (r.field_pointer == pointer) return r.doc.name;
    }
    for (const FlagRule& r : rules()) {
        if (r.doc.target == pointer) return r.doc.name;
    }
    return "";
}

Result<FlagReport> apply_hf_flags(RunConfig& config, const std::vector<std::string>& args) {
    FlagReport report;
    std::vector<std::string> errors;
    // Values end up as JSON strings (run.json, `config print`), which must be UTF-8 text.
    for (size_t i = 0; i < args.size(); ++i) {
        if (is_valid_utf8(args[i])) continue;
        std::string flag;  // the flag it belongs to: --name=VALUE, or --name VALUE
        if (args[i].rfind("--", 0) == 0) {
            flag = args[i].substr(0, args[i].find('='));
        } else if (i > 0 && args[i - 1].rfind("--", 0) == 0 && args[i - 1].find('=') == std::string::npos) {
            flag = args[i - 1];
        }
        const std::string where = "argument " + std::to_string(i + 1);
        return Result<FlagReport>::Error(!flag.empty() && is_valid_utf8(flag)
                                             ? flag + ": the value is not valid UTF-8 text (" + where + ")"
                                             : where + " is not valid UTF-8 text");
    }
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
            errors.push_back("\"" + arg + "\": expected a flag like --learning_rate");
            continue;
        }
        std::string name = arg.substr(2);
        std::optional<std::string> value;
        const size_t equals = name.find('=');
        if (equals != std::string::npos) {
            value = name.substr(equals + 1);
            name = name.substr(0, equals);
        }
        // HF accepts both --learning_rate and --learning-rate.
        std::replace(name.begin(), name.end(), '-', '_');
        std::string error;
        const FlagRule* rule = find_rule(name, error);
        if (rule == nullptr) {
            errors.push_back(error);
            if (!value && i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) ++i;  // skip its value
            continue;
        }
        if (!value) {
            const bool next_is_value = i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0;
            if (rule->takes_value) {
                if (!next_is_value) {
                    errors.push_back("--" + rule->doc.name + ": needs a value");
                    continue;
                }
                value = args[++i];
            } else if (next_is_value && is_bool_word(args[i + 1])) {
                value = args[++i];
            } else {
                value = "true";
            }
        }
        const std::string message = rule->field_pointer.empty()
                                        ? rule->apply(config, *value, report.notes)
                                        : set_field_from_text(config, rule->field_pointer, *value);
        if (!message.empty()) errors.push_back("--" + rule->doc.name + ": " + message);
    }
    if (errors.empty()) return report;
    std::string message;
    for (const std::string& e : errors)
        message += (message.empty() ? "" : "\n") + e;
    return Result<FlagReport>::Error(message);
}

}  // namespace slipway
