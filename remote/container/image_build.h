// Turning a rendered Dockerfile into what pyxis runs: the enroot commands that make a .sqsh from a built
// image (from the Docker daemon, or from a saved tarball), and an optional build or import over a Session on
// a host with docker, whose output is streamed line by line while it runs.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "contract/status.h"
#include "remote/ssh/session.h"

namespace slipway::remote {

// Docker image references Slipway accepts: lowercase registry/path[:tag][@digest] without shell syntax.
Status check_image_reference(const std::string& image);

// `enroot import -o SQSH dockerd://IMAGE` (seed 000 step 2b; seed 003 imports the same way).
Result<std::string> enroot_import_command(const std::string& image, const std::string& sqsh);
// From a `docker save` tarball on a host without a Docker daemon: load it into podman, import from there.
Result<std::string> enroot_import_from_tarball_command(const std::string& tarball, const std::string& image,
                                                       const std::string& sqsh);

// How a detached job on the host (a build or an import) is followed.
struct RemoteJobOptions {
    // Put first on PATH for docker and enroot: tools a user installed in their own folder (e.g. an enroot
    // release in <remote_workdir>/bin). Empty: the host's PATH as it is.
    std::string tool_dir;
    std::chrono::milliseconds poll_interval{1000};
    std::chrono::seconds timeout{std::chrono::hours(2)};
    // Asked between polls; true stops following (the job itself goes on on the host, nohup'ed).
    std::function<bool()> stop_requested;
};

struct RemoteBuildRequest {
    std::string build_dir;        // absolute remote folder for the Dockerfile, context and build log
    std::string dockerfile;       // its text
    std::string context_tarball;  // local .tar.gz of the build context (e.g. `git archive` of Slipway)
    std::string image;            // tag to build
    std::string sqsh;             // when set: also `enroot import` the image to this remote path
    RemoteJobOptions job;
};

// Uploads the Dockerfile and context, starts the build detached on the host (nohup, so a dropped
// connection does not kill it), streams build.log through `on_line` as it grows, and returns the build's
// exit status once build.rc appears. Reconnects while following, like LogFollower.
Result<int> build_image_remotely(Session& session, const RemoteBuildRequest& request,
                                 const std::function<void(const std::string& line)>& on_line);

struct RemoteImportRequest {
    std::string dir;    // absolute remote folder for import.log and import.rc
    std::string image;  // an image the host's Docker daemon has (built there before)
    std::string sqsh;   // the .sqsh to write on the host
    RemoteJobOptions job;
};

// `enroot import` of an image already built on the host, detached and streamed like a build.
Result<int> import_image_remotely(Session& session, const RemoteImportRequest& request,
                                  const std::function<void(const std::string& line)>& on_line);

}  // namespace slipway::remote
