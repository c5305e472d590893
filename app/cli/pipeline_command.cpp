// `slipway pipeline validate | render | run` and `slipway submit PIPELINE.json`: a pipeline
// (contract/pipeline.h) checked, shown as the sbatch scripts of its chain, run step by step with the local
// engine (local/local_pipeline.h, which the Adaptation page runs too), or submitted as a chain of Slurm
// jobs, each waiting for the one before it (--dependency=afterok). Every step is a row in the run history,
// so `slipway status` lists the chain and the app follows each step like any other run.
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <filesystem>
#include <fstream>

#include "cli/remote_connect.h"
#include "contract/pipeline.h"
#include "history/history_run_store.h"
#include "history/run_history.h"
#include "local/local_pipeline.h"
#include "remote/deploy/deploy.h"
#include "remote/slurm/pipeline_sbatch.h"
#include "remote/slurm/sbatch_script.h"
#include "remote/slurm/slurm_client.h"

namespace slipway::app {
namespace {

namespace fs = std::filesystem;

std::string join_words(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words)
        out += (out.empty() ? "" : " ") + w;
    return out;
}

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

// How CPU steps start the engine on `profile`: under pyxis, in the image of the first training step that
// names one (with its mounts and the runs folder); on bare metal, the engine deployed into the pipeline's
// folder.
remote::StepScriptInputs cpu_step_inputs(const Pipeline& p, const remote::ClusterProfile& profile,
                                         const std::string& run_dir, const std::string& runs_dir) {
    remote::StepScriptInputs cpu;
    cpu.pipeline_name = p.name;
    cpu.runs_dir = runs_dir;
    if (profile.container != remote::ContainerMode::kPyxis) {
        cpu.engine = run_dir + "/slipway-engine";
        return cpu;
    }
    cpu.engine = "slipway-engine";
    for (const PipelineStep& s : p.steps) {
        if (!s.is_training() || !s.spec["config"].contains("slurm")) continue;
        const nlohmann::json& slurm_section = s.spec["config"]["slurm"];
        cpu.container_image = slurm_section.value("container_image", std::string());
        if (slurm_section.contains("container_mounts") && slurm_section["container_mounts"].is_array())
            for (const nlohmann::json& m : slurm_section["container_mounts"])
                if (m.is_string()) cpu.container_mounts.push_back(m.get<std::string>());
        if (!cpu.container_image.empty()) break;
    }
    return cpu;
}

Result<std::unique_ptr<RunHistory>> open_store() {
    return RunHistory::open_default();
}

// ---- validate and render
// -----------------------------------------------------------------------------------

void print_steps(const Pipeline& p, std::ostream& out) {
    std::vector<std::vector<std::string>> rows = {{"#", "STEP", "KIND", "USES"}};
    for (size_t i = 0; i < p.steps.size(); ++i)
        rows.push_back({std::to_string(i), p.steps[i].name, p.steps[i].kind,
                        p.steps[i].uses.empty() ? "-" : join_words(p.steps[i].uses)});
    print_table(out, rows);
}

}  // namespace

int run_pipeline_validate(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<Pipeline> p = load_pipeline(c.run_file);
    if (!p.ok()) return fail(err, p.error(), 2);
    out << "pipeline " << p->name << ": " << p->steps.size() << " steps, valid\n";
    print_steps(*p, out);
    return 0;
}

// Every script of the chain as `submit` would upload it, for job ids 1001, 1002, ... and the run folder
// <remote_workdir>/runs/<name>-RUN (nothing is connected or uploaded).
int run_pipeline_render(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<Pipeline> p = load_pipeline(c.run_file);
    if (!p.ok()) return fail(err, p.error(), 2);
    Result<remote::ClusterProfile> profile = profile_store(c).find(c.cluster);
    if (!profile.ok()) return fail(err, profile.error());
    std::string workdir = profile->remote_workdir;
    if (workdir.rfind("~/", 0) == 0)
        workdir = "/home/" + (profile->user.empty() ? "USER" : profile->user) + workdir.substr(1);
    const std::string run_dir = workdir + "/runs/" + p->name + "-RUN";
    StepContext context;
    context.run_dir = run_dir;
    // Relative inputs of CPU steps are uploaded into inputs/ by submit: shown where they will be.
    context.input = [&](const std::string&, const std::string& path) -> Result<std::string> {
        return run_dir + "/inputs/" + fs::path(path).lexically_normal().string();
    };
    std::string previous;
    for (size_t i = 0; i < p->steps.size(); ++i) {
        const PipelineStep& step = p->steps[i];
        Result<ResolvedStep> r = resolve_step(*p, i, context);
        if (!r.ok()) return fail(err, r.error());
        const std::string job = std::to_string(1001 + i);
        out << "# ---- step " << i << " \"" << step.name << "\" (" << step.kind << "), job " << job
            << (previous.empty() ? "" : " after " + previous) << "\n";
        Result<std::string> script = Status::Error("");
        if (step.is_training()) {
            RunConfig config = *r->config;
            Result<std::vector<std::string>> after = remote::dependency_directives(previous);
            if (!after.ok()) return fail(err, after.error());
            config.slurm.extra.insert(config.slurm.extra.end(), after->begin(), after->end());
            const std::string dir = workdir + "/runs/" + p->name + "." + step.name + "-RUN";
            remote::SbatchInputs inputs;
            inputs.run_dir = dir;
            script = remote::render_sbatch_script(config, *profile, inputs);
            context.outs[step.name] = dir + "/output";
        } else {
            remote::StepScriptInputs inputs = cpu_step_inputs(*p, *profile, run_dir, workdir + "/runs");
            inputs.step_dir = run_dir + "/steps/" + step.name;
            inputs.after_job_id = previous;
            script = remote::render_step_script(step, *r, *profile, inputs);
            context.outs[step.name] = r->out;
        }
        if (!script.ok()) return fail(err, "step \"" + step.name + "\": " + script.error());
        out << *script << "\n";
        previous = job;
    }
    return 0;
}

