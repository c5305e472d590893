// Deployment and submission of a run (see deploy.h).
#include "remote/deploy/deploy.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "contract/json_text.h"
#include "remote/slurm/sbatch_script.h"
#include "remote/ssh/shell_quote.h"

namespace slipway::remote {
namespace {

namespace fs = std::filesystem;

constexpr std::chrono::seconds kEngineBuildPoll{5};

std::string trim_newlines(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
        text.pop_back();
    return text;
}

class Uploader {
public:
    Uploader(Session& session, Deployment& deployment) : session_(session), deployment_(deployment) {}

    Status file(const std::string& local, const std::string& remote, std::uint32_t mode) {
        const std::string parent = fs::path(remote).parent_path().string();
        if (Status s = session_.mkdir_p(parent, 0755); !s.ok()) return s;
        if (Status s = session_.upload_file(local, remote, mode); !s.ok()) return s;
        deployment_.uploaded.push_back(remote);
        return Status::Ok();
    }
    Status bytes(const std::string& text, const std::string& remote, std::uint32_t mode) {
        if (Status s = session_.upload_bytes(text, remote, mode); !s.ok()) return s;
        deployment_.uploaded.push_back(remote);
        return Status::Ok();
    }

    // A local file or folder (its regular files, not recursive: an HF model folder) -> inputs/<path>.
    Status input(const std::string& pointer, std::string& path, const std::string& input_root) {
        if (path.empty() || fs::path(path).is_absolute()) return Status::Ok();  // on the cluster already
        if (Status s = check_relative_input(pointer, path); !s.ok()) return s;
        const fs::path local = fs::path(input_root) / path;
        const std::string remote =
            deployment_.remote_dir + "/inputs/" + fs::path(path).lexically_normal().string();
        std::error_code ec;
        if (fs::is_regular_file(local, ec)) {
            if (Status s = file(local.string(), remote, 0644); !s.ok()) return s;
        } else if (fs::is_directory(local, ec)) {
            for (const auto& entry : fs::directory_iterator(local, ec)) {
                if (!entry.is_regular_file()) continue;
                const std::string name = entry.path().filename().string();
                if (Status s = file(entry.path().string(), remote + "/" + name, 0644); !s.ok()) return s;
            }
            if (Status s = session_.mkdir_p(remote, 0755); !s.ok()) return s;  // an empty folder still exists
        } else {
            return Status::Error(
                pointer + ": \"" + path + "\" is not a local file or folder under " + input_root +
                " (relative paths name local inputs Slipway uploads; use an absolute path for "
                "files already on the cluster)");
        }
        path = remote;
        return Status::Ok();
    }

