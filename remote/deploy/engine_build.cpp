// Finding, building and listing a cluster's engines (see engine_build.h).
#include "remote/deploy/engine_build.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "contract/sha256.h"
#include "remote/deploy/deploy.h"
#include "remote/slurm/engine_build_script.h"
#include "remote/slurm/job_environment.h"
#include "remote/ssh/shell_quote.h"

namespace slipway::remote {
namespace {

constexpr const char* kManifest = "engine-manifest.json";
constexpr std::size_t kLogReadLimit = 8 << 20;

// A small remote file's text; empty when it is missing.
Result<std::string> read_small(Session& session, const std::string& path) {
    Result<std::string> text = session.read_range(path, 0, 1 << 20);
    if (!text.ok() && text.code() == StatusCode::kNotFound) return std::string();
    return text;
}

// The compiler's first error in a build log ("file.cpp:12:3: error: ..."), else CMake's, else its last lines.
std::string first_error(const std::string& log) {
    std::istringstream in(log);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        if (line.find(": error:") != std::string::npos || line.find(": fatal error:") != std::string::npos ||
            line.rfind("CMake Error", 0) == 0)
            return line;
        lines.push_back(line);
    }
    std::string tail;
    for (size_t i = lines.size() > 12 ? lines.size() - 12 : 0; i < lines.size(); ++i)
        tail += "\n  " + lines[i];
    return "no compiler error in it; its last lines:" + tail;
}

Status upload_bundle_once(Session& session, const EngineBundle& bundle, const std::string& remote) {
    Result<RemoteStat> there = session.stat(remote);
    if (!there.ok()) return there.status();
    std::error_code ec;
    const auto local_size = std::filesystem::file_size(bundle.path, ec);
    if (there->exists && !ec && there->size == local_size) return Status::Ok();
    if (Status s = session.mkdir_p(std::filesystem::path(remote).parent_path().string(), 0755); !s.ok())
        return s;
    return session.upload_file(bundle.path, remote, 0644);
}

// The torch that the profile's setup lines bring, as the login node sees it ("2.5.1+cu121"); "" when python3
// or torch is not there. On bare srun nothing else names it: a module or venv whose torch changes under the
// same lines must build again.
std::string login_torch_version(Session& session, const std::vector<std::string>& setup) {
    const std::string probe = "exec 3>&1 1>&2\n" + setup_block(setup) + "exec 1>&3 3>&-\n" +
                              "python3 -c 'import torch; print(torch.__version__)' 2>/dev/null\n";
    Result<std::string> script = shell_quote(probe, "torch probe");
    if (!script.ok()) return "";
    Result<ExecResult> answer = session.exec("bash -lc " + *script, std::chrono::seconds(60));
    if (!answer.ok() || answer->exit_status != 0) return "";
    std::istringstream lines(answer->out);  // site scripts may print before python does: its line is last
    std::string version;
    for (std::string line; std::getline(lines, line);)
        if (!line.empty()) version = line;
    const bool plain =
        version.size() < 64 && std::all_of(version.begin(), version.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || std::strchr(".+_-", c) != nullptr;
        });
    return plain ? version : "";
}

}  // namespace

Result<EngineBundle> read_engine_bundle(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::Error("engine bundle " + path + ": cannot be read");
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (bytes.str().empty()) return Status::Error("engine bundle " + path + ": is empty");
    return EngineBundle{path, sha256_hex(bytes.str())};
}

