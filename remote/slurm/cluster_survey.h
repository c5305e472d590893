// What a new cluster offers, asked once over the login session: the Slurm version, which container runtimes
// and environment tools are there once the profile's setup lines have run (pyxis in srun, enroot, apptainer,
// singularity, environment modules), and whether Slurm's accounting answers (sacct). Shown when a profile's
// connection is tested, so the user picks the environment that exists before the first run.
#pragma once

#include <string>
#include <vector>

#include "contract/status.h"
#include "remote/ssh/session.h"

namespace slipway::remote {

struct ClusterSurvey {
    std::string slurm_version;  // "slurm 24.11.1" as sinfo --version prints it; empty when sinfo is missing
    bool pyxis = false;         // srun takes --container-image
    bool enroot = false;
    bool apptainer = false;
    bool singularity = false;
    bool modules = false;  // environment modules or Lmod
    bool accounting = false;
    std::string accounting_said;  // sacct's first line when it did not answer
};

// The survey's shell text: the profile's env_setup lines first (what they print goes to stderr), as every job
// runs them, so that a runtime a `module load` brings is found; then fixed probes.
std::string survey_command(const std::vector<std::string>& env_setup = {});
// The answer to survey_command() as key=value lines; unknown keys are ignored.
ClusterSurvey parse_survey(const std::string& out);
Result<ClusterSurvey> survey_cluster(Session& session, const std::vector<std::string>& env_setup = {});
// "slurm 24.11.1", "runtimes: pyxis (enroot), apptainer; environment modules", "accounting: ..." for people.
std::vector<std::string> describe_survey(const ClusterSurvey& survey);

}  // namespace slipway::remote
