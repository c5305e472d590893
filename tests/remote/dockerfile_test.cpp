// Tests of the NGC catalogue and the Dockerfile renderer: the shipped catalogue loads and says where its
// numbers come from; the Dockerfile has the NGC base, sorted apt packages, pinned pip packages under a
// torch constraint, escaped env, the engine build stage against the image's torch, and WORKDIR.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "contract/run_config.h"
#include "remote/container/dockerfile.h"
#include "remote/container/ngc_catalogue.h"
#include "test_paths.h"

namespace slipway::remote {
namespace {

const std::string kCatalogue = std::string(test_paths::source_dir("/resources/containers/ngc-pytorch.json"));

RunConfig preset(const std::string& name) {
    Result<RunConfig> config =
        load_run_config(std::string(test_paths::source_dir("/resources/presets/")) + name);
    EXPECT_TRUE(config.ok()) << config.error();
    return config.ok() ? *config : RunConfig{};
}

TEST(NgcCatalogue, ShippedCatalogueHasTheSeedsReleases) {
    Result<NgcCatalogue> catalogue = load_ngc_catalogue(kCatalogue);
    ASSERT_TRUE(catalogue.ok()) << catalogue.error();
    const NgcImage* r2404 = catalogue->find("24.04");
    ASSERT_NE(r2404, nullptr);
    EXPECT_EQ(r2404->image(), "nvcr.io/nvidia/pytorch:24.04-py3");
    EXPECT_EQ(r2404->ubuntu, "22.04");
    EXPECT_EQ(r2404->python, "3.10");
    EXPECT_EQ(r2404->nccl, "2.21.5");  // seed 001
    const NgcImage* r2408 = catalogue->find("24.08");
    ASSERT_NE(r2408, nullptr);
    EXPECT_EQ(r2408->cuda, "12.6");  // seed 000
    EXPECT_EQ(r2408->nccl, "2.22.3");
    EXPECT_EQ(r2408->torch, "2.5.0a0+872d972e41");
    for (const NgcImage& image : catalogue->images)
        EXPECT_FALSE(image.source.empty()) << image.tag;
    EXPECT_EQ(r2404->summary(),
              "Ubuntu 22.04, Python 3.10, CUDA 12.4.1, torch 2.3.0a0+6ddf5cf85e, NCCL 2.21.5");
}

TEST(NgcCatalogue, TagsAndErrors) {
    EXPECT_EQ(ngc_pytorch_tag("nvcr.io/nvidia/pytorch:24.04-py3"), "24.04");
    EXPECT_FALSE(ngc_pytorch_tag("pytorch/pytorch:2.3.0-cuda12.1-cudnn8-devel").has_value());
    const std::string path =
        (std::filesystem::temp_directory_path() / ("slipway-ngc-" + std::to_string(::getpid()) + ".json"))
            .string();
    std::ofstream(path) << R"({"images": [{"tag": "24.4", "source": "x"}]})";
    Result<NgcCatalogue> bad = load_ngc_catalogue(path);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("images[0].tag"), std::string::npos);
    std::filesystem::remove(path);
}

TEST(Dockerfile, SeedStyleImage) {
    RunConfig config = preset("saiga-lora.json");
    config.container.base = "nvcr.io/nvidia/pytorch:24.04-py3";
    config.container.apt_packages = {"nano", "git"};
    config.container.pip_packages = {"transformers==4.37.2", "peft==0.9.0"};
    config.container.env = {{"HF_HOME", "/scratch/$USER \"cache\""}, {"NCCL_DEBUG", "WARN"}};
    Result<NgcCatalogue> catalogue = load_ngc_catalogue(kCatalogue);
    ASSERT_TRUE(catalogue.ok());
    DockerfileOptions options;
    options.catalogue = &*catalogue;
    Result<std::string> text = render_dockerfile(config, options);
    ASSERT_TRUE(text.ok()) << text.error();
    const std::string& d = *text;
    EXPECT_NE(d.find("FROM nvcr.io/nvidia/pytorch:24.04-py3 AS base\n"), std::string::npos) << d;
    EXPECT_NE(d.find("NCCL 2.21.5"), std::string::npos);
    EXPECT_NE(d.find("install -y --no-install-recommends git nano \\\n"), std::string::npos) << d;
    EXPECT_NE(
        d.find("--constraint /opt/slipway-torch-constraint.txt \\\n    transformers==4.37.2 peft==0.9.0\n"),
        std::string::npos)
        << d;
    EXPECT_NE(d.find("HF_HOME=\"/scratch/\\$USER \\\"cache\\\"\""), std::string::npos) << d;
    EXPECT_NE(d.find("torch.utils.cmake_prefix_path"), std::string::npos);
    EXPECT_NE(d.find("--target slipway-engine"), std::string::npos);
    EXPECT_NE(d.find("libicu70"), std::string::npos);
    EXPECT_NE(d.find("COPY --from=engine /src/build/bin/slipway-engine /usr/local/bin/slipway-engine\n"),
              std::string::npos);
    EXPECT_EQ(d.substr(d.size() - std::string("WORKDIR /workspace\n").size()), "WORKDIR /workspace\n");
    // The constraint is written before any pip install.
    EXPECT_LT(d.find("> /opt/slipway-torch-constraint.txt"), d.find("python -m pip install"));
}

TEST(Dockerfile, RefusesToReinstallTorch) {
    RunConfig config = preset("saiga-lora.json");
    config.container.pip_packages = {"torch==2.5.1"};
    Result<std::string> text = render_dockerfile(config);
    ASSERT_FALSE(text.ok());
    EXPECT_NE(text.error().find("/container/pip_packages/0"), std::string::npos);
    EXPECT_NE(text.error().find("must not be reinstalled"), std::string::npos);
    config.container.pip_packages = {"transformers"};
    EXPECT_NE(render_dockerfile(config).error().find("pinned"), std::string::npos);
}

TEST(Dockerfile, WithoutEngineStage) {
    RunConfig config = preset("saiga-lora.json");
    config.container.build_engine = false;
    Result<std::string> text = render_dockerfile(config);
    ASSERT_TRUE(text.ok()) << text.error();
    EXPECT_EQ(text->find("slipway-engine"), std::string::npos);
    EXPECT_EQ(text->find("FROM base"), std::string::npos);
}

}  // namespace
}  // namespace slipway::remote
