// render_chat_srun (see chat_srun.h).
#include "remote/slurm/chat_srun.h"

#include <algorithm>

#include "remote/slurm/job_environment.h"
#include "remote/slurm/sbatch_script.h"
#include "remote/ssh/shell_quote.h"

namespace slipway::remote {
namespace {

// <workdir>/engines for a run folder <workdir>/runs/<id>; empty for a folder laid out otherwise.
std::string engines_folder_of(const std::string& run_dir) {
    const size_t id = run_dir.find_last_of('/');
    if (id == std::string::npos || id < 5 || run_dir.compare(id - 5, 5, "/runs") != 0) return {};
    return run_dir.substr(0, id - 5) + "/engines";
}

}  // namespace

Result<std::string> render_chat_srun(const RunConfig& config, const ClusterProfile& profile,
                                     const std::string& run_dir, std::vector<std::string> engine_args) {
    if (run_dir.empty() || run_dir[0] != '/')
        return Status::Error("chat: the run folder must be absolute, got \"" + run_dir + "\"");
    const SlurmConfig& s = config.slurm;
    Result<JobEnvironment> environment = job_environment(config, profile);
    if (!environment.ok()) return Status::Error("chat: " + environment.error());
    std::vector<std::string> argv = {"srun", "--nodes=1", "--ntasks=1",
                                     "--job-name=" + slurm_job_name(config.name + "-chat")};
    // Slurm values as one word each: what sbatch's #SBATCH lines accept.
    auto option = [&argv](const char* flag, const std::string& value, const char* field) -> Status {
        if (value.empty()) return Status::Ok();
        if (std::any_of(value.begin(), value.end(), [](unsigned char c) { return c <= 0x20 || c == 0x7f; }))
            return Status::Error(std::string("chat: ") + field + " \"" + value +
                                 "\" must not contain spaces or control characters");
        argv.push_back(std::string(flag) + "=" + value);
        return Status::Ok();
    };
    const std::string partition = s.partition.empty() ? profile.default_partition : s.partition;
    const std::string account = s.account.empty() ? profile.default_account : s.account;
    const std::string qos = s.qos.empty() ? profile.default_qos : s.qos;
    if (Status st = option("--partition", partition, "/slurm/partition"); !st) return st;
    if (Status st = option("--account", account, "/slurm/account"); !st) return st;
    if (Status st = option("--qos", qos, "/slurm/qos"); !st) return st;
    if (Status st = option("--time", s.time, "/slurm/time"); !st) return st;
    if (s.cpus_per_task) argv.push_back("--cpus-per-task=" + std::to_string(*s.cpus_per_task));
    const bool gpu = s.gpus_per_node > 0;
    if (gpu) argv.push_back("--gres=gpu:1");
    // The engine as the run's job ran it: the image's, or the one in (or named by) the run folder.
    std::vector<std::string> folders = {run_dir};
    const std::string engines = engines_folder_of(run_dir);
    const EngineSource source = engine_source_of(profile);
    if (source == EngineSource::kBuild && !engines.empty()) folders.push_back(engines);
    Result<std::vector<std::string>> container = container_words(*environment, folders);
    if (!container.ok()) return Status::Error("chat: " + container.error());
    argv.insert(argv.end(), container->begin(), container->end());
    argv.push_back(source == EngineSource::kImage ? "slipway-engine" : run_dir + "/slipway-engine");
    if (gpu && std::find(engine_args.begin(), engine_args.end(), "--device") == engine_args.end()) {
        engine_args.push_back("--device");
        engine_args.push_back("cuda");
    }
    argv.insert(argv.end(), engine_args.begin(), engine_args.end());
    return shell_command(argv);
}

}  // namespace slipway::remote
