// The NGC PyTorch catalogue (resources/containers/ngc-pytorch.json): which Ubuntu, Python, CUDA, torch and
// NCCL each nvcr.io/nvidia/pytorch:<tag>-py3 image holds, so the app can show what a base tag brings and
// the Dockerfile can say it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "contract/status.h"

namespace slipway::remote {

struct NgcImage {
    std::string tag;  // "24.04"
    std::string ubuntu;
    std::string python;
    std::string cuda;
    std::string torch;
    std::string nccl;    // empty when the catalogue has no confirmed number
    std::string source;  // where the numbers were read

    std::string image() const { return "nvcr.io/nvidia/pytorch:" + tag + "-py3"; }
    // "Ubuntu 22.04, Python 3.10, CUDA 12.4.1, torch 2.3.0a0+6ddf5cf85e, NCCL 2.21.5" (unknowns left out).
    std::string summary() const;
};

struct NgcCatalogue {
    std::vector<NgcImage> images;
    const NgcImage* find(const std::string& tag) const;
};

// Errors name the file and the entry.
Result<NgcCatalogue> load_ngc_catalogue(const std::string& path);

// "nvcr.io/nvidia/pytorch:24.04-py3" -> "24.04"; nullopt for any other image.
std::optional<std::string> ngc_pytorch_tag(const std::string& image);

}  // namespace slipway::remote