Result<EnginePlace> find_or_queue_engine(Session& session, SlurmClient& slurm, const RunConfig& config,
                                         const ClusterProfile& profile, const EngineBundle& bundle) {
    Result<JobEnvironment> environment = job_environment(config, profile);
    if (!environment.ok()) return environment.status();
    Result<std::string> workdir = resolve_remote_path(session, profile.remote_workdir);
    if (!workdir.ok()) return workdir.status();

    EnginePlace place;
    place.environment = "bundle " + bundle.sha256 + "\n" + describe_environment(*environment);
    // An image file rebuilt in place keeps its name: its size and mtime tell it apart.
    if (!environment->image.empty() && environment->image[0] == '/') {
        Result<RemoteStat> image = session.stat(environment->image);
        if (!image.ok()) return image.status();
        if (!image->exists)
            return Status::Error("/slurm/container_image: " + environment->image + " is not on " +
                                 session.describe());
        place.environment += "image-file " + std::to_string(image->size) + " bytes, mtime " +
                             std::to_string(image->mtime) + "\n";
    }
    if (environment->runtime == ContainerMode::kNone) {
        const std::string torch = login_torch_version(session, environment->setup);
        place.environment +=
            "torch " + (torch.empty() ? std::string("not found on the login node") : torch) + "\n";
    }
    place.fingerprint = sha256_hex(place.environment);
    place.dir = *workdir + "/engines/" + place.fingerprint.substr(0, 16);
    place.engine = place.dir + "/slipway-engine";
    const std::string where = environment->image.empty() ? "the nodes' own environment" : environment->image;
    place.why = "The engine built on this cluster from bundle " + bundle.sha256.substr(0, 12) + " for " +
                std::string(container_mode_name(environment->runtime)) + " (" + where + "), fingerprint " +
                place.fingerprint.substr(0, 16) + ".";

    Result<RemoteStat> manifest = session.stat(place.dir + "/" + kManifest);
    if (!manifest.ok()) return manifest.status();
    Result<RemoteStat> binary = session.stat(place.engine);
    if (!binary.ok()) return binary.status();
    if (manifest->exists && binary->exists) return place;

    // A build an earlier submission queued and that has not ended: wait on it rather than build twice.
    Result<std::string> earlier = read_small(session, place.dir + "/build.job");
    if (!earlier.ok()) return earlier.status();
    if (const std::string job = earlier->substr(0, earlier->find('\n'));
        !job.empty() && check_job_id(job).ok()) {
        Result<JobInfo> info = slurm.job(job);
        if (info.ok() && !is_terminal_state(info->state) && info->state != "UNKNOWN") {
            place.build_job = job;
            return place;
        }
    }

    const std::string remote_bundle =
        *workdir + "/engine/slipway-engine-src-" + bundle.sha256.substr(0, 16) + ".tar.gz";
    if (Status s = upload_bundle_once(session, bundle, remote_bundle); !s.ok()) return s;
    Result<std::string> script =
        render_engine_build_script(config, profile, {place.dir, remote_bundle, place.fingerprint});
    if (!script.ok()) return script.status();
    if (Status s = session.mkdir_p(place.dir, 0755); !s.ok()) return s;
    if (Status s = session.upload_bytes(place.environment, place.dir + "/environment.txt", 0644); !s.ok())
        return s;
    if (Status s = session.upload_bytes(*script, place.dir + "/build.sbatch", 0755); !s.ok()) return s;
    Result<SubmittedJob> job = slurm.submit(place.dir, "build.sbatch");
    if (!job.ok()) return Status::Error("the engine's build job was refused: " + job.error());
    place.build_job = job->job_id;
    if (Status s = session.upload_bytes(job->job_id + "\n", place.dir + "/build.job", 0644); !s.ok())
        return s;
    return place;
}

std::string engine_dir_placeholder(const ClusterProfile& profile) {
    return profile.remote_workdir + "/engines/FINGERPRINT";
}

std::string engine_build_log(const EnginePlace& place) {
    return place.dir + "/build-" + place.build_job + ".out";
}

namespace {

// Hands the build log's new complete lines to `watch.log_line`, from `offset` on (moved past them). The log
// appears only once the job starts; until then there is nothing to read.
void follow_build_log(Session& session, const std::string& log, const EngineBuildWatch& watch,
                      uint64_t& offset, std::string& partial) {
    if (!watch.log_line) return;
    Result<std::string> text = session.read_range(log, offset, kLogReadLimit);
    if (!text.ok()) return;  // not there yet; a lasting failure shows in the final read
    offset += text->size();
    partial += *text;
    std::size_t start = 0;
    for (std::size_t end; (end = partial.find('\n', start)) != std::string::npos; start = end + 1)
        watch.log_line(partial.substr(start, end - start));
    partial.erase(0, start);
}

}  // namespace