// ---- run on This computer
// ----------------------------------------------------------------------------------

int run_pipeline_local(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<Pipeline> loaded = load_pipeline(c.run_file);
    if (!loaded.ok()) return fail(err, loaded.error(), 2);
    const Pipeline& p = *loaded;
    LocalPipelineOptions options;
    options.engine = QString::fromStdString(c.engine.empty() ? engine_next_to_slipway() : c.engine);
    if (options.engine.isEmpty() || !QFileInfo(options.engine).isExecutable())
        return fail(err, "slipway-engine was not found next to slipway or on PATH (or give --engine)");
    options.input_root = pipeline_input_root(p, c.run_file, c.inputs);
    options.runs_dir = c.runs_dir.empty() ? QDir::homePath() + "/.local/share/slipway/local-runs"
                                          : QString::fromStdString(c.runs_dir);
    Result<std::unique_ptr<RunHistory>> store = open_store();
    if (!store.ok()) return fail(err, store.error());
    options.store = store->get();
    Result<LocalPipelineOutcome> outcome = run_local_pipeline(p, options, [&](const LocalPipelineEvent& e) {
        if (!e.store_problem.empty()) err << "slipway: warning: run history: " << e.store_problem << "\n";
        if (const std::string line = describe_pipeline_event(e); !line.empty()) out << line << std::endl;
        if (e.kind == LocalPipelineEvent::Kind::kStepFinished && e.exit_code != 0) {
            QFile text(QString::fromStdString(e.log_path));  // the end of what the failed step said
            if (text.open(QIODevice::ReadOnly)) err << text.readAll().right(2000).toStdString() << "\n";
        }
    });
    if (!outcome.ok()) return fail(err, outcome.error());
    out << describe_pipeline_completion(p.name, *outcome) << "\n";
    return 0;
}

// ---- submit to Slurm
// ---------------------------------------------------------------------------------------

