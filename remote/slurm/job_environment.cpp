// Renders a job's environment (see job_environment.h).
#include "remote/slurm/job_environment.h"

#include <sstream>

#include "remote/ssh/shell_quote.h"

namespace slipway::remote {
namespace {

std::string join(const std::vector<std::string>& items, const char* separator) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i)
        out += (i ? separator : "") + items[i];
    return out;
}

}  // namespace

Result<JobEnvironment> job_environment(const RunConfig& config, const ClusterProfile& profile) {
    const SlurmConfig& s = config.slurm;
    JobEnvironment e;
    e.runtime = profile.container;
    e.setup = profile.env_setup;
    e.gpus = s.gpus_per_node > 0;
    if (s.container_image.empty()) {
        e.runtime = ContainerMode::kNone;  // a container profile runs an image-less run on the node
        return e;
    }
    if (!takes_image(profile.container))
        return Status::Error("/slurm/container_image is set, but cluster \"" + profile.name +
                             "\" runs bare srun (container none): clear the image or use a pyxis, apptainer "
                             "or singularity profile");
    e.image = s.container_image;
    e.mounts = s.container_mounts;
    e.workdir = s.container_workdir;
    return e;
}

std::string setup_block(const std::vector<std::string>& setup) {
    if (setup.empty()) return "";
    // Site scripts (module, conda) read unset variables: nounset is off while they run.
    std::string out = "# The environment's setup (the cluster profile's env_setup).\nset +u\n";
    out += "# shellcheck disable=SC1090,SC1091  # the site's own scripts, not here to follow\n{\n";
    for (const std::string& line : setup)
        out += "  " + line + "\n";
    return out + "}\nset -u\n";
}

Result<std::string> environment_lines(const JobEnvironment& e, const std::vector<std::string>& mounted) {
    std::ostringstream out;
    out << setup_block(e.setup);
    if (e.runtime == ContainerMode::kNone) {
        out << "container=()\n";
        return out.str();
    }
    Result<std::string> image = shell_quote(e.image, "container image");
    Result<std::string> mounts = shell_quote(join(e.mounts, ","), "container mounts");
    if (!image.ok()) return image.status();
    if (!mounts.ok()) return mounts.status();
    out << "mounts=" << *mounts << "\n";
    for (const std::string& variable : mounted) {
        out << "case \"$" << variable << "\" in *,* | *:*) echo \"slipway: the folder $" << variable
            << " has ',' or ':', which a container's mount list cannot hold\" >&2; exit 2 ;; esac\n";
        out << "mounts=\"${mounts:+$mounts,}$" << variable << ":$" << variable << "\"\n";
    }
    if (!e.workdir.empty()) {
        Result<std::string> workdir = shell_quote(e.workdir, "container workdir");
        if (!workdir.ok()) return workdir.status();
        out << "workdir=" << *workdir << "\n";
    } else if (!mounted.empty()) {
        out << "workdir=\"$" << mounted.front() << "\"\n";
    } else {
        out << "workdir=\"$PWD\"\n";
    }
    if (e.runtime == ContainerMode::kPyxis) {
        out << "container=(--container-image=" << *image
            << " --container-mounts=\"$mounts\" --container-workdir=\"$workdir\")\n";
    } else {
        out << "container=(" << container_mode_name(e.runtime) << " exec" << (e.gpus ? " --nv" : "")
            << " --bind \"$mounts\" --pwd \"$workdir\" " << *image << ")\n";
    }
    return out.str();
}

Result<std::vector<std::string>> container_words(const JobEnvironment& e,
                                                 const std::vector<std::string>& folders) {
    if (e.runtime == ContainerMode::kNone) return std::vector<std::string>{};
    std::vector<std::string> mounts = e.mounts;
    for (const std::string& folder : folders) {
        if (folder.empty() || folder[0] != '/' || folder.find_first_of(",:") != std::string::npos)
            return Status::Error(
                "folder \"" + folder +
                "\" must be absolute and without ',' or ':' to be mounted into the container");
        mounts.push_back(folder + ":" + folder);
    }
    const std::string workdir = !e.workdir.empty() ? e.workdir : folders.empty() ? "/" : folders.front();
    if (e.runtime == ContainerMode::kPyxis)
        return std::vector<std::string>{"--container-image=" + e.image,
                                        "--container-mounts=" + join(mounts, ","),
                                        "--container-workdir=" + workdir};
    std::vector<std::string> words = {container_mode_name(e.runtime), "exec"};
    if (e.gpus) words.push_back("--nv");
    words.insert(words.end(), {"--bind", join(mounts, ","), "--pwd", workdir, e.image});
    return words;
}

std::string describe_environment(const JobEnvironment& e) {
    std::string out = std::string("runtime ") + container_mode_name(e.runtime) + "\n";
    if (!e.image.empty()) out += "image " + e.image + "\n";
    for (const std::string& line : e.setup)
        out += "setup " + line + "\n";
    return out;
}

}  // namespace slipway::remote
