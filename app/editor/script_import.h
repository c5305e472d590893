// Imports a seed-style training shell script (`torchrun ... train.py --flag value \` lines, variables set
// earlier in the script) into a run config: torchrun's --nnodes / --nproc-per-node become the Slurm
// shape, the script's flags go through the contract's HF flag mapping (engine/contract/hf_flags.h).
#pragma once

#include <string>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"

namespace slipway::app {

struct ScriptImport {
    RunConfig config;
    std::vector<std::string> notes;  // flags accepted without effect, variables that were not set, ...
};

// Splits one shell command line into words: quotes, backslash escapes, $VAR / ${VAR} from `vars`.
// A word that names a variable not in `vars` is returned as written (with its '$').
std::vector<std::string> shell_words(const std::string& line,
                                     const std::vector<std::pair<std::string, std::string>>& vars);

// Fails when the script has no `torchrun`/`python` line running a .py file, or when a flag is bad
// (the error names it).
Result<ScriptImport> import_training_script(const std::string& script, const RunConfig& base);

}  // namespace slipway::app
