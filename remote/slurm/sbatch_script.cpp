// Renders the sbatch script (see sbatch_script.h). The script is plain bash that passes `bash -n` and
// shellcheck; tests run both on the output.
#include "remote/slurm/sbatch_script.h"

#include <algorithm>
#include <sstream>

#include "remote/slurm/job_environment.h"
#include "remote/slurm/rendezvous_script.h"
#include "remote/ssh/shell_quote.h"

namespace slipway::remote {
namespace {

bool has_control_char(const std::string& text) {
    return std::any_of(text.begin(), text.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

// `name=<quoted value>` for the script's variables.
Result<std::string> assignment(const std::string& name, const std::string& value, const char* what) {
    Result<std::string> quoted = shell_quote(value, what);
    if (!quoted.ok()) return quoted.status();
    return name + "=" + *quoted;
}

}  // namespace

std::string slurm_job_name(const std::string& run_name) {
    std::string name;
    for (unsigned char c : run_name) {
        const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                          c == '.' || c == '_' || c == '-';
        name += keep ? static_cast<char>(c) : '_';
        if (name.size() == 64) break;
    }
    return name.empty() ? "slipway" : name;
}

Result<std::string> render_sbatch_script(const RunConfig& config, const ClusterProfile& profile,
                                         const SbatchInputs& inputs) {
    const ConfigProblems problems = validate(config);
    if (has_errors(problems))
        return Status::Error("run config \"" + config.name + "\" is not valid:\n" +
                             format_problems(problems));
    const SlurmConfig& s = config.slurm;
    Result<JobEnvironment> environment = job_environment(config, profile);
    if (!environment.ok()) return environment.status();
    const bool container = environment->runtime != ContainerMode::kNone;

    std::ostringstream out;
    const std::string job_name = slurm_job_name(config.name);
    out << "#!/bin/bash\n";
    out << "# Slipway run " << job_name << ": tokenize once on one task, then train on "
        << config.world_size() << " task(s). Rendered from run.json; edit the run config, not this file.\n";
    // #SBATCH lines are read by sbatch, not by a shell: each value is a validated Slurm word or number.
    std::vector<std::string> directives = {
        "--job-name=" + job_name,
        "--nodes=" + std::to_string(s.nodes),
        "--ntasks-per-node=" + std::to_string(config.tasks_per_node()),
    };
    if (s.gpus_per_node > 0) directives.push_back("--gres=gpu:" + std::to_string(s.gpus_per_node));
    if (s.cpus_per_task) directives.push_back("--cpus-per-task=" + std::to_string(*s.cpus_per_task));
    directives.push_back("--time=" + s.time);
    const std::string partition = s.partition.empty() ? profile.default_partition : s.partition;
    const std::string account = s.account.empty() ? profile.default_account : s.account;
    const std::string qos = s.qos.empty() ? profile.default_qos : s.qos;
    if (!partition.empty()) directives.push_back("--partition=" + partition);
    if (!account.empty()) directives.push_back("--account=" + account);
    if (!qos.empty()) directives.push_back("--qos=" + qos);
    if (s.exclusive) directives.push_back("--exclusive");
    if (s.signal_lead_s > 0) directives.push_back("--signal=B:USR1@" + std::to_string(s.signal_lead_s));
    // A requeued job writes on into the same log: follow and fetch see one run with its segments.
    if (s.auto_requeue) directives.insert(directives.end(), {"--requeue", "--open-mode=append"});
    directives.push_back("--output=slurm-%j.out");
    for (const std::string& extra : s.extra)
        directives.push_back(extra);
    for (const std::string& d : directives) {
        if (has_control_char(d) || d.find_first_of(" \t") != std::string::npos)
            return Status::Error("#SBATCH " + d +
                                 ": Slurm values must not contain spaces or control characters");
        out << "#SBATCH " << d << "\n";
    }
    out << "set -euo pipefail\n\n";

    // The run folder and the engine, as data.
    if (inputs.run_dir.empty()) {
        out << "run_dir=\"$SLURM_SUBMIT_DIR\"\n";
    } else {
        if (inputs.run_dir[0] != '/')
            return Status::Error("run folder must be absolute, got \"" + inputs.run_dir + "\"");
        if (container && inputs.run_dir.find_first_of(",:") != std::string::npos)
            return Status::Error("run folder \"" + inputs.run_dir +
                                 "\" has ',' or ':', which a container's mount list cannot hold");
        Result<std::string> line = assignment("run_dir", inputs.run_dir, "run folder");
        if (!line.ok()) return line.status();
        out << *line << "\n";
    }
    std::vector<std::string> mounted = {"run_dir"};
    if (!inputs.engine_dir.empty() && container) {
        Result<std::string> line = assignment("engine_dir", inputs.engine_dir, "engine folder");
        if (!line.ok()) return line.status();
        out << *line << "\n";
        mounted.push_back("engine_dir");
    }
    if (!inputs.engine.empty()) {
        Result<std::string> line = assignment("engine", inputs.engine, "engine path");
        if (!line.ok()) return line.status();
        out << "# " << (inputs.engine_why.empty() ? "The engine." : inputs.engine_why) << "\n"
            << *line << "\n";
    } else if (container) {
        out << "engine=slipway-engine\n";
    } else {
        out << "engine=\"$run_dir/slipway-engine\"\n";
    }
    if (inputs.run_json.empty()) return Status::Error("run config file name is empty");
    if (inputs.run_json[0] == '/') {
        Result<std::string> line = assignment("run_json", inputs.run_json, "run config path");
        if (!line.ok()) return line.status();
        out << *line << "\n";
    } else {
        Result<std::string> quoted = shell_quote(inputs.run_json, "run config path");
        if (!quoted.ok()) return quoted.status();
        out << "run_json=\"$run_dir\"/" << *quoted << "\n";
    }
    out << "cd \"$run_dir\"\n\n";

    // The container (pyxis's flags, or apptainer's exec prefix): the run folder and the engine's are mounted
    // at their own paths so run.json, the outputs and the engine are where the steps look for them.
    Result<std::string> environment_text = environment_lines(*environment, mounted);
    if (!environment_text.ok()) return environment_text.status();
    out << *environment_text;
    out << "\n";

    // The secret lives only in the job's environment, which srun passes to every task (and pyxis into the
    // container): no file to protect, and a requeued job gets a new one.
    out << "# Rendezvous: the first host of the allocation is the master; rank 0 binds a free port there "
           "and\n"
           "# publishes it in the run folder. Only tasks with this job's secret can use the store.\n";
    out << rendezvous_lines("run_dir");
    out << "echo \"slipway: job $SLURM_JOB_ID on ${#hosts[@]} node(s), master $MASTER_ADDR, port published "
           "in $SLIPWAY_RDZV_FILE\"\n\n";

    // Stops: USR1 is Slurm's early signal before the time limit (#SBATCH --signal=B:USR1, to this script
    // alone): it is passed on as TERM to the training step's tasks, through Slurm (a TERM to srun itself
    // would cancel the step at once). TERM is a scancel, a preemption or `scontrol requeue`: Slurm sends it
    // to the tasks too. Either way the ranks finish their step and save a checkpoint.
    out << "stop=\"\"\n";
    out << "train_pid=\"\"\n";
    out << "# shellcheck disable=SC2317  # called by the trap\n"
           "time_limit_near() {\n"
           "  stop=time_limit\n"
           "  echo \"slipway: the time limit is near (USR1): the ranks finish their step and save a "
           "checkpoint\" >&2\n"
           "  if [ -n \"$train_pid\" ]; then\n"
           "    scancel --signal=TERM \"$SLURM_JOB_ID\" || echo \"slipway: scancel --signal=TERM failed\" "
           ">&2\n"
           "  fi\n"
           "}\n";
    out << "trap time_limit_near USR1\n";
    out << "trap 'stop=term; echo \"slipway: stopped (TERM: scancel, preemption or requeue): the ranks "
           "finish "
           "their step and save a checkpoint\" >&2' TERM\n\n";
    std::string step_cpus;
    if (s.cpus_per_task) step_cpus = " --cpus-per-task=" + std::to_string(*s.cpus_per_task);
    if (inputs.prepare) {
        out << "# Tokenize once, on one task, into the token cache every rank then shares.\n";
        out << "srun --nodes=1 --ntasks=1" << step_cpus
            << " ${container[@]+\"${container[@]}\"} \"$engine\" prepare \"$run_json\"\n\n";
    }
    out << "# A restarted job (requeued after its time limit or a preemption) resumes from its newest "
           "checkpoint.\n";
    out << "resume=()\n";
    out << "if [ \"${SLURM_RESTART_COUNT:-0}\" -gt 0 ]; then\n"
           "  resume=(--resume-latest-if-any)\n"
           "  echo \"slipway: restart $SLURM_RESTART_COUNT of job $SLURM_JOB_ID: resuming from the newest "
           "checkpoint\"\n"
           "fi\n\n";
    out << "# Train on every task; a rank that dies ends the step instead of leaving the others hanging.\n"
           "# In the background, so a signal reaches the trap while it runs; `wait` returns early on a "
           "signal,\n"
           "# so it waits again until srun has ended.\n";
    out << "status=0\n";
    out << "if [ -z \"$stop\" ]; then\n";
    out << "  srun --kill-on-bad-exit=1" << step_cpus
        << " ${container[@]+\"${container[@]}\"} \"$engine\" train \"$run_json\" "
           "${resume[@]+\"${resume[@]}\"} &\n";
    out << "  train_pid=$!\n"
           "  while :; do\n"
           "    wait \"$train_pid\" && status=0 || status=$?\n"
           "    kill -0 \"$train_pid\" 2>/dev/null || break\n"
           "  done\n"
           "  # A trap that ran as srun ended leaves wait's 128+signal; bash keeps srun's own status for one "
           "more wait.\n"
           "  if [ \"$status\" -gt 128 ]; then\n"
           "    last=0\n"
           "    wait \"$train_pid\" || last=$?\n"
           "    [ \"$last\" -eq 127 ] || status=$last\n"
           "  fi\n"
           "else\n"
           "  echo \"slipway: stopped before the training started\" >&2\n"
           "  status=143\n"
           "fi\n";
    if (s.auto_requeue) {
        out << "\n# After the time limit's checkpoint the job goes back to the queue (a preempted one is "
               "requeued by Slurm).\n";
        out << "if [ \"$stop\" = time_limit ]; then\n"
               "  if [ \"${SLURM_RESTART_COUNT:-0}\" -lt "
            << s.max_restarts
            << " ]; then\n"
               "    echo \""
            << kRequeueAnnouncement
            << "$SLURM_JOB_ID (restart $((${SLURM_RESTART_COUNT:-0} + 1)) "
               "of at most "
            << s.max_restarts
            << ")\"\n"
               "    trap - TERM  # the requeue ends this script\n"
               "    scontrol requeue \"$SLURM_JOB_ID\"\n"
               "    exit 0\n"
               "  fi\n"
               "  echo \"slipway: no restart left (/slurm/max_restarts "
            << s.max_restarts
            << "): the run stops at its checkpoint\" >&2\n"
               "fi\n";
    }
    out << "exit \"$status\"\n";
    return out.str();
}

}  // namespace slipway::remote
