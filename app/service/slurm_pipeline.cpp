// submit_pipeline: the chain's folder, the engine for its CPU steps, then each step in order.
#include "service/slurm_pipeline.h"

#include <algorithm>

#include <ctime>
#include <filesystem>
#include <optional>

#include "contract/run_config.h"
#include "remote/deploy/deploy.h"
#include "remote/deploy/engine_build.h"

namespace slipway::app {
namespace {

namespace fs = std::filesystem;

// The eval task file's data files, relative to it (engine/eval/README.md): uploaded beside it.
std::vector<std::string> task_data_files(const std::string& tasks_file) {
    std::vector<std::string> out;
    Result<nlohmann::json> doc = read_json_file(tasks_file);
    if (!doc.ok() || !doc->contains("tasks") || !(*doc)["tasks"].is_array()) return out;
    for (const nlohmann::json& task : (*doc)["tasks"])
        if (task.is_object() && task.contains("data") && task["data"].is_string())
            out.push_back(task["data"]);
    return out;
}

// A relative input of a CPU step: a local file under `input_root`, uploaded into <run_dir>/inputs/ (an eval
// task file with its data files); the remote path the engine is given.
Result<std::string> upload_step_input(remote::Session& session, const std::string& input_root,
                                      const std::string& run_dir, const std::string& pointer,
                                      const std::string& path) {
    const fs::path rel = fs::path(path).lexically_normal();
    if (Status s = remote::check_relative_input(pointer, rel.string()); !s.ok()) return s;
    const std::string local = (fs::path(input_root) / rel).string();
    const std::string remote_path = run_dir + "/inputs/" + rel.string();
    if (Status s = session.mkdir_p(fs::path(remote_path).parent_path().string(), 0755); !s.ok()) return s;
    if (Status s = session.upload_file(local, remote_path, 0644); !s.ok())
        return Status::Error(pointer + ": " + s.message());
    if (pointer.size() > 6 && pointer.substr(pointer.size() - 6) == "/tasks") {
        for (const std::string& data : task_data_files(local)) {
            if (data.empty() || data[0] == '/' || data.find("..") != std::string::npos) continue;
            const fs::path from = fs::path(local).parent_path() / data;
            const fs::path to = fs::path(remote_path).parent_path() / data;
            if (Status s = session.upload_file(from.string(), to.string(), 0644); !s.ok()) return s;
        }
    }
    return remote_path;
}

// The run config of the chain's first training step that names an image (else its first): its slurm section
// is the chain's environment, where its engine is built (image, partition, GPUs).
RunConfig chain_environment(const Pipeline& pipeline) {
    std::optional<RunConfig> first;
    for (const PipelineStep& s : pipeline.steps) {
        if (!s.is_training() || !s.spec.contains("config")) continue;
        RunConfig config = parse_run_config(s.spec["config"]).config;
        if (!config.slurm.container_image.empty()) return config;
        if (!first) first = config;
    }
    if (first) return *first;
    RunConfig none;
    none.name = pipeline.name;
    return none;
}

// The engine the chain's CPU steps run, in `cpu`: built on the cluster for the chain's environment (as its
// training steps find it), the image's, or this computer's deployed once into the pipeline's folder.
Status place_cpu_engine(SlurmExecutor& executor, const Pipeline& p, const PipelineSubmitRequest& request,
                        remote::StepScriptInputs& cpu) {
    remote::Session& session = executor.session();
    const remote::ClusterProfile& profile = executor.profile();
    switch (remote::engine_source_of(profile)) {
        case remote::EngineSource::kBuild: {
            if (request.engine_bundle.empty())
                return Status::Error(
                    "cluster \"" + profile.name +
                    "\" builds its engine on the cluster, but this slipway carries no engine "
                    "bundle");
            remote::EngineBuildWatch watch;
            watch.progress = request.progress;
            watch.stop_requested = request.stop_requested;
            Result<remote::EnginePlace> place = remote::find_or_build_engine(
                session, executor.slurm(), chain_environment(p), profile, request.engine_bundle, watch);
            if (!place.ok()) return place.status();
            cpu.engine = place->engine;
            cpu.engine_dir = place->dir;
            return Status::Ok();
        }
        case remote::EngineSource::kDesktop:
            if (request.engine_binary.empty())
                return Status::Error("no slipway-engine to deploy for the pipeline's steps on " +
                                     profile.name);
            return session.upload_file(request.engine_binary, cpu.engine, 0755);
        case remote::EngineSource::kImage:
            break;
    }
    return Status::Ok();
}

}  // namespace

remote::StepScriptInputs cpu_step_inputs(const Pipeline& pipeline, const remote::ClusterProfile& profile,
                                         const std::string& run_dir, const std::string& runs_dir) {
    remote::StepScriptInputs cpu;
    cpu.pipeline_name = pipeline.name;
    cpu.runs_dir = runs_dir;
    cpu.environment.runtime = profile.container;
    cpu.environment.setup = profile.env_setup;
    if (remote::takes_image(profile.container)) {
        const RunConfig chain = chain_environment(pipeline);
        cpu.environment.image = chain.slurm.container_image;
        cpu.environment.mounts = chain.slurm.container_mounts;
    }
    switch (remote::engine_source_of(profile)) {
        case remote::EngineSource::kImage:
            cpu.engine = "slipway-engine";
            break;
        case remote::EngineSource::kDesktop:
            cpu.engine = run_dir + "/slipway-engine";
            break;
        case remote::EngineSource::kBuild:  // where the build puts it (submit_pipeline finds it)
            cpu.engine_dir = remote::engine_dir_placeholder(profile);
            cpu.engine = cpu.engine_dir + "/slipway-engine";
            break;
    }
    return cpu;
}

Result<SubmittedPipeline> submit_pipeline(SlurmExecutor& executor, const Pipeline& p,
                                          const PipelineSubmitRequest& request,
                                          const std::function<void(const QueuedStep&)>& on_step) {
    remote::Session& session = executor.session();
    const remote::ClusterProfile& profile = executor.profile();
    RunStore& store = executor.store();
    SubmittedPipeline out;
    out.pipeline_id = remote::make_run_id(p.name);
    Result<std::string> run_dir =
        remote::resolve_remote_path(session, profile.remote_workdir + "/runs/" + out.pipeline_id);
    if (!run_dir.ok()) return run_dir.status();
    out.run_dir = *run_dir;
    if (Status s = session.mkdir_p(out.run_dir + "/inputs", 0755); !s.ok()) return s;

    const std::string runs_dir = out.run_dir.substr(0, out.run_dir.find_last_of('/'));
    remote::StepScriptInputs cpu = cpu_step_inputs(p, profile, out.run_dir, runs_dir);
    if (Status s = place_cpu_engine(executor, p, request, cpu); !s.ok()) return s;

    StepContext context;
    context.run_dir = out.run_dir;
    context.input = [&](const std::string& pointer, const std::string& path) {
        return upload_step_input(session, request.input_root, out.run_dir, pointer, path);
    };
    auto abandon = [&](const std::string& why) -> Status {
        // Jobs already queued would wait on a chain that will never finish: take them back. A row says
        // cancelled only when scancel took its job; one it refused stays live and is named.
        std::string kept;
        for (const QueuedStep& queued : out.steps) {
            if (const Status s = executor.slurm().cancel(queued.job_id); !s.ok()) {
                kept += "; job " + queued.job_id + " could not be cancelled: " + s.message();
                continue;
            }
            (void)store.set_state(queued.store_id, RunState::kCancelled, "pipeline stopped: " + why,
                                  "CANCELLED", StateWrite::kAlways);
        }
        if (out.steps.empty()) return Status::Error(why);
        return Status::Error(why + " (cancelled the " + std::to_string(out.steps.size()) +
                             " job(s) already queued" + kept + ")");
    };
    const StoreRunSink sink(store);
    std::string previous;
    for (size_t i = 0; i < p.steps.size(); ++i) {
        const PipelineStep& step = p.steps[i];
        if (request.stop_requested && request.stop_requested())
            return abandon("stopped before step \"" + step.name + "\"");
        Result<ResolvedStep> r = resolve_step(p, i, context);
        if (!r.ok()) return abandon("step \"" + step.name + "\": " + r.error());
        QueuedStep queued;
        queued.index = i;
        queued.step = step.name;
        queued.kind = step.kind;
        queued.training = r->config.has_value();
        queued.after = previous;
        queued.run_id = remote::make_run_id(p.name + "." + step.name);
        if (r->config) {
            SubmitRequest submit;
            submit.config = *r->config;
            // The step reads and writes the pipeline's folder (an earlier step's output, ${run}/...), which
            // its container sees only when mounted, as the CPU steps mount it.
            if (remote::takes_image(profile.container) && !submit.config.slurm.container_image.empty()) {
                const std::string shared = runs_dir + ":" + runs_dir;
                std::vector<std::string>& mounts = submit.config.slurm.container_mounts;
                if (std::find(mounts.begin(), mounts.end(), shared) == mounts.end()) mounts.push_back(shared);
            }
            Result<std::vector<std::string>> after = remote::dependency_directives(previous);
            if (!after.ok()) return abandon(after.error());
            submit.config.slurm.extra.insert(submit.config.slurm.extra.end(), after->begin(), after->end());
            submit.input_root = request.input_root;
            submit.engine_binary = request.engine_binary;
            submit.engine_bundle = request.engine_bundle;
            submit.progress = request.progress;
            submit.run_id = queued.run_id;
            Result<Submission> sent = executor.submit(submit);
            if (!sent.ok()) return abandon("step \"" + step.name + "\": " + sent.error());
            queued.job_id = sent->run.job_id;
            queued.store_id = sent->run.id;
            queued.store_problem = sent->store_problem;
            r->out = sent->deployment.remote_config.training.output_dir;
        } else {
            const std::string step_dir = out.run_dir + "/steps/" + step.name;
            cpu.step_dir = step_dir;
            cpu.after_job_id = previous;
            Result<std::string> script = remote::render_step_script(step, *r, profile, cpu);
            if (!script.ok()) return abandon("step \"" + step.name + "\": " + script.error());
            if (Status s = session.mkdir_p(step_dir, 0755); !s.ok()) return abandon(s.message());
            if (Status s = session.upload_bytes(*script, step_dir + "/step.sbatch", 0755); !s.ok())
                return abandon(s.message());
            Result<remote::SubmittedJob> job = executor.slurm().submit(step_dir, "step.sbatch");
            if (!job.ok()) return abandon("step \"" + step.name + "\": " + job.error());
            remote::RunRecord record;
            record.run_id = queued.run_id;
            record.name = p.name + "." + step.name;
            record.cluster = profile.name;
            record.job_id = job->job_id;
            record.slurm_cluster = job->cluster;
            record.remote_dir = step_dir;
            record.submitted = remote::utc_timestamp(std::time(nullptr));
            (void)sink.save(record, {});
            queued.job_id = job->job_id;
            queued.store_problem = sink.problem();
            if (Result<StoredRun> row = store.find(queued.run_id); row.ok()) queued.store_id = row->id;
        }
        out.steps.push_back(queued);
        if (on_step) on_step(queued);
        context.outs[step.name] = r->out;
        previous = queued.job_id;
    }
    return out;
}

}  // namespace slipway::app
