// `slipway clusters list | add | test | remove`: cluster profiles in the XDG config folder, and a
// connection test that shows what Slurm offers there.
#include "cli/remote_connect.h"
#include "remote/deploy/deploy.h"
#include "remote/slurm/cluster_survey.h"
#include "remote/slurm/slurm_client.h"

namespace slipway::app {

int run_clusters_list(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    const remote::ProfileStore store = profile_store(c);
    Result<std::vector<remote::ClusterProfile>> profiles = store.load();
    if (!profiles.ok()) {
        err << "slipway: " << profiles.error() << "\n";
        return 1;
    }
    if (profiles->empty()) {
        out << "no clusters in " << store.path()
            << " (add one with `slipway clusters add NAME --host HOST`)\n";
        return 0;
    }
    std::vector<std::vector<std::string>> rows = {{"NAME", "HOST", "CONTAINER", "WORKDIR"}};
    for (const remote::ClusterProfile& p : *profiles) {
        std::string host =
            (p.user.empty() ? "" : p.user + "@") + p.host + (p.port ? ":" + std::to_string(*p.port) : "");
        if (!p.proxy_jump.empty()) host += " via " + p.proxy_jump;
        rows.push_back({p.name, host, remote::container_mode_name(p.container), p.remote_workdir});
    }
    print_table(out, rows);
    return 0;
}

int run_clusters_add(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    remote::ClusterProfile p;
    p.name = c.cluster_name;
    p.host = c.host;
    if (c.port != 0) p.port = c.port;
    p.user = c.user;
    p.identity_file = c.identity;
    p.proxy_jump = c.proxy_jump;
    p.remote_workdir = c.workdir;
    Result<remote::ContainerMode> mode = remote::parse_container_mode(c.container);
    if (!mode.ok()) {
        err << "slipway: --container: " << mode.error() << "\n";
        return 2;
    }
    p.container = *mode;
    Result<remote::EngineSource> source = remote::parse_engine_source(c.engine_source);
    if (!source.ok()) {
        err << "slipway: --engine-source: " << source.error() << "\n";
        return 2;
    }
    p.engine_source = *source;
    p.env_setup = c.env_setup;
    p.default_partition = c.partition;
    p.default_account = c.account;
    p.default_qos = c.qos;
    const remote::ProfileStore store = profile_store(c);
    if (Status s = store.put(p); !s.ok()) {
        err << "slipway: " << s.message() << "\n";
        return 1;
    }
    out << "saved cluster " << p.name << " in " << store.path() << "\n";
    return 0;
}

int run_clusters_remove(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    const remote::ProfileStore store = profile_store(c);
    if (Status s = store.remove(c.cluster_name); !s.ok()) {
        err << "slipway: " << s.message() << "\n";
        return 1;
    }
    out << "removed cluster " << c.cluster_name << "\n";
    return 0;
}

int run_clusters_test(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<remote::ClusterProfile> profile = profile_store(c).find(c.cluster_name);
    if (!profile.ok()) {
        err << "slipway: " << profile.error() << "\n";
        return 1;
    }
    Result<std::unique_ptr<remote::Session>> session = connect_cluster(*profile, c.ssh);
    if (!session.ok()) {
        err << "slipway: " << session.error() << "\n";
        return 1;
    }
    out << "connected to " << (*session)->describe() << "\n";
    // The runs folder must be creatable: submit puts every run under it.
    Result<std::string> workdir = remote::resolve_remote_path(**session, profile->remote_workdir);
    if (!workdir.ok()) {
        err << "slipway: " << workdir.error() << "\n";
        return 1;
    }
    if (Status s = (*session)->mkdir_p(*workdir + "/runs", 0755); !s.ok()) {
        err << "slipway: workdir " << *workdir << ": " << s.message() << "\n";
        return 1;
    }
    out << "workdir " << *workdir << "/runs is usable\n";
    remote::SlurmClient slurm(**session);
    Result<std::vector<remote::NodeRow>> nodes = slurm.nodes();
    if (!nodes.ok()) {
        err << "slipway: " << nodes.error() << "\n";
        return 1;
    }
    for (const remote::PartitionInfo& p : remote::summarize_partitions(*nodes)) {
        out << "partition " << p.name << (p.is_default ? " (default)" : "") << ": " << p.nodes << " node(s), "
            << p.idle_nodes << " idle, " << p.cpus << " CPUs, " << p.gpus << " GPUs\n";
    }
    Result<remote::ClusterSurvey> survey = remote::survey_cluster(**session, profile->env_setup);
    if (!survey.ok()) {
        err << "slipway: " << survey.error() << "\n";
        return 1;
    }
    for (const std::string& line : remote::describe_survey(*survey))
        out << line << "\n";
    return 0;
}

}  // namespace slipway::app
