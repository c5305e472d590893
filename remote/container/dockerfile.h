// The Dockerfile of a run's training image, from the run config's `container` section: an NGC PyTorch
// base, apt packages, pinned pip packages that may never replace the image's torch (seed 000), env, a
// stage that builds slipway-engine from source against the image's own LibTorch, and WORKDIR.
#pragma once

#include <string>

#include "contract/run_config.h"
#include "contract/status.h"
#include "remote/container/ngc_catalogue.h"

namespace slipway::remote {

struct DockerfileOptions {
    // Versions of the base image for the header comment and the runtime library names; may be null.
    const NgcCatalogue* catalogue = nullptr;
    std::string workdir = "/workspace";
    // False only for the editor's live preview: the packages are rendered as typed (torch, unpinned ones)
    // so the linter can point at their line. A Dockerfile that is built always has a valid config.
    bool require_valid_config = true;
};

// Fails when the config does not validate (e.g. a pip package that is torch, or an unpinned one).
// The build context is the Slipway source tree (the engine stage copies it).
Result<std::string> render_dockerfile(const RunConfig& config, const DockerfileOptions& options = {});

}  // namespace slipway::remote