int run_pipeline_submit(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    Result<Pipeline> loaded = load_pipeline(c.run_file);
    if (!loaded.ok()) return fail(err, loaded.error(), 2);
    const Pipeline& p = *loaded;
    if (!c.overrides.empty() || !c.run_name.empty())
        return fail(err, "--name and training flags apply to one run config, not to a pipeline", 2);
    Result<std::unique_ptr<RunHistory>> store = open_store();
    if (!store.ok()) return fail(err, store.error());
    Result<remote::ClusterProfile> profile = profile_store(c).find(c.cluster);
    if (!profile.ok()) return fail(err, profile.error());
    Result<std::unique_ptr<remote::Session>> connected = connect_cluster(*profile, c.ssh);
    if (!connected.ok()) return fail(err, connected.error());
    remote::Session& session = **connected;
    remote::SlurmClient slurm(session);
    const std::string input_root = pipeline_input_root(p, c.run_file, c.inputs);
    const std::string pipeline_id = remote::make_run_id(p.name);
    Result<std::string> run_dir =
        remote::resolve_remote_path(session, profile->remote_workdir + "/runs/" + pipeline_id);
    if (!run_dir.ok()) return fail(err, run_dir.error());
    if (Status s = session.mkdir_p(*run_dir + "/inputs", 0755); !s.ok()) return fail(err, s.message());

    // The engine the CPU steps run: deployed once into the pipeline's folder, or the image's under pyxis (the
    // image of the first training step).
    const std::string runs_dir = run_dir->substr(0, run_dir->find_last_of('/'));
    remote::StepScriptInputs cpu = cpu_step_inputs(p, *profile, *run_dir, runs_dir);
    std::string engine_binary;
    if (profile->container != remote::ContainerMode::kPyxis) {
        engine_binary = c.engine.empty() ? engine_next_to_slipway() : c.engine;
        if (engine_binary.empty())
            return fail(err, "slipway-engine was not found next to slipway (give --engine)");
        if (Status s = session.upload_file(engine_binary, cpu.engine, 0755); !s.ok())
            return fail(err, s.message());
    }

    StepContext context;
    context.run_dir = *run_dir;
    // A relative input of a CPU step is a local file, uploaded into inputs/ (an eval task file with its
    // data).
    context.input = [&](const std::string& pointer, const std::string& path) -> Result<std::string> {
        const fs::path rel = fs::path(path).lexically_normal();
        for (const auto& part : rel)
            if (part == "..")
                return Status::Error(pointer + ": \"" + path +
                                     "\": '..' is not allowed in an uploaded input");
        const std::string local = (fs::path(input_root) / rel).string();
        const std::string remote_path = *run_dir + "/inputs/" + rel.string();
        if (Status s = session.mkdir_p(fs::path(remote_path).parent_path().string(), 0755); !s.ok()) return s;
        if (Status s = session.upload_file(local, remote_path, 0644); !s.ok())
            return Status::Error(pointer + ": " + s.message());
        if (pointer.size() > 6 && pointer.substr(pointer.size() - 6) == "/tasks") {
            for (const std::string& data : task_data_files(local)) {
                const fs::path from = fs::path(local).parent_path() / data;
                const fs::path to = fs::path(remote_path).parent_path() / data;
                if (data.find("..") != std::string::npos || data.empty() || data[0] == '/') continue;
                if (Status s = session.upload_file(from.string(), to.string(), 0644); !s.ok()) return s;
            }
        }
        return remote_path;
    };

    std::vector<std::vector<std::string>> rows = {{"STEP", "KIND", "JOB", "AFTER", "RUN_ID"}};
    std::vector<std::string> submitted_jobs;
    auto abandon = [&](const std::string& why) {
        // Jobs already queued would wait on a chain that will never finish: take them back.
        for (const std::string& job : submitted_jobs)
            (void)slurm.cancel(job);
        if (!submitted_jobs.empty())
            err << "slipway: cancelled the " << submitted_jobs.size() << " job(s) already queued\n";
        return fail(err, why);
    };
    HistoryRunStore runs_store(**store);
    const StoreRunSink sink(runs_store);
    std::string previous;
    for (size_t i = 0; i < p.steps.size(); ++i) {
        const PipelineStep& step = p.steps[i];
        Result<ResolvedStep> r = resolve_step(p, i, context);
        if (!r.ok()) return abandon("step \"" + step.name + "\": " + r.error());
        const std::string run_id = remote::make_run_id(p.name + "." + step.name);
        remote::RunRecord record;
        if (r->config) {
            // Training steps go through the ordinary deploy: their usual sbatch script, plus the dependency.
            remote::DeployRequest request;
            request.config = *r->config;
            Result<std::vector<std::string>> after = remote::dependency_directives(previous);
            if (!after.ok()) return abandon(after.error());
            request.config.slurm.extra.insert(request.config.slurm.extra.end(), after->begin(), after->end());
            request.input_root = input_root;
            request.profile = *profile;
            request.run_id = run_id;
            request.engine_binary = engine_binary;
            Result<remote::SubmittedRun> run = remote::submit_run(session, slurm, request, sink);
            if (!run.ok()) return abandon("step \"" + step.name + "\": " + run.error());
            record = run->record;
            r->out = run->deployment.remote_config.training.output_dir;
        } else {
            const std::string step_dir = *run_dir + "/steps/" + step.name;
            cpu.step_dir = step_dir;
            cpu.after_job_id = previous;
            Result<std::string> script = remote::render_step_script(step, *r, *profile, cpu);
            if (!script.ok()) return abandon("step \"" + step.name + "\": " + script.error());
            if (Status s = session.mkdir_p(step_dir, 0755); !s.ok()) return abandon(s.message());
            if (Status s = session.upload_bytes(*script, step_dir + "/step.sbatch", 0755); !s.ok())
                return abandon(s.message());
            Result<remote::SubmittedJob> job = slurm.submit(step_dir, "step.sbatch");
            if (!job.ok()) return abandon("step \"" + step.name + "\": " + job.error());
            record.run_id = run_id;
            record.name = p.name + "." + step.name;
            record.cluster = c.cluster;
            record.job_id = job->job_id;
            record.slurm_cluster = job->cluster;
            record.remote_dir = step_dir;
            record.submitted = remote::utc_timestamp(std::time(nullptr));
            if (Status s = sink.save(record, {}); !s.ok()) err << "slipway: warning: " << s.message() << "\n";
        }
        if (!sink.problem().empty()) err << "slipway: warning: run history: " << sink.problem() << "\n";
        submitted_jobs.push_back(record.job_id);
        rows.push_back(
            {step.name, step.kind, record.job_id, previous.empty() ? "-" : previous, record.run_id});
        context.outs[step.name] = r->out;
        previous = record.job_id;
    }
    out << "pipeline " << p.name << " in " << *run_dir << "\n";
    print_table(out, rows);
    out << "pipeline_id=" << pipeline_id << " jobs=" << join_words(submitted_jobs) << "\n";
    return 0;
}

bool is_pipeline_file(const std::string& path) {
    Result<nlohmann::json> doc = read_json_file(path);
    return doc.ok() && is_pipeline_document(*doc);
}

}  // namespace slipway::app
