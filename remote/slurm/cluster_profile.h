// ClusterProfile: how Slipway reaches one Slurm cluster (login host, SSH user/port/key/jump host, the
// remote working folder, whether srun has pyxis) and the list of profiles kept in the user's XDG config
// folder. A profile names files and hosts only: passwords and passphrases never go in it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/status.h"

namespace slipway::remote {

// Where the job's steps run: on the node as it is (after the profile's env_setup lines), or in the run's
// image (/slurm/container_image) through pyxis's srun flags or `apptainer exec` (`singularity exec`).
enum class ContainerMode {
    kNone,
    kPyxis,
    kApptainer,
    kSingularity,
};

const char* container_mode_name(ContainerMode mode);
// "none" | "pyxis" | "apptainer" | "singularity"
Result<ContainerMode> parse_container_mode(const std::string& text);
// The runtimes that take the run's image: pyxis, apptainer and singularity.
bool takes_image(ContainerMode mode);

// Which slipway-engine the nodes run.
enum class EngineSource {
    kBuild,    // built on the cluster from the app's engine bundle, in the run's own environment
    kImage,    // the one on the image's (or the environment's) PATH, as our Dockerfile's image carries it
    kDesktop,  // this computer's binary, uploaded: only for nodes known to match it (our test cluster)
};

const char* engine_source_name(EngineSource source);
Result<EngineSource> parse_engine_source(const std::string& text);  // "build" | "image" | "desktop"

struct ClusterProfile {
    std::string name;           // the profile's own name: [A-Za-z0-9._-]+
    std::string host;           // login node: host name, address, or a Host alias of ssh_config
    std::optional<int> port;    // unset = ssh_config's Port, else 22
    std::string user;           // empty = ssh_config's User, else the local user
    std::string identity_file;  // private key file (its passphrase is asked, never stored)
    std::string proxy_jump;     // [user@]host[:port] of a jump host; empty = none
    std::string remote_workdir = "~/slipway";  // runs go to <remote_workdir>/runs/<run-id>
    ContainerMode container = ContainerMode::kNone;
    // Shell lines every job runs before its steps (`module load pytorch/2.5`, `source ~/venv/bin/activate`).
    std::vector<std::string> env_setup;
    // Unset: what profiles meant before they could say it (engine_source_of).
    std::optional<EngineSource> engine_source;
    std::string default_partition;  // used when the run config names none
    std::string default_account;
    std::string default_qos;
};

// The profile's engine source; unset, the image's under a container runtime and this computer's on bare srun.
EngineSource engine_source_of(const ClusterProfile& profile);

// The first problem found, naming the field ("cluster \"x\": host: must not be empty").
Status validate_profile(const ClusterProfile& profile);

nlohmann::ordered_json profile_to_json(const ClusterProfile& profile);
// Unknown keys and wrong types are errors naming `where` (a file name) and the key.
Result<ClusterProfile> profile_from_json(const nlohmann::json& json, const std::string& where);

// $XDG_CONFIG_HOME/slipway/clusters.json, with ~/.config when XDG_CONFIG_HOME is unset or relative.
std::string default_clusters_file();

// The profiles of one clusters.json: {"schema": "slipway.clusters/1", "clusters": [...]}.
class ProfileStore {
public:
    explicit ProfileStore(std::string path = default_clusters_file()) : path_(std::move(path)) {}

    const std::string& path() const { return path_; }
    // All profiles; an absent file is an empty list, a malformed one an error naming the file.
    Result<std::vector<ClusterProfile>> load() const;
    Result<ClusterProfile> find(const std::string& name) const;
    // Adds or replaces (by name); validates first. Written to a temporary file and renamed.
    Status put(const ClusterProfile& profile) const;
    Status remove(const std::string& name) const;
    Status save(const std::vector<ClusterProfile>& profiles) const;

private:
    std::string path_;
};

}  // namespace slipway::remote
