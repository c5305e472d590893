// A pipeline run on This computer, step by step (see local_pipeline.h).
#include "service/local_pipeline.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "core/engine_command.h"
#include "service/child_process.h"
#include "service/local_executor.h"
#include "service/run_store.h"

namespace slipway::app {
namespace {

namespace fs = std::filesystem;

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Waits for the step's process. A stop request asks it to stop and kills it (and its ranks) after its grace.
ProcessExit wait_for_step(ChildProcess& process, const LocalPipelineOptions& options, bool& stopped) {
    for (;;) {
        if (std::optional<ProcessExit> exit = process.wait_for(std::chrono::milliseconds(200))) return *exit;
        if (!options.stop_requested) continue;
        if (const std::optional<std::chrono::milliseconds> grace = options.stop_requested()) {
            stopped = true;
            return process.stop(*grace);
        }
    }
}

std::string one_decimal(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", value);
    return text;
}

}  // namespace

std::string pipeline_input_root(const Pipeline& pipeline, const std::string& file, const std::string& given,
                                const std::string& root) {
    if (!given.empty()) return given;
    const fs::path here = fs::absolute(fs::path(file)).parent_path();
    for (const auto& [name, value] : pipeline.vars) {
        if (value.empty() || value[0] == '/' || value.find("${") != std::string::npos) continue;
        std::error_code ec;
        if (fs::exists(here / value, ec)) return here.string();
        if (!root.empty() && fs::exists(fs::path(root) / value, ec)) return root;
    }
    return root.empty() ? fs::current_path().string() : root;
}

std::string describe_pipeline_event(const LocalPipelineEvent& e) {
    switch (e.kind) {
        case LocalPipelineEvent::Kind::kStarted:
            return "pipeline " + e.pipeline + ": " + std::to_string(e.steps) + " steps in " + e.run_dir;
        case LocalPipelineEvent::Kind::kStepStarted:
            return "[" + std::to_string(e.step + 1) + "/" + std::to_string(e.steps) + "] " + e.name + " (" +
                   e.step_kind + "): " + e.command;
        case LocalPipelineEvent::Kind::kStepFinished:
            return e.exit_code == 0 ? "    done in " + one_decimal(e.seconds) + " s; out " + e.out
                                    : std::string();
    }
    return {};
}

std::string describe_pipeline_completion(const std::string& name, const LocalPipelineOutcome& outcome) {
    return "pipeline " + name + " completed in " + one_decimal(outcome.seconds) + " s: " + outcome.run_dir;
}

Result<LocalPipelineOutcome> run_local_pipeline(
    const Pipeline& p, const LocalPipelineOptions& options,
    const std::function<void(const LocalPipelineEvent&)>& on_event) {
    const auto emit_event = [&](LocalPipelineEvent e) {
        e.pipeline = p.name;
        e.steps = p.steps.size();
        if (on_event) on_event(e);
    };
    if (const Status usable = check_engine_binary(options.engine); !usable.ok()) return usable;
    std::error_code ec;
    const fs::path runs =
        fs::absolute(options.runs_dir.empty() ? fs::path(".") : fs::path(options.runs_dir), ec);
    const std::string run_dir = (runs / run_folder_name(p.name)).lexically_normal().string();
    const std::string engine = fs::absolute(options.engine, ec).string();  // steps start in their own folders
    fs::create_directories(run_dir + "/steps", ec);
    if (ec) return Status::Error("cannot create " + run_dir + ": " + ec.message());
    LocalPipelineOutcome outcome;
    outcome.run_dir = run_dir;
    LocalPipelineEvent started;
    started.run_dir = outcome.run_dir;
    emit_event(started);

    StepContext context;
    context.run_dir = outcome.run_dir;
    context.input = [&](const std::string&, const std::string& path) -> Result<std::string> {
        return (fs::path(options.input_root) / path).lexically_normal().string();
    };
    const auto pipeline_start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < p.steps.size(); ++i) {
        const PipelineStep& step = p.steps[i];
        const std::string where =
            "pipeline " + p.name + " stopped at step " + std::to_string(i) + " \"" + step.name + "\"";
        // A stop asked while the last step ended (or between steps): the next one never starts.
        if (options.stop_requested && options.stop_requested())
            return Status::Error(where + " (" + step.kind + "): stopped before it started");
        const auto start = std::chrono::steady_clock::now();
        const std::string step_dir = run_dir + "/steps/" + step.name;
        fs::create_directories(step_dir, ec);
        const std::string log = step_dir + "/engine.log";
        Result<ResolvedStep> r = resolve_step(p, i, context);
        if (!r.ok()) return Status::Error(where + ": " + r.error());
        std::vector<std::string> arguments;
        StoredRun row;
        row.name = p.name + "." + step.name;
        row.cluster = kLocalCluster;
        row.state = RunState::kRunning;
        row.created_ms = now_ms();
        row.log_path = log;
        if (r->config) {
            // A training step is an ordinary local run: its run.json, its output folder, its mllog.
            Result<LocalRunPlan> plan = plan_local_run(*r->config, options.input_root, step_dir, engine);
            if (!plan.ok()) return Status::Error("step \"" + step.name + "\": " + plan.error());
            arguments = plan->arguments;
            r->out = plan->config.training.output_dir;
            row.config_json = to_json(plan->config).dump(2);
            row.log_path = plan->mllog_path;
        } else {
            arguments = r->engine_args;
            row.config_json = step.spec.dump(2);
            if (!r->out.empty()) fs::create_directories(fs::absolute(r->out).parent_path(), ec);
        }
        ProcessSpec spec{engine, arguments, step_dir, log, {}, false};
        if (!r->stdout_file.empty()) {
            spec.output_file = r->stdout_file;  // the step's product
            spec.truncate_output = true;
            spec.error_file = log;
        }
        Result<ChildProcess> process = ChildProcess::start(spec);
        if (process.ok()) {
            row.job_id = std::to_string(process->pid());
        } else {
            row.state = RunState::kFailed;
            row.state_detail = process.error();
        }
        LocalPipelineEvent step_started;
        step_started.kind = LocalPipelineEvent::Kind::kStepStarted;
        step_started.step = i;
        step_started.name = step.name;
        step_started.step_kind = step.kind;
        step_started.command = command_line(engine, arguments);
        step_started.log_path = row.log_path;
        step_started.training = r->config.has_value();
        if (options.store != nullptr) {
            if (Result<int64_t> id = options.store->add(row); id.ok())
                step_started.store_id = *id;
            else
                step_started.store_problem = id.error();
        }
        emit_event(step_started);

        bool stopped = false;
        const ProcessExit exit =
            process.ok() ? wait_for_step(*process, options, stopped) : ProcessExit{-1, 0};
        const int code = exit.signal == 0 ? exit.code : -1;
        LocalPipelineEvent finished;
        LocalEnd end = local_end(exit, stopped, log);
        if (stopped) end.detail = kStepStoppedDetail;
        if (step_started.store_id != 0 && process.ok()) {
            if (Status s = options.store->set_state(step_started.store_id, end.state, end.detail, {},
                                                    StateWrite::kAlways);
                !s.ok())
                finished.store_problem = s.message();
        }
        finished.kind = LocalPipelineEvent::Kind::kStepFinished;
        finished.step = i;
        finished.name = step.name;
        finished.step_kind = step.kind;
        finished.exit_code = code;
        finished.seconds = seconds_since(start);
        finished.out = r->out;
        finished.log_path = log;
        finished.store_id = step_started.store_id;
        emit_event(finished);
        if (!process.ok()) return Status::Error(where + " (" + step.kind + "): " + process.error());
        if (stopped) return Status::Error(where + " (" + step.kind + "): stopped; log " + log);
        if (!exit.success()) {
            const std::string said = last_line_of(log);
            return Status::Error(where + " (" + step.kind + "): " + exit.describe() +
                                 (said.empty() ? std::string() : " (" + said + ")") + "; log " + log);
        }
        context.outs[step.name] = r->out;
    }
    outcome.seconds = seconds_since(pipeline_start);
    return outcome;
}

}  // namespace slipway::app
