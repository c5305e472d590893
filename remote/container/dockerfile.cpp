// Renders the training image's Dockerfile (see dockerfile.h). Tests lint the output with hadolint.
#include "remote/container/dockerfile.h"

#include <algorithm>
#include <sstream>

namespace slipway::remote {
namespace {

// A Dockerfile ENV value in double quotes: \ " and $ escaped so the value arrives literally.
Result<std::string> env_value(const std::string& name, const std::string& value) {
    std::string out = "\"";
    for (char c : value) {
        if (c == '\n' || c == '\r') return Status::Error("/container/env/" + name + ": must be one line");
        if (c == '\\' || c == '"' || c == '$') out += '\\';
        out += c;
    }
    return out + "\"";
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& item : items)
        out += (out.empty() ? "" : " ") + item;
    return out;
}

// The ICU runtime the engine links, by Ubuntu release; the -dev package (which pulls it) otherwise.
std::string icu_runtime_package(const std::string& ubuntu) {
    if (ubuntu == "20.04") return "libicu66";
    if (ubuntu == "22.04") return "libicu70";
    if (ubuntu == "24.04") return "libicu74";
    return "libicu-dev";
}

constexpr const char* kAptInstall =
    "apt-get update \\\n    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ";
constexpr const char* kAptClean = " \\\n    && rm -rf /var/lib/apt/lists/*\n";

}  // namespace

Result<std::string> render_dockerfile(const RunConfig& config, const DockerfileOptions& options) {
    if (options.require_valid_config) {
        const ConfigProblems problems = validate(config);
        if (has_errors(problems))
            return Status::Error("run config \"" + config.name + "\" is not valid:\n" +
                                 format_problems(problems));
    }
    const ContainerConfig& c = config.container;
    if (options.workdir.empty() || options.workdir[0] != '/')
        return Status::Error("image WORKDIR must be an absolute path, got \"" + options.workdir + "\"");

    const NgcImage* ngc = nullptr;
    if (const auto tag = ngc_pytorch_tag(c.base); tag && options.catalogue)
        ngc = options.catalogue->find(*tag);

    std::ostringstream out;
    out << "# Training image of a Slipway run, rendered from its run config's container section.\n";
    if (ngc) {
        out << "# Base: NGC PyTorch " << ngc->tag << " (" << ngc->summary() << ").\n";
    } else if (ngc_pytorch_tag(c.base)) {
        out << "# Base: an NGC PyTorch release that is not in Slipway's catalogue; check its release "
               "notes.\n";
    } else {
        out << "# Base: not an NGC PyTorch image; multi-node runs were slower on such bases (seed 001).\n";
    }
    out << "# The base image's torch, CUDA and NCCL are built for each other: nothing below replaces "
           "torch.\n";
    out << "# Build context: the Slipway source tree, e.g. `docker build -f Dockerfile -t IMAGE "
           "<slipway-src>`.\n";
    out << "FROM " << c.base << " AS base\n\n";

    if (!c.env.empty()) {
        out << "ENV";
        const bool several = c.env.size() > 1;
        for (const auto& [name, value] : c.env) {
            Result<std::string> quoted = env_value(name, value);
            if (!quoted.ok()) return quoted.status();
            out << (several ? " \\\n    " : " ") << name << "=" << *quoted;
        }
        out << "\n\n";
    }
    if (!c.apt_packages.empty()) {
        std::vector<std::string> apt = c.apt_packages;
        std::sort(apt.begin(), apt.end());
        out << "RUN " << kAptInstall << joined(apt) << kAptClean << "\n";
    }
    // pip may add packages but never replace the image's torch: its exact installed version is a constraint
    // every later pip install obeys (a package that needs another torch fails the build instead).
    out << "RUN python -c 'import torch; print(\"torch==\" + torch.__version__)' > "
           "/opt/slipway-torch-constraint.txt\n";
    if (!c.pip_packages.empty()) {
        out << "RUN python -m pip install --no-cache-dir --constraint /opt/slipway-torch-constraint.txt \\\n "
               "   "
            << joined(c.pip_packages) << "\n";
    }
    out << "\n";

    if (c.build_engine) {
        out << "# slipway-engine, built against this image's own LibTorch (torch.utils.cmake_prefix_path).\n";
        out << "FROM base AS engine\n";
        out << "RUN " << kAptInstall << "nlohmann-json3-dev libcli11-dev libpcre2-dev libicu-dev"
            << kAptClean;
        out << "RUN python -m pip install --no-cache-dir --constraint /opt/slipway-torch-constraint.txt "
               "cmake==3.29.6\n";
        out << "COPY . /src/slipway\n";
        out << "RUN cmake -S /src/slipway -B /src/build -DCMAKE_BUILD_TYPE=Release \\\n"
               "        -DSLIPWAY_BUILD_APP=OFF -DSLIPWAY_BUILD_REMOTE=OFF -DSLIPWAY_BUILD_TESTS=OFF \\\n"
               "        -DCMAKE_PREFIX_PATH=\"$(python -c 'import torch; "
               "print(torch.utils.cmake_prefix_path)')\" \\\n"
               "    && cmake --build /src/build --target slipway-engine -j\"$(nproc)\"\n\n";
        out << "FROM base\n";
        out << "RUN " << kAptInstall << "libpcre2-8-0 " << icu_runtime_package(ngc ? ngc->ubuntu : "")
            << kAptClean;
        out << "COPY --from=engine /src/build/bin/slipway-engine /usr/local/bin/slipway-engine\n";
        out << "RUN slipway-engine --version\n";
    }
    out << "WORKDIR " << options.workdir << "\n";
    return out.str();
}

}  // namespace slipway::remote
