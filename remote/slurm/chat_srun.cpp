// render_chat_srun (see chat_srun.h).
#include "remote/slurm/chat_srun.h"

#include <algorithm>

#include "remote/slurm/sbatch_script.h"
#include "remote/ssh/shell_quote.h"

namespace slipway::remote {

Result<std::string> render_chat_srun(const RunConfig& config, const ClusterProfile& profile,
                                     const std::string& run_dir, std::vector<std::string> engine_args) {
    if (run_dir.empty() || run_dir[0] != '/')
        return Status::Error("chat: the run folder must be absolute, got \"" + run_dir + "\"");
    const SlurmConfig& s = config.slurm;
    const bool container = !s.container_image.empty();
    if (container && profile.container != ContainerMode::kPyxis)
        return Status::Error("chat: the run names a container image, but cluster \"" + profile.name +
                             "\" runs bare srun");
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
    if (container) {
        if (run_dir.find_first_of(",:") != std::string::npos)
            return Status::Error("chat: run folder \"" + run_dir +
                                 "\" has ',' or ':', which a pyxis --container-mounts entry cannot hold");
        std::string mounts;
        for (const std::string& m : s.container_mounts)
            mounts += m + ",";
        mounts += run_dir + ":" + run_dir;
        argv.push_back("--container-image=" + s.container_image);
        argv.push_back("--container-mounts=" + mounts);
        argv.push_back("--container-workdir=" +
                       (s.container_workdir.empty() ? run_dir : s.container_workdir));
        argv.push_back("slipway-engine");
    } else {
        argv.push_back(run_dir + "/slipway-engine");
    }
    if (gpu && std::find(engine_args.begin(), engine_args.end(), "--device") == engine_args.end()) {
        engine_args.push_back("--device");
        engine_args.push_back("cuda");
    }
    argv.insert(argv.end(), engine_args.begin(), engine_args.end());
    return shell_command(argv);
}

}  // namespace slipway::remote
