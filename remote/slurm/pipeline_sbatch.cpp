// Renders a pipeline step's CPU job (see pipeline_sbatch.h): straight-line bash, every value quoted.
#include "remote/slurm/pipeline_sbatch.h"

#include <sstream>

#include "remote/slurm/sbatch_script.h"
#include "remote/slurm/slurm_client.h"
#include "remote/ssh/shell_quote.h"

namespace slipway::remote {
namespace {

// A #SBATCH value: no spaces or control characters (sbatch reads these lines itself, not a shell).
bool plain_directive(const std::string& d) {
    for (unsigned char c : d)
        if (c <= 0x20 || c == 0x7f) return false;
    return true;
}

}  // namespace

Result<std::vector<std::string>> dependency_directives(const std::string& job_id) {
    if (job_id.empty()) return std::vector<std::string>{};
    if (Status s = check_job_id(job_id); !s.ok()) return s;
    return std::vector<std::string>{"--dependency=afterok:" + job_id, "--kill-on-invalid-dep=yes"};
}

Result<std::string> render_step_script(const PipelineStep& step, const ResolvedStep& resolved,
                                       const ClusterProfile& profile, const StepScriptInputs& inputs) {
    if (step.is_training())
        return Status::Error("step \"" + step.name + "\" trains: it uses the run's sbatch script");
    if (resolved.engine_args.empty())
        return Status::Error("step \"" + step.name + "\" has no engine command");
    if (inputs.step_dir.empty() || inputs.step_dir[0] != '/')
        return Status::Error("step folder must be absolute, got \"" + inputs.step_dir + "\"");
    const JobEnvironment& environment = inputs.environment;
    const bool container = takes_image(environment.runtime);
    if (!container && !environment.image.empty())
        return Status::Error("a container image was given, but cluster \"" + profile.name +
                             "\" runs bare srun");
    if (container && environment.image.empty())
        return Status::Error(
            "cluster \"" + profile.name + "\" runs jobs in containers (" +
            container_mode_name(environment.runtime) +
            "), but no training step of the pipeline names an image (/slurm/container_image)");
    const std::string shared = inputs.runs_dir.empty() ? inputs.step_dir : inputs.runs_dir;
    for (const std::string& folder : {inputs.step_dir, shared, inputs.engine_dir}) {
        if (container && folder.find_first_of(",:") != std::string::npos)
            return Status::Error("folder \"" + folder +
                                 "\" has ',' or ':', which a container's mount list cannot hold");
    }
    if (shared[0] != '/') return Status::Error("runs folder \"" + shared + "\" must be absolute");

    std::vector<std::string> directives = {
        "--job-name=" + slurm_job_name(inputs.pipeline_name + "." + step.name),
        "--nodes=1",
        "--ntasks=1",
        "--cpus-per-task=" + std::to_string(step.cpus),
        "--time=" + step.time,
    };
    if (!profile.default_partition.empty()) directives.push_back("--partition=" + profile.default_partition);
    if (!profile.default_account.empty()) directives.push_back("--account=" + profile.default_account);
    if (!profile.default_qos.empty()) directives.push_back("--qos=" + profile.default_qos);
    directives.push_back("--output=slurm-%j.out");
    Result<std::vector<std::string>> after = dependency_directives(inputs.after_job_id);
    if (!after.ok()) return after.status();
    directives.insert(directives.end(), after->begin(), after->end());

    std::ostringstream out;
    out << "#!/bin/bash\n";
    out << "# Slipway pipeline step " << slurm_job_name(step.name) << " (" << step.kind
        << "): one slipway-engine command on one task, no GPUs. Rendered from the pipeline; edit the "
           "pipeline, "
           "not this file.\n";
    for (const std::string& d : directives) {
        if (!plain_directive(d))
            return Status::Error("#SBATCH " + d +
                                 ": Slurm values must not contain spaces or control characters");
        out << "#SBATCH " << d << "\n";
    }
    out << "set -euo pipefail\n\n";
    Result<std::string> dir = shell_quote(inputs.step_dir, "step folder");
    if (!dir.ok()) return dir.status();
    out << "step_dir=" << *dir << "\n";
    Result<std::string> engine =
        shell_quote(inputs.engine.empty() ? "slipway-engine" : inputs.engine, "engine path");
    if (!engine.ok()) return engine.status();
    out << "engine=" << *engine << "\n";
    // The folders the step reads and writes, bound at their own paths (bare srun sees them as they are).
    std::vector<std::string> mounted;
    if (container) {
        Result<std::string> quoted_shared = shell_quote(shared, "runs folder");
        if (!quoted_shared.ok()) return quoted_shared.status();
        out << "runs_dir=" << *quoted_shared << "\n";
        mounted.push_back("runs_dir");
        if (!inputs.engine_dir.empty()) {
            Result<std::string> engine_dir = shell_quote(inputs.engine_dir, "engine folder");
            if (!engine_dir.ok()) return engine_dir.status();
            out << "engine_dir=" << *engine_dir << "\n";
            mounted.push_back("engine_dir");
        }
    }
    out << "cd \"$step_dir\"\n\n";
    JobEnvironment in_step_dir = environment;
    in_step_dir.workdir = inputs.step_dir;
    Result<std::string> lines = environment_lines(in_step_dir, mounted);
    if (!lines.ok()) return lines.status();
    out << *lines;
    out << "\n# The step's command, one quoted word per array element.\n";
    out << "args=(";
    for (size_t i = 0; i < resolved.engine_args.size(); ++i) {
        Result<std::string> word = shell_quote(resolved.engine_args[i], "engine argument");
        if (!word.ok()) return Status::Error("step \"" + step.name + "\": " + word.error());
        out << (i ? " " : "") << *word;
    }
    out << ")\n";
    out << "echo \"slipway: pipeline step " << slurm_job_name(step.name)
        << " (job $SLURM_JOB_ID): $engine ${args[*]}\"\n";
    out << "srun --nodes=1 --ntasks=1 --cpus-per-task=" << step.cpus
        << " ${container[@]+\"${container[@]}\"} \"$engine\" \"${args[@]}\"";
    if (!resolved.stdout_file.empty()) {
        Result<std::string> file = shell_quote(resolved.stdout_file, "output file");
        if (!file.ok()) return file.status();
        out << " >" << *file << ".partial\n";
        out << "mv -- " << *file << ".partial " << *file << "\n";
    } else {
        out << "\n";
    }
    return out.str();
}

}  // namespace slipway::remote
