// `slipway pipeline validate | render | run` and `slipway submit PIPELINE.json`: a pipeline
// (contract/pipeline.h) checked, shown as the sbatch scripts of its chain, run step by step with the local
// engine (service/local_pipeline.h, which the Adaptation page runs too), or submitted as a chain of Slurm
// jobs, each waiting for the one before it (--dependency=afterok). Every step is a row in the run history,
// so `slipway status` lists the chain and the app follows each step like any other run.
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include "cli/remote_connect.h"
#include "cli/stop_signals.h"
#include "contract/pipeline.h"
#include "core/engine_command.h"
#include "history/history_run_store.h"
#include "history/run_history.h"
#include "remote/slurm/sbatch_script.h"
#include "service/local_executor.h"
#include "service/local_pipeline.h"
#include "service/slurm_pipeline.h"

namespace slipway::app {
namespace {

namespace fs = std::filesystem;

std::string join_words(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words)
        out += (out.empty() ? "" : " ") + w;
    return out;
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
    options.engine = c.engine.empty() ? find_engine_binary() : c.engine;
    if (const Status usable = check_engine_binary(options.engine); !usable.ok())
        return fail(err, usable.message());
    options.input_root = pipeline_input_root(p, c.run_file, c.inputs, resource_root());
    options.runs_dir = c.runs_dir.empty() ? default_local_runs_dir() : c.runs_dir;
    Result<std::unique_ptr<RunHistory>> store = open_store();
    if (!store.ok()) return fail(err, store.error());
    HistoryRunStore runs_store(**store);
    options.store = &runs_store;
    // Ctrl-C stops the running step (in a process group of its own, it does not get the terminal's SIGINT)
    // and the pipeline, and the step's row says so.
    const StopSignals stop_signals;
    bool said_stopping = false;
    options.stop_requested = [&]() -> std::optional<std::chrono::milliseconds> {
        if (!stop_signals.asked()) return std::nullopt;
        if (!said_stopping) {
            err << "slipway: stopping the pipeline " << stop_grace_text() << std::endl;
            said_stopping = true;
        }
        return kStopGrace;
    };
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
    HistoryRunStore runs_store(**store);
    SlurmExecutor executor(**connected, *profile, runs_store);
    PipelineSubmitRequest request;
    request.input_root = pipeline_input_root(p, c.run_file, c.inputs, resource_root());
    const remote::EngineSource source = remote::engine_source_of(*profile);
    if (source == remote::EngineSource::kDesktop) {
        request.engine_binary = c.engine.empty() ? engine_next_to_slipway() : c.engine;
        if (request.engine_binary.empty())
            return fail(err, "slipway-engine was not found next to slipway (give --engine)");
    }
    if (source == remote::EngineSource::kBuild) {
        request.engine_bundle = find_engine_bundle();
        if (request.engine_bundle.empty()) return fail(err, no_engine_bundle_text());
    }
    request.progress = [&err](const std::string& line) { err << "slipway: " << line << std::endl; };
    Result<SubmittedPipeline> submitted = submit_pipeline(executor, p, request, [&](const QueuedStep& step) {
        if (!step.store_problem.empty())
            err << "slipway: warning: run history: " << step.store_problem << "\n";
    });
    if (!submitted.ok()) return fail(err, submitted.error());
    std::vector<std::vector<std::string>> rows = {{"STEP", "KIND", "JOB", "AFTER", "RUN_ID"}};
    std::vector<std::string> jobs;
    for (const QueuedStep& step : submitted->steps) {
        rows.push_back(
            {step.step, step.kind, step.job_id, step.after.empty() ? "-" : step.after, step.run_id});
        jobs.push_back(step.job_id);
    }
    out << "pipeline " << p.name << " in " << submitted->run_dir << "\n";
    print_table(out, rows);
    out << "pipeline_id=" << submitted->pipeline_id << " jobs=" << join_words(jobs) << "\n";
    return 0;
}

bool is_pipeline_file(const std::string& path) {
    Result<nlohmann::json> doc = read_json_file(path);
    return doc.ok() && is_pipeline_document(*doc);
}

}  // namespace slipway::app