    // /eval/tasks: the task file and the data files it names relative to itself, mirrored under inputs/ like
    // the other inputs, so the names in the uploaded task file still find them. Absolute data paths are on
    // the cluster already.
    Status eval_tasks(std::string& path, const std::string& input_root) {
        if (path.empty() || fs::path(path).is_absolute()) return Status::Ok();
        const std::string original = path;
        if (Status s = input("/eval/tasks", path, input_root); !s.ok()) return s;
        std::ifstream in(fs::path(input_root) / original, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        Result<nlohmann::json> doc = parse_json_text(text.str(), original);
        if (!doc.ok()) return Status::Error("/eval/tasks: " + doc.error());
        const auto tasks = doc->is_object() ? doc->find("tasks") : doc->end();
        if (tasks == doc->end() || !tasks->is_array()) return Status::Ok();  // the engine names the problem
        for (const nlohmann::json& task : *tasks) {
            if (!task.is_object() || !task.contains("data") || !task["data"].is_string()) continue;
            const fs::path data = task["data"].get<std::string>();
            if (data.empty() || data.is_absolute()) continue;
            std::string relative = (fs::path(original).parent_path() / data).lexically_normal().string();
            if (Status s = input("/eval/tasks", relative, input_root); !s.ok()) return s;
        }
        return Status::Ok();
    }

private:
    Session& session_;
    Deployment& deployment_;
};

// The run waits for the engine's build: afterok on it, merged into a dependency the run has already (a
// pipeline's step waits for the step before it too).
Status add_dependency(std::vector<std::string>& extra, const std::string& build_job) {
    if (build_job.empty()) return Status::Ok();
    if (Status s = check_job_id(build_job); !s.ok()) return s;
    for (std::string& directive : extra) {
        if (directive.rfind("--dependency=afterok:", 0) == 0) {
            directive += ":" + build_job;
            return Status::Ok();
        }
        if (directive.rfind("--dependency=", 0) == 0)
            return Status::Error("/slurm/extra: " + directive +
                                 " cannot also wait for the engine's build; use afterok:<job>");
    }
    extra.push_back("--dependency=afterok:" + build_job);
    if (std::find(extra.begin(), extra.end(), "--kill-on-invalid-dep=yes") == extra.end())
        extra.push_back("--kill-on-invalid-dep=yes");
    return Status::Ok();
}

}  // namespace

Status check_relative_input(const std::string& pointer, const std::string& path) {
    for (const auto& part : fs::path(path)) {
        if (part == "..")
            return Status::Error(pointer + ": \"" + path + "\": '..' is not allowed in an uploaded input");
    }
    return Status::Ok();
}

Result<std::string> resolve_remote_path(Session& session, const std::string& path) {
    if (!path.empty() && path[0] == '/') return path;
    Result<ExecResult> home = session.exec("printf '%s' \"$HOME\"", std::chrono::seconds(30));
    if (!home.ok()) return home.status();
    const std::string dir = trim_newlines(home->out);
    if (home->exit_status != 0 || dir.empty() || dir[0] != '/')
        return Status::Error(session.describe() + ": cannot read the remote $HOME (" + home->err + ")");
    if (path.empty() || path == "~") return dir;
    if (path.rfind("~/", 0) == 0) return dir + path.substr(1);
    if (path[0] == '~')
        return Status::Error("\"" + path + "\": only ~/ (the login user's home) is understood");
    return dir + "/" + path;
}

Result<Deployment> deploy_run(Session& session, const DeployRequest& request) {
    if (Status s = validate_profile(request.profile); !s.ok()) return s;
    const ConfigProblems problems = validate(request.config);
    if (has_errors(problems)) {
        return Status::Error("run config \"" + request.config.name + "\" is not valid:\n" +
                             format_problems(problems));
    }
    // Everything that can be checked locally is checked before the first remote change.
    const EngineSource source = engine_source_of(request.profile);
    std::error_code ec;
    if (source == EngineSource::kDesktop &&
        (request.engine_binary.empty() || !fs::is_regular_file(request.engine_binary, ec)))
        return Status::Error("cluster \"" + request.profile.name +
                             "\" runs this computer's engine (engine_source desktop): it must be deployed, "
                             "but \"" +
                             request.engine_binary +
                             "\" is not a file (build slipway-engine or pass --engine)");
    if (source == EngineSource::kBuild && !request.engine_place)
        return Status::Error(
            "cluster \"" + request.profile.name +
            "\" builds its engine (engine_source build): submit the run, or build the engine "
            "first with `slipway engine build`");
    Deployment d;
    d.run_id = request.run_id.empty() ? make_run_id(request.config.name) : request.run_id;
    if (Status s = check_run_id(d.run_id); !s.ok()) return s;
    Result<std::string> workdir = resolve_remote_path(session, request.profile.remote_workdir);
    if (!workdir.ok()) return workdir.status();
    d.remote_dir = *workdir + "/runs/" + d.run_id;

    Result<RemoteStat> existing = session.stat(d.remote_dir);
    if (!existing.ok()) return existing.status();
    if (existing->exists) return Status::Error(session.describe() + ": " + d.remote_dir + " already exists");
    if (Status s = session.mkdir_p(d.remote_dir, 0755); !s.ok()) return s;

    // The config as the job sees it: uploaded inputs, outputs and caches inside the run folder.
    d.remote_config = request.config;
    RunConfig& c = d.remote_config;
    Uploader upload(session, d);
    if (Status s = upload.input("/model/path", c.model.path, request.input_root); !s.ok()) return s;
    if (Status s = upload.input("/tokenizer/path", c.tokenizer.path, request.input_root); !s.ok()) return s;
    if (Status s = upload.input("/data/train_file", c.data.train_file, request.input_root); !s.ok()) return s;
    if (Status s = upload.input("/data/validation_file", c.data.validation_file, request.input_root); !s.ok())
        return s;
    if (Status s = upload.input("/data/chat_template", c.data.chat_template, request.input_root); !s.ok())
        return s;
    if (Status s = upload.eval_tasks(c.eval.tasks, request.input_root); !s.ok()) return s;
    c.training.output_dir = d.remote_dir + "/output";
    if (c.data.cache_dir.empty() || !fs::path(c.data.cache_dir).is_absolute())
        c.data.cache_dir = d.remote_dir + "/" + (c.data.cache_dir.empty() ? "cache" : c.data.cache_dir);
    if (!c.training.resume_from_checkpoint.empty() && c.training.resume_from_checkpoint != "latest" &&
        !fs::path(c.training.resume_from_checkpoint).is_absolute())
        return Status::Error(
            "/training/resume_from_checkpoint: must be \"latest\" or an absolute path on the cluster");

    SbatchInputs inputs;
    inputs.run_dir = d.remote_dir;
    // The engine in the run folder: this computer's binary, or (built on the cluster) a line that runs the
    // built one, so whatever starts a run's engine later (chat) finds it there.
    const std::string run_engine = d.remote_dir + "/slipway-engine";
    if (source == EngineSource::kDesktop) {
        if (Status s = upload.file(request.engine_binary, run_engine, 0755); !s.ok()) return s;
        inputs.engine = run_engine;
        inputs.engine_why = "This computer's engine, uploaded (engine_source desktop).";
    } else if (source == EngineSource::kBuild) {
        const EnginePlace& place = *request.engine_place;
        Result<std::string> target = shell_quote(place.engine, "engine path");
        if (!target.ok()) return target.status();
        if (Status s = upload.bytes("#!/bin/sh\nexec " + *target + " \"$@\"\n", run_engine, 0755); !s.ok())
            return s;
        inputs.engine = place.engine;
        inputs.engine_dir = place.dir;
        inputs.engine_why = place.why;
        if (Status s = add_dependency(c.slurm.extra, place.build_job); !s.ok()) return s;
    } else {
        inputs.engine = "slipway-engine";
        inputs.engine_why = "The image's (or the environment's) slipway-engine (engine_source image).";
    }
    if (Status s = upload.bytes(to_json(c).dump(2) + "\n", d.remote_dir + "/run.json", 0644); !s.ok())
        return s;
    Result<std::string> script = render_sbatch_script(c, request.profile, inputs);
    if (!script.ok()) return script.status();
    d.script = *script;
    if (Status s = upload.bytes(d.script, d.remote_dir + "/run.sbatch", 0755); !s.ok()) return s;
    return d;
}

Result<std::vector<std::string>> list_run_outputs(Session& session, const std::string& run_dir,
                                                  bool checkpoints) {
    std::vector<std::string> files;
    // Files below `relative` (a folder under output/), depth first.
    std::function<Status(const std::string&)> walk = [&](const std::string& relative) -> Status {
        Result<std::vector<RemoteDirEntry>> listing = session.list_directory(run_dir + "/" + relative);
        if (!listing.ok()) return listing.status();
        for (const RemoteDirEntry& entry : *listing) {
            const std::string path = relative + "/" + entry.name;
            if (entry.type == RemoteEntryType::kFile) {
                files.push_back(path);
            } else if (entry.type == RemoteEntryType::kDirectory) {
                if (relative == "output" && !checkpoints && entry.name.rfind("checkpoint-", 0) == 0) continue;
                if (Status s = walk(path); !s.ok()) return s;
            }
        }
        return Status::Ok();
    };
    Result<std::vector<RemoteDirEntry>> top = session.list_directory(run_dir);
    if (!top.ok()) return top.status();
    for (const RemoteDirEntry& entry : *top) {
        const std::string& name = entry.name;
        const bool slurm_output = name.rfind("slurm-", 0) == 0 && fs::path(name).extension() == ".out";
        if (entry.type == RemoteEntryType::kFile &&
            (name == "run.json" || name == "run.sbatch" || slurm_output))
            files.push_back(name);
        if (entry.type == RemoteEntryType::kDirectory && name == "output") {
            if (Status s = walk(name); !s.ok()) return s;
        }
    }
    return files;
}

Result<SubmittedRun> submit_run(Session& session, SlurmClient& slurm, const DeployRequest& request,
                                const RunRecordSink& records) {
    DeployRequest built = request;
    if (engine_source_of(request.profile) == EngineSource::kBuild && !request.engine_place) {
        if (request.engine_bundle.empty())
            return Status::Error(
                "cluster \"" + request.profile.name +
                "\" builds its engine on the cluster (engine_source build), but this slipway "
                "carries no engine bundle");
        Result<EngineBundle> bundle = read_engine_bundle(request.engine_bundle);
        if (!bundle.ok()) return bundle.status();
        Result<EnginePlace> place =
            find_or_queue_engine(session, slurm, request.config, request.profile, *bundle);
        if (!place.ok()) return place.status();
        if (request.progress)
            request.progress(place->cached() ? "engine " + place->engine + " (built before)"
                                             : "building the engine in job " + place->build_job + " (log " +
                                                   engine_build_log(*place) + ")");
        built.engine_place = *place;
    }
    Result<Deployment> deployment = deploy_run(session, built);
    if (!deployment.ok()) return deployment.status();
    SubmittedRun run;
    run.engine = built.engine_place;
    run.deployment = std::move(*deployment);
    Result<std::string> preflight = slurm.test_only(run.deployment.remote_dir, "run.sbatch");
    if (!preflight.ok())
        return Status::Error(
            "pre-flight (sbatch --test-only) refused the job, nothing was submitted (the run folder " +
            run.deployment.remote_dir + " is left for inspection): " + preflight.error());
    run.test_only = *preflight;
    Result<SubmittedJob> job = slurm.submit(run.deployment.remote_dir, "run.sbatch");
    if (!job.ok()) return job.status();
    run.job = *job;
    RunRecord& r = run.record;
    r.run_id = run.deployment.run_id;
    r.name = request.config.name;
    r.cluster = request.profile.name;
    r.job_id = job->job_id;
    r.slurm_cluster = job->cluster;
    r.remote_dir = run.deployment.remote_dir;
    r.submitted = utc_timestamp(std::time(nullptr));
    r.last_state = "SUBMITTED";
    if (Status s = records.save(r, to_json(run.deployment.remote_config).dump(2)); !s.ok()) {
        return Status::Error("job " + r.job_id +
                             " was submitted, but its local record could not be saved: " + s.message());
    }
    if (run.engine && !run.engine->cached()) {
        EngineBuildWatch watch;
        watch.poll = kEngineBuildPoll;
        if (request.progress) {
            watch.progress = [&request, &run](const std::string& state) {
                request.progress("engine build job " + run.engine->build_job + ": " + state);
            };
        }
        const Status ready = wait_for_engine(session, slurm, *run.engine, watch);
        if (!ready.ok()) {
            (void)slurm.cancel(r.job_id);  // Slurm drops it too (--kill-on-invalid-dep); this is sooner
            return Status::Error("job " + r.job_id + " will not run: " + ready.message());
        }
    }
    return run;
}

}  // namespace slipway::remote