Status wait_for_engine(Session& session, SlurmClient& slurm, const EnginePlace& place,
                       const EngineBuildWatch& watch) {
    const std::string log = engine_build_log(place);
    std::string last_state;
    uint64_t offset = 0;
    std::string partial;  // a line the log has not ended yet
    for (;;) {
        Result<JobInfo> info = slurm.job(place.build_job);
        if (!info.ok()) return info.status();
        if (info->state != last_state && watch.progress) watch.progress(info->state + info->reason_suffix());
        last_state = info->state;
        follow_build_log(session, log, watch, offset, partial);
        if (is_terminal_state(info->state) || info->state == "UNKNOWN") break;
        if (watch.stop_requested && watch.stop_requested()) {
            if (Status s = slurm.cancel(place.build_job); !s.ok()) return s;
            return Status::Error("cancelled: the engine's build (job " + place.build_job + ") was cancelled");
        }
        std::this_thread::sleep_for(watch.poll);
    }
    if (!partial.empty() && watch.log_line) watch.log_line(partial);
    Result<RemoteStat> manifest = session.stat(place.dir + "/" + kManifest);
    if (!manifest.ok()) return manifest.status();
    if (manifest->exists && last_state != "FAILED") return Status::Ok();
    Result<std::string> text = session.read_range(log, 0, kLogReadLimit);
    const std::string said = text.ok() ? first_error(*text) : "its log cannot be read: " + text.error();
    return Status::Error("the engine's build (job " + place.build_job + ", " + last_state +
                         ") failed: " + said + "\n  build log: " + log);
}

Result<EnginePlace> find_or_build_engine(Session& session, SlurmClient& slurm, const RunConfig& config,
                                         const ClusterProfile& profile, const std::string& bundle_path,
                                         const EngineBuildWatch& watch) {
    Result<EngineBundle> bundle = read_engine_bundle(bundle_path);
    if (!bundle.ok()) return bundle.status();
    Result<EnginePlace> place = find_or_queue_engine(session, slurm, config, profile, *bundle);
    if (!place.ok()) return place.status();
    const auto say = [&watch](const std::string& line) {
        if (watch.progress) watch.progress(line);
    };
    if (place->cached()) {
        say("engine " + place->engine + " (built before)");
        return place;
    }
    say("building the engine in job " + place->build_job + " (log " + engine_build_log(*place) + ")");
    EngineBuildWatch states = watch;
    states.progress = [&say](const std::string& state) { say("build job: " + state); };
    if (Status built = wait_for_engine(session, slurm, *place, states); !built.ok()) return built;
    return place;
}

Result<std::vector<BuiltEngine>> list_engines(Session& session, const ClusterProfile& profile) {
    Result<std::string> workdir = resolve_remote_path(session, profile.remote_workdir);
    if (!workdir.ok()) return workdir.status();
    std::vector<BuiltEngine> engines;
    Result<std::vector<RemoteDirEntry>> entries = session.list_directory(*workdir + "/engines");
    if (!entries.ok() && entries.code() == StatusCode::kNotFound) return engines;
    if (!entries.ok()) return entries.status();
    for (const RemoteDirEntry& entry : *entries) {
        if (entry.type != RemoteEntryType::kDirectory) continue;
        BuiltEngine engine;
        engine.dir = *workdir + "/engines/" + entry.name;
        Result<std::string> manifest = read_small(session, engine.dir + "/" + kManifest);
        Result<std::string> environment = read_small(session, engine.dir + "/environment.txt");
        if (!manifest.ok()) return manifest.status();
        if (!environment.ok()) return environment.status();
        engine.manifest = *manifest;
        engine.environment = *environment;
        engines.push_back(std::move(engine));
    }
    return engines;
}

}  // namespace slipway::remote
