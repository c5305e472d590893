// `slipway image build RUN.json --cluster NAME --tag IMAGE [--sqsh PATH] [--context TARBALL]`: renders the
// run's Dockerfile, builds it with docker on the profile's host (seed 000 step 2a) while its output streams
// here, and optionally imports the image into a .sqsh for pyxis (step 2b).
#include <iostream>

#include "cli/remote_connect.h"
#include "images/image_tasks.h"

namespace slipway::app {
int run_image_build(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<RunConfig> config = load_run_file(c.run_file);
    if (!config.ok()) return fail(err, config.error());
    if (Status s = remote::check_image_reference(c.image_tag); !s.ok())
        return fail(err, "--tag: " + s.message());
    ImageTask task;
    task.action = ImageAction::kBuild;
    task.config = *config;
    task.image = c.image_tag;
    task.sqsh = c.sqsh;
    task.context = c.context;
    task.source_root = resource_root();
    // Refuse an invalid config before connecting.
    if (Result<std::string> dockerfile = image_dockerfile(task.config, task.source_root); !dockerfile.ok())
        return fail(err, dockerfile.error());

    Result<remote::ClusterProfile> profile = profile_store(c).find(c.cluster);
    if (!profile.ok()) return fail(err, profile.error());
    task.remote_workdir = profile->remote_workdir;
    Result<std::unique_ptr<remote::Session>> session = connect_cluster(*profile, c.ssh);
    if (!session.ok()) return fail(err, session.error());
    Result<ImageTaskOutcome> done =
        run_image_task(**session, task, [&out](const std::string& line) { out << line << std::endl; });
    if (!done.ok()) return fail(err, done.error());
    if (done->exit_status != 0)
        return fail(err, "the build failed (exit " + std::to_string(done->exit_status) + "); its log is " +
                             done->log_path);
    out << "built " << c.image_tag << (c.sqsh.empty() ? "" : " and imported it to " + c.sqsh) << "\n";
    return 0;
}

}  // namespace slipway::app
