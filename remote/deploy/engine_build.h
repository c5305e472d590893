// The engine a run uses on a cluster whose profile builds it (engine_source "build"): one per bundle and
// environment, kept in <workdir>/engines/<fingerprint>/ with its build log and manifest. The fingerprint is
// the SHA-256 of the bundle's hash and the environment (runtime, image, setup lines) plus the image file's
// size and mtime on the cluster, or on bare srun the torch version the setup lines bring on the login node,
// so a changed bundle, image, setup or torch builds again and anything else reuses what is there. The bundle
// is uploaded once to <workdir>/engine/.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"
#include "remote/slurm/cluster_profile.h"
#include "remote/slurm/slurm_client.h"
#include "remote/ssh/session.h"

namespace slipway::remote {

struct EngineBundle {
    std::string path;    // the local .tar.gz (`slipway engine bundle` writes it)
    std::string sha256;  // of the tarball, which is reproducible
};

// The bundle at `path` with its hash; an error names the file.
Result<EngineBundle> read_engine_bundle(const std::string& path);

struct EnginePlace {
    std::string fingerprint;  // hex SHA-256
    std::string dir;          // <workdir>/engines/<first 16 of the fingerprint>
    std::string engine;       // dir/slipway-engine
    std::string environment;  // what the fingerprint covers, as written to dir/environment.txt
    std::string build_job;    // the queued (or still running) build; empty when the engine is there
    std::string why;          // one line for the run's script: which engine and why
    bool cached() const { return build_job.empty(); }
};

// The engine of `bundle` for the run's environment: there already, being built by an earlier job (whose
// id is returned to wait on), or a build queued now. Nothing is uploaded or queued when it is there.
Result<EnginePlace> find_or_queue_engine(Session& session, SlurmClient& slurm, const RunConfig& config,
                                         const ClusterProfile& profile, const EngineBundle& bundle);

// How a wait for a build job reports and ends. Every callback may be empty.
struct EngineBuildWatch {
    std::chrono::milliseconds poll{3000};              // how often Slurm and the log are asked
    std::function<void(const std::string&)> progress;  // each change of the job's state
    std::function<void(const std::string&)> log_line;  // each new complete line of the build log
    std::function<bool()> stop_requested;              // true: the build job is cancelled, the wait ends
};

// Waits for the build job `place.build_job` to end. Ok when the engine and its manifest are there; else an
// error with the build log's path and its first compiler error (or its last lines), or "cancelled".
Status wait_for_engine(Session& session, SlurmClient& slurm, const EnginePlace& place,
                       const EngineBuildWatch& watch);

// The engine of the bundle at `bundle_path` for `config`'s environment: found, or queued and waited for
// (find_or_queue_engine, then wait_for_engine). `watch.progress` hears which, first ("engine PATH (built
// before)" or "building the engine in job N (log PATH)"), then the build job's states ("build job: RUNNING").
Result<EnginePlace> find_or_build_engine(Session& session, SlurmClient& slurm, const RunConfig& config,
                                         const ClusterProfile& profile, const std::string& bundle_path,
                                         const EngineBuildWatch& watch);

// Where an engine built on `profile`'s cluster lives, before its fingerprint is known (what `render` shows).
std::string engine_dir_placeholder(const ClusterProfile& profile);

// The build log of `place`'s job: <dir>/build-<job>.out.
std::string engine_build_log(const EnginePlace& place);

struct BuiltEngine {
    std::string dir;
    std::string manifest;     // engine-manifest.json's text; empty while it builds or when it failed
    std::string environment;  // environment.txt's text
};

// Every engine folder under <workdir>/engines.
Result<std::vector<BuiltEngine>> list_engines(Session& session, const ClusterProfile& profile);

}  // namespace slipway::remote
