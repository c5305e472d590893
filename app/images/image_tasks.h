// What `slipway image build` and the editor's Container page share: the run's Dockerfile rendered with the
// NGC catalogue, the build context (a git archive of the source tree, or an empty archive when the image
// does not build the engine), the remote folders, and the build or enroot import run on a Session with its
// output streamed; plus whether the Container page's buttons can run for a target, and why not. No Qt:
// the CLI prints the lines, the app's ImageJob carries them to the page from a worker thread.
#pragma once

#include <functional>
#include <string>

#include "contract/run_config.h"
#include "contract/status.h"
#include "remote/container/image_build.h"
#include "remote/slurm/cluster_profile.h"
#include "remote/ssh/session.h"

namespace slipway::app {

enum class ImageAction {
    kBuild,   // docker build on the profile's login host (seed 000 step 2a)
    kImport,  // enroot import of the built image into a .sqsh for pyxis (step 2b)
};

struct ImageTask {
    ImageAction action = ImageAction::kBuild;
    RunConfig config;         // its container section makes the Dockerfile
    std::string image;        // the tag to build, or the built image to import
    std::string sqsh;         // import: where the .sqsh goes; build: also import there when set. "~" and
                              // relative paths are the remote home's
    std::string context;      // build: a local .tar.gz build context; empty: made here
    std::string source_root;  // the Slipway tree (NGC catalogue, git archive); may be empty
    std::string remote_workdir = "~/slipway";  // the profile's: images/ and bin/ live in it
    // tool_dir empty: <remote_workdir>/bin, where a user may keep an enroot or docker of their own.
    remote::RemoteJobOptions job;
};

// The Dockerfile a build uses: the config must be valid; the catalogue comes from source_root if there.
Result<std::string> image_dockerfile(const RunConfig& config, const std::string& source_root);

struct ImageTaskOutcome {
    int exit_status = 0;   // of the remote build or import: 0 is done
    std::string log_path;  // on the host
};

// Runs the task on `session` (connected to the profile's login host): a first line says what runs where,
// then every line of the remote output.
Result<ImageTaskOutcome> run_image_task(remote::Session& session, const ImageTask& task,
                                        const std::function<void(const std::string& line)>& on_line);

// "slipway/<run name>:<NGC release>" ("custom" for other bases), always a valid image reference.
std::string default_image_tag(const RunConfig& config);

// Whether a Container page button can run; `reason` (its tooltip) says what it does or why it cannot.
struct ImageActionState {
    bool enabled = false;
    std::string reason;
};

// `target` is the profile the run goes to, null for This computer (which has no build host).
ImageActionState image_action_state(ImageAction action, const RunConfig& config, bool config_valid,
                                    const remote::ClusterProfile* target, const std::string& image,
                                    bool task_running);

}  // namespace slipway::app
