// Asks a login node what it offers (see cluster_survey.h).
#include "remote/slurm/cluster_survey.h"

#include <sstream>

#include "remote/slurm/job_environment.h"
#include "remote/ssh/shell_quote.h"

namespace slipway::remote {

std::string survey_command(const std::vector<std::string>& env_setup) {
    const std::string setup =
        env_setup.empty() ? "" : "exec 3>&1 1>&2\n" + setup_block(env_setup) + "exec 1>&3 3>&-\n";
    return setup +
           "printf 'slurm=%s\\n' \"$(sinfo --version 2>/dev/null | head -n 1)\"\n"
           "for tool in enroot apptainer singularity; do\n"
           "  printf '%s=%s\\n' \"$tool\" \"$(command -v \"$tool\" 2>/dev/null)\"\n"
           "done\n"
           "printf 'pyxis=%s\\n' \"$(srun --help 2>/dev/null | grep -c -- --container-image)\"\n"
           "if type module >/dev/null 2>&1 || [ -n \"${MODULESHOME:-}\" ] || [ -n \"${LMOD_CMD:-}\" ]; then\n"
           "  echo modules=yes\n"
           "fi\n"
           "said=$(sacct -n -X -o JobID -S now 2>&1)\n"
           "printf 'sacct_status=%s\\n' \"$?\"\n"
           "printf 'sacct=%s\\n' \"$(printf '%s\\n' \"$said\" | head -n 1)\"\n";
}

ClusterSurvey parse_survey(const std::string& out) {
    ClusterSurvey survey;
    std::istringstream in(out);
    std::string sacct_status = "1";
    for (std::string line; std::getline(in, line);) {
        const size_t eq = line.find('=');
        if (eq == std::string::npos) continue;
        const std::string key = line.substr(0, eq);
        const std::string value = line.substr(eq + 1);
        if (key == "slurm") survey.slurm_version = value;
        if (key == "enroot") survey.enroot = !value.empty();
        if (key == "apptainer") survey.apptainer = !value.empty();
        if (key == "singularity") survey.singularity = !value.empty();
        if (key == "pyxis") survey.pyxis = !value.empty() && value != "0";
        if (key == "modules") survey.modules = value == "yes";
        if (key == "sacct_status") sacct_status = value;
        if (key == "sacct") survey.accounting_said = value;
    }
    survey.accounting = sacct_status == "0";
    if (survey.accounting) survey.accounting_said.clear();
    return survey;
}

Result<ClusterSurvey> survey_cluster(Session& session, const std::vector<std::string>& env_setup) {
    // A login shell, as a user's own: environment modules are set up by its profile scripts; and bash
    // whatever the account's shell is.
    Result<std::string> script = shell_quote(survey_command(env_setup), "survey");
    if (!script.ok()) return script.status();
    Result<ExecResult> answer = session.exec("bash -lc " + *script, std::chrono::seconds(30));
    if (!answer.ok()) return answer.status();
    return parse_survey(answer->out);
}

std::vector<std::string> describe_survey(const ClusterSurvey& s) {
    std::vector<std::string> lines;
    lines.push_back(s.slurm_version.empty() ? "slurm: sinfo --version answered nothing" : s.slurm_version);
    std::string runtimes;
    const auto add = [&runtimes](bool there, const std::string& name) {
        if (there) runtimes += (runtimes.empty() ? "" : ", ") + name;
    };
    add(s.pyxis, s.enroot ? "pyxis (enroot)" : "pyxis");
    add(s.enroot && !s.pyxis, "enroot (without pyxis in srun)");
    add(s.apptainer, "apptainer");
    add(s.singularity, "singularity");
    lines.push_back("runtimes: " + (runtimes.empty() ? "none found (bare srun)" : runtimes) +
                    (s.modules ? "; environment modules" : ""));
    lines.push_back(s.accounting ? "accounting: sacct answers"
                                 : "accounting: off (" + s.accounting_said +
                                       "): ended jobs are followed with squeue and scontrol");
    return lines;
}

}  // namespace slipway::remote
