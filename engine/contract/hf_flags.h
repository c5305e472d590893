// Seed-style training-script flags (HF TrainingArguments plus the seeds' LoRA arguments: --lora_rank,
// --trainable, --modules_to_save, --peft ...) mapped onto RunConfig fields. Used for overrides on the
// engine's command line and to import a seed-style `torchrun train.py --flag value ...` script.
#pragma once

#include <string>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"

namespace slipway {

struct HfFlag {
    std::string name;    // without the leading "--"
    std::string target;  // JSON pointer it sets, or a short description of its effect
    std::string help;
};

// Every flag understood, in documentation order.
const std::vector<HfFlag>& hf_flags();

// The seed-style flag that sets the field at `pointer` ("lora_rank" for "/adapter/r"), or "" when no flag
// does. A flag that maps onto the field directly comes before one that sets it by a rule ("peft").
std::string hf_flag_for(const std::string& pointer);

// What applying flags did besides setting fields: flags accepted without effect, and why.
struct FlagReport {
    std::vector<std::string> notes;
};

// Applies `args` ("--name value", "--name=value", bare boolean "--bf16"; unique prefixes are accepted as
// argparse does, e.g. "--save_step") to `config`. Every bad flag is reported, each naming the flag; on
// error `config` may be partly changed.
Result<FlagReport> apply_hf_flags(RunConfig& config, const std::vector<std::string>& args);

}  // namespace slipway
