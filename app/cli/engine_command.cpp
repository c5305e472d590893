// `slipway engine bundle --out F.tar.gz`: writes the engine bundle this app carries (engine/bundle/) and says
// what it is: its SHA-256 (the tarball is reproducible), which names the engine a cluster builds from it.
// `slipway engine build --cluster NAME RUN.json` builds (or finds) the engine for that run's environment on
// the cluster, and `slipway engine list --cluster NAME` shows the engines built there.
#include <filesystem>
#include <iostream>
#include <sstream>
#include <system_error>

#include "cli/remote_connect.h"
#include "core/install_paths.h"
#include "remote/deploy/engine_build.h"
#include "remote/slurm/slurm_client.h"

namespace slipway::app {

int run_engine_bundle(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    const std::string bundle = find_engine_bundle();
    if (bundle.empty()) {
        return fail(err, no_engine_bundle_text());
    }
    std::error_code ec;
    std::filesystem::copy_file(bundle, c.bundle_out, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) return fail(err, c.bundle_out + ": cannot write the bundle: " + ec.message());
    // The hash a cluster's engine fingerprint is made from, computed the same way.
    Result<remote::EngineBundle> written = remote::read_engine_bundle(c.bundle_out);
    if (!written.ok()) return fail(err, c.bundle_out + ": cannot read it back: " + written.error());
    out << "bundle=" << c.bundle_out << " sha256=" << written->sha256
        << " bytes=" << std::filesystem::file_size(c.bundle_out, ec) << "\n";
    return 0;
}

int run_engine_build(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<RunConfig> config = load_run_file(c.run_file);
    if (!config.ok()) return fail(err, config.error());
    Result<remote::ClusterProfile> profile = profile_store(c).find(c.cluster);
    if (!profile.ok()) return fail(err, profile.error());
    const std::string bundle_path = c.bundle.empty() ? find_engine_bundle() : c.bundle;
    if (bundle_path.empty()) return fail(err, no_engine_bundle_text());
    Result<remote::EngineBundle> bundle = remote::read_engine_bundle(bundle_path);
    if (!bundle.ok()) return fail(err, bundle.error());
    Result<std::unique_ptr<remote::Session>> session = connect_cluster(*profile, c.ssh);
    if (!session.ok()) return fail(err, session.error());
    remote::SlurmClient slurm(**session);
    Result<remote::EnginePlace> place =
        remote::find_or_queue_engine(**session, slurm, *config, *profile, *bundle);
    if (!place.ok()) return fail(err, place.error());
    if (!place->cached()) {
        err << "slipway: building the engine in job " << place->build_job << " (log " << place->dir
            << "/build-" << place->build_job << ".out)" << std::endl;
        remote::EngineBuildWatch watch;
        watch.progress = [&err](const std::string& state) {
            err << "slipway: build job: " << state << std::endl;
        };
        if (c.build_log)
            watch.log_line = [&err](const std::string& line) { err << "build: " << line << "\n"; };
        if (Status s = remote::wait_for_engine(**session, slurm, *place, watch); !s.ok())
            return fail(err, s.message());
    }
    out << "engine=" << place->engine << " fingerprint=" << place->fingerprint << " "
        << (place->cached() ? "cached" : "built") << "\n";
    return 0;
}

int run_engine_list(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<remote::ClusterProfile> profile = profile_store(c).find(c.cluster);
    if (!profile.ok()) return fail(err, profile.error());
    Result<std::unique_ptr<remote::Session>> session = connect_cluster(*profile, c.ssh);
    if (!session.ok()) return fail(err, session.error());
    Result<std::vector<remote::BuiltEngine>> engines = remote::list_engines(**session, *profile);
    if (!engines.ok()) return fail(err, engines.error());
    if (engines->empty()) out << "no engines built on " << profile->name << "\n";
    for (const remote::BuiltEngine& engine : *engines) {
        out << engine.dir << " "
            << (engine.manifest.empty() ? "(not built: building, or its build failed)" : "") << "\n";
        std::istringstream environment(engine.environment);
        for (std::string line; std::getline(environment, line);)
            out << "  " << line << "\n";
        if (!engine.manifest.empty()) out << "  manifest " << engine.manifest << "\n";
    }
    return 0;
}

}  // namespace slipway::app
