// ClusterProfile validation, JSON mapping and the clusters.json store (see cluster_profile.h).
#include "remote/slurm/cluster_profile.h"

#include <algorithm>
#include <filesystem>
#include <regex>

#include "remote/slurm/local_files.h"

namespace slipway::remote {
namespace {

constexpr const char* kClustersSchema = "slipway.clusters/1";

bool has_control_char(const std::string& text) {
    return std::any_of(text.begin(), text.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

// A value handed to ssh or Slurm as one word: no control characters, no leading '-' (it would read as an
// option), no whitespace.
std::string check_word(const std::string& value) {
    if (has_control_char(value)) return "must not contain control characters";
    if (!value.empty() && value[0] == '-') return "must not start with '-'";
    if (value.find_first_of(" \t") != std::string::npos) return "must not contain spaces";
    return "";
}

// host, user and proxy_jump reach ssh's %h %r %n tokens, which a ProxyCommand hands to /bin/sh: a
// clusters.json from someone else must not carry shell syntax into it. Host names, IPs ([v6]:port),
// ssh:// hops and user names never need these characters.
std::string check_ssh_word(const std::string& value) {
    if (std::string why = check_word(value); !why.empty()) return why;
    const std::size_t bad = value.find_first_of("'\"$`;&|<>(){}*?!#~\\");
    if (bad != std::string::npos)
        return std::string("must not contain shell characters such as '") + value[bad] + "'";
    return "";
}

}  // namespace

const char* container_mode_name(ContainerMode mode) {
    switch (mode) {
        case ContainerMode::kPyxis:
            return "pyxis";
        case ContainerMode::kApptainer:
            return "apptainer";
        case ContainerMode::kSingularity:
            return "singularity";
        case ContainerMode::kNone:
            break;
    }
    return "none";
}

Result<ContainerMode> parse_container_mode(const std::string& text) {
    for (const ContainerMode mode : {ContainerMode::kNone, ContainerMode::kPyxis, ContainerMode::kApptainer,
                                     ContainerMode::kSingularity})
        if (text == container_mode_name(mode)) return mode;
    return Status::Error("container mode must be none, pyxis, apptainer or singularity, got \"" + text +
                         "\"");
}

bool takes_image(ContainerMode mode) {
    return mode != ContainerMode::kNone;
}

const char* engine_source_name(EngineSource source) {
    switch (source) {
        case EngineSource::kImage:
            return "image";
        case EngineSource::kDesktop:
            return "desktop";
        case EngineSource::kBuild:
            break;
    }
    return "build";
}

EngineSource engine_source_of(const ClusterProfile& profile) {
    if (profile.engine_source) return *profile.engine_source;
    return profile.container == ContainerMode::kNone ? EngineSource::kDesktop : EngineSource::kImage;
}

Result<EngineSource> parse_engine_source(const std::string& text) {
    for (const EngineSource source : {EngineSource::kBuild, EngineSource::kImage, EngineSource::kDesktop})
        if (text == engine_source_name(source)) return source;
    return Status::Error("engine source must be build, image or desktop, got \"" + text + "\"");
}

Status validate_profile(const ClusterProfile& p) {
    const std::string who = "cluster \"" + p.name + "\": ";
    static const std::regex name_pattern("[A-Za-z0-9._-]+");
    if (!std::regex_match(p.name, name_pattern))
        return Status::Error(who + "name: must be letters, digits, '.', '_' or '-'");
    if (p.host.empty()) return Status::Error(who + "host: must not be empty");
    const std::pair<const char*, const std::string*> words[] = {{"host", &p.host},
                                                                {"user", &p.user},
                                                                {"proxy_jump", &p.proxy_jump},
                                                                {"default_partition", &p.default_partition},
                                                                {"default_account", &p.default_account},
                                                                {"default_qos", &p.default_qos}};
    for (const auto& [field, value] : words) {
        const bool ssh_word = value == &p.host || value == &p.user || value == &p.proxy_jump;
        if (std::string why = ssh_word ? check_ssh_word(*value) : check_word(*value); !why.empty())
            return Status::Error(who + field + ": " + why);
    }
    if (p.port && (*p.port < 1 || *p.port > 65535))
        return Status::Error(who + "port: must be 1..65535, got " + std::to_string(*p.port));
    if (has_control_char(p.identity_file))
        return Status::Error(who + "identity_file: must not contain control characters");
    if (p.remote_workdir.empty()) return Status::Error(who + "remote_workdir: must not be empty");
    if (has_control_char(p.remote_workdir))
        return Status::Error(who + "remote_workdir: must not contain control characters");
    // Each line is one shell line of the job script, written as given (it is the user's own shell).
    for (size_t i = 0; i < p.env_setup.size(); ++i) {
        const std::string& line = p.env_setup[i];
        if (line.find_first_not_of(" \t") == std::string::npos || has_control_char(line))
            return Status::Error(who + "env_setup[" + std::to_string(i) +
                                 "]: must be one non-empty line without control characters");
    }
    return Status::Ok();
}

nlohmann::ordered_json profile_to_json(const ClusterProfile& p) {
    nlohmann::ordered_json j;
    j["name"] = p.name;
    j["host"] = p.host;
    j["port"] = p.port ? nlohmann::ordered_json(*p.port) : nlohmann::ordered_json(nullptr);
    j["user"] = p.user;
    j["identity_file"] = p.identity_file;
    j["proxy_jump"] = p.proxy_jump;
    j["remote_workdir"] = p.remote_workdir;
    j["container"] = container_mode_name(p.container);
    j["env_setup"] = p.env_setup;
    if (p.engine_source) j["engine_source"] = engine_source_name(*p.engine_source);
    j["default_partition"] = p.default_partition;
    j["default_account"] = p.default_account;
    j["default_qos"] = p.default_qos;
    return j;
}

Result<ClusterProfile> profile_from_json(const nlohmann::json& json, const std::string& where) {
    if (!json.is_object()) return Status::Error(where + ": a cluster profile must be a JSON object");
    ClusterProfile p;
    const std::string name = json.contains("name") && json["name"].is_string()
                                 ? json["name"].get<std::string>()
                                 : std::string("?");
    const std::string who = where + ": cluster \"" + name + "\": ";
    const std::pair<const char*, std::string*> strings[] = {{"name", &p.name},
                                                            {"host", &p.host},
                                                            {"user", &p.user},
                                                            {"identity_file", &p.identity_file},
                                                            {"proxy_jump", &p.proxy_jump},
                                                            {"remote_workdir", &p.remote_workdir},
                                                            {"default_partition", &p.default_partition},
                                                            {"default_account", &p.default_account},
                                                            {"default_qos", &p.default_qos}};
    for (auto it = json.begin(); it != json.end(); ++it) {
        const std::string& key = it.key();
        const nlohmann::json& value = it.value();
        bool known = false;
        for (const auto& [field, target] : strings) {
            if (key != field) continue;
            if (!value.is_string()) return Status::Error(who + key + ": must be a string");
            *target = value.get<std::string>();
            known = true;
        }
        if (known) continue;
        if (key == "port") {
            if (value.is_null()) {
                p.port.reset();
            } else if (value.is_number_integer()) {
                p.port = value.get<int>();
            } else {
                return Status::Error(who + "port: must be an integer or null");
            }
        } else if (key == "container") {
            if (!value.is_string()) return Status::Error(who + "container: must be a string");
            Result<ContainerMode> mode = parse_container_mode(value.get<std::string>());
            if (!mode.ok()) return Status::Error(who + "container: " + mode.error());
            p.container = *mode;
        } else if (key == "engine_source") {
            Result<EngineSource> source = value.is_string()
                                              ? parse_engine_source(value.get<std::string>())
                                              : Result<EngineSource>(Status::Error("must be a string"));
            if (!source.ok()) return Status::Error(who + "engine_source: " + source.error());
            p.engine_source = *source;
        } else if (key == "env_setup") {
            const bool lines = value.is_array() && std::all_of(value.begin(), value.end(),
                                                               [](const auto& v) { return v.is_string(); });
            if (!lines) return Status::Error(who + "env_setup: must be an array of strings (shell lines)");
            p.env_setup = value.get<std::vector<std::string>>();
        } else {
            return Status::Error(who + key + ": unknown field");
        }
    }
    if (Status s = validate_profile(p); !s.ok()) return Status::Error(where + ": " + s.message());
    return p;
}

std::string default_clusters_file() {
    return slipway_config_dir() + "/clusters.json";
}

Result<std::vector<ClusterProfile>> ProfileStore::load() const {
    std::error_code ec;
    if (!std::filesystem::exists(path_, ec)) return std::vector<ClusterProfile>{};
    Result<std::string> text = read_local_file(path_);
    if (!text.ok()) return text.status();
    const nlohmann::json doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return Status::Error(path_ + ": not valid JSON");
    if (!doc.is_object() || !doc.contains("clusters") || !doc["clusters"].is_array())
        return Status::Error(path_ + ": expected {\"schema\": \"" + std::string(kClustersSchema) +
                             "\", \"clusters\": [...]}");
    if (doc.contains("schema") && doc["schema"] != kClustersSchema)
        return Status::Error(path_ + ": schema must be \"" + std::string(kClustersSchema) + "\"");
    std::vector<ClusterProfile> profiles;
    for (const nlohmann::json& item : doc["clusters"]) {
        Result<ClusterProfile> p = profile_from_json(item, path_);
        if (!p.ok()) return p.status();
        for (const ClusterProfile& seen : profiles) {
            if (seen.name == p->name) return Status::Error(path_ + ": cluster \"" + p->name + "\" twice");
        }
        profiles.push_back(std::move(*p));
    }
    return profiles;
}

Result<ClusterProfile> ProfileStore::find(const std::string& name) const {
    Result<std::vector<ClusterProfile>> all = load();
    if (!all.ok()) return all.status();
    for (const ClusterProfile& p : *all) {
        if (p.name == name) return p;
    }
    return Status::Error("no cluster named \"" + name + "\" in " + path_ +
                         " (add it with `slipway clusters add`)");
}

Status ProfileStore::put(const ClusterProfile& profile) const {
    if (Status s = validate_profile(profile); !s.ok()) return s;
    Result<std::vector<ClusterProfile>> all = load();
    if (!all.ok()) return all.status();
    auto it = std::find_if(all->begin(), all->end(), [&](const auto& p) { return p.name == profile.name; });
    if (it != all->end()) {
        *it = profile;
    } else {
        all->push_back(profile);
    }
    return save(*all);
}

Status ProfileStore::remove(const std::string& name) const {
    Result<std::vector<ClusterProfile>> all = load();
    if (!all.ok()) return all.status();
    auto it = std::find_if(all->begin(), all->end(), [&](const auto& p) { return p.name == name; });
    if (it == all->end()) return Status::Error("no cluster named \"" + name + "\" in " + path_);
    all->erase(it);
    return save(*all);
}

Status ProfileStore::save(const std::vector<ClusterProfile>& profiles) const {
    nlohmann::ordered_json doc;
    doc["schema"] = kClustersSchema;
    doc["clusters"] = nlohmann::ordered_json::array();
    for (const ClusterProfile& p : profiles) {
        if (Status s = validate_profile(p); !s.ok()) return s;
        doc["clusters"].push_back(profile_to_json(p));
    }
    return write_file_atomically(path_, doc.dump(2) + "\n", 0600);
}

}  // namespace slipway::remote
