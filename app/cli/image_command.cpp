// `slipway image build RUN.json --cluster NAME --tag IMAGE [--sqsh PATH] [--context TARBALL]`: renders the
// run's Dockerfile, builds it with docker on the profile's host (seed 000 step 2a) while its output streams
// here, and optionally imports the image into a .sqsh for pyxis (step 2b).
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "cli/remote_connect.h"
#include "remote/container/dockerfile.h"
#include "remote/container/image_build.h"
#include "remote/deploy/deploy.h"
#include "remote/ssh/shell_quote.h"

namespace slipway::app {
namespace {

namespace fs = std::filesystem;

int fail(std::ostream& err, const std::string& message) {
    err << "slipway: " << message << "\n";
    return 1;
}

// `git archive` of the source tree the engine stage builds from, into a temporary file.
Result<std::string> source_tarball(const std::string& root) {
    if (root.empty() || !fs::exists(fs::path(root) / ".git"))
        return Status::Error("no Slipway source tree with git history found; pass --context TARBALL");
    const std::string path =
        (fs::temp_directory_path() / ("slipway-context-" + std::to_string(::getpid()) + ".tar.gz")).string();
    Result<std::string> command =
        remote::shell_command({"git", "-C", root, "archive", "--format=tar.gz", "-o", path, "HEAD"});
    if (!command.ok()) return command.status();
    if (std::system(command->c_str()) != 0) return Status::Error("`" + *command + "` failed");
    return path;
}

}  // namespace

int run_image_build(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<RunConfig> config = load_run_file(c.run_file);
    if (!config.ok()) return fail(err, config.error());
    if (Status s = remote::check_image_reference(c.image_tag); !s.ok())
        return fail(err, "--tag: " + s.message());
    std::optional<remote::NgcCatalogue> catalogue;
    const std::string root = resource_root();
    if (!root.empty()) {
        Result<remote::NgcCatalogue> loaded =
            remote::load_ngc_catalogue(root + "/resources/containers/ngc-pytorch.json");
        if (loaded.ok()) catalogue = std::move(*loaded);
    }
    remote::DockerfileOptions options;
    options.catalogue = catalogue ? &*catalogue : nullptr;
    Result<std::string> dockerfile = remote::render_dockerfile(*config, options);
    if (!dockerfile.ok()) return fail(err, dockerfile.error());

    std::string context = c.context;
    bool temporary_context = false;
    if (context.empty() && config->container.build_engine) {
        Result<std::string> made = source_tarball(root);
        if (!made.ok()) return fail(err, made.error());
        context = *made;
        temporary_context = true;
    } else if (context.empty()) {
        // Nothing is copied from the context when the engine is not built: an empty archive will do.
        context = (fs::temp_directory_path() / ("slipway-empty-" + std::to_string(::getpid()) + ".tar.gz"))
                      .string();
        Result<std::string> command = remote::shell_command({"tar", "-czf", context, "-T", "/dev/null"});
        if (!command.ok() || std::system(command->c_str()) != 0)
            return fail(err, "cannot make an empty context");
        temporary_context = true;
    }

    Result<remote::ClusterProfile> profile = profile_store(c).find(c.cluster);
    if (!profile.ok()) return fail(err, profile.error());
    Result<std::unique_ptr<remote::Session>> session = connect_cluster(*profile, c.ssh);
    if (!session.ok()) return fail(err, session.error());
    Result<std::string> workdir = remote::resolve_remote_path(**session, profile->remote_workdir);
    if (!workdir.ok()) return fail(err, workdir.error());

    remote::RemoteBuildRequest request;
    std::string folder;
    for (char ch : c.image_tag)
        folder += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-') ? ch : '_';
    request.build_dir = *workdir + "/images/" + folder + "-" + std::to_string(std::time(nullptr));
    request.dockerfile = *dockerfile;
    request.context_tarball = context;
    request.image = c.image_tag;
    if (!c.sqsh.empty()) {
        Result<std::string> sqsh = remote::resolve_remote_path(**session, c.sqsh);
        if (!sqsh.ok()) return fail(err, sqsh.error());
        request.sqsh = *sqsh;
    }
    out << "building " << c.image_tag << " on " << (*session)->describe() << " in " << request.build_dir
        << "\n";
    Result<int> rc = remote::build_image_remotely(
        **session, request, [&out](const std::string& line) { out << line << std::endl; });
    if (temporary_context) fs::remove(context);
    if (!rc.ok()) return fail(err, rc.error());
    if (*rc != 0)
        return fail(err, "the build failed (exit " + std::to_string(*rc) + "); its log is " +
                             request.build_dir + "/build.log");
    out << "built " << c.image_tag << (request.sqsh.empty() ? "" : " and imported it to " + request.sqsh)
        << "\n";
    return 0;
}

}  // namespace slipway::app
