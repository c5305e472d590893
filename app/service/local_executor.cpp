// Local runs: the plan (paths, run.json, command), the engine's process and its row (see local_executor.h).
#include "service/local_executor.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <thread>

#include "core/engine_command.h"

namespace slipway::app {
namespace {

namespace fs = std::filesystem;

void resolve(std::string& path, const fs::path& base) {
    if (path.empty() || fs::path(path).is_absolute()) return;
    path = (base / path).lexically_normal().string();
}

// A folder name from a run name: letters, digits, '-' and '_' kept (UTF-8 letters too), the rest '_'.
std::string safe_name(const std::string& name) {
    std::string out;
    for (const char c : name) {
        const auto u = static_cast<unsigned char>(c);
        out += (u >= 0x80 || std::isalnum(u) != 0 || c == '-' || c == '_') ? c : '_';
    }
    if (out.size() > 64) {
        size_t cut = 64;
        while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80)
            --cut;  // not inside a UTF-8 character
        out.resize(cut);
    }
    return out.empty() ? "run" : out;
}

// yyyyMMdd-HHmmss-mmm, local time: two runs of one preset started in one second get two folders.
std::string local_stamp() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm local{};
    localtime_r(&seconds, &local);
    char text[32];
    const size_t n = std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &local);
    std::snprintf(text + n, sizeof text - n, "-%03d", static_cast<int>(ms));
    return text;
}

}  // namespace

std::string run_folder_name(const std::string& name) {
    return safe_name(name) + "-" + local_stamp();
}

Result<LocalRunPlan> plan_local_run(const RunConfig& config, const std::string& resource_root,
                                    const std::string& runs_dir, const std::string& engine,
                                    const std::vector<std::string>& overrides) {
    if (const Status usable = check_engine_binary(engine); !usable.ok()) return usable;
    std::error_code ec;
    LocalRunPlan plan;
    plan.config = config;
    // Absolute: the engine starts in the run's folder.
    plan.engine = fs::absolute(engine, ec).string();
    const fs::path runs =
        fs::absolute(runs_dir.empty() ? fs::path(".") : fs::path(runs_dir), ec).lexically_normal();
    plan.run_dir = (runs / run_folder_name(config.name)).string();
    fs::create_directories(plan.run_dir, ec);
    if (ec)
        return Result<LocalRunPlan>::Error("cannot create run folder " + plan.run_dir + ": " + ec.message());
    // Inputs are relative to the resource root (presets name resources/demo/...); outputs go to the run
    // folder, so two runs of one preset never write over each other.
    const fs::path inputs =
        fs::absolute(resource_root.empty() ? fs::current_path(ec) : fs::path(resource_root), ec);
    RunConfig& c = plan.config;
    resolve(c.model.path, inputs);
    resolve(c.tokenizer.path, inputs);
    resolve(c.data.train_file, inputs);
    resolve(c.data.validation_file, inputs);
    resolve(c.data.chat_template, inputs);
    resolve(c.eval.tasks, inputs);  // its data files are relative to it
    if (c.training.resume_from_checkpoint != "latest") resolve(c.training.resume_from_checkpoint, inputs);
    c.training.output_dir = (fs::path(plan.run_dir) / "output").string();
    if (!c.data.cache_dir.empty() && !fs::path(c.data.cache_dir).is_absolute()) {
        // A cache shared by the runs: the same corpus is tokenized once for all of them.
        c.data.cache_dir =
            (runs / ".." / "cache" / fs::path(c.data.cache_dir).filename()).lexically_normal().string();
    }
    plan.run_json = plan.run_dir + "/run.json";
    if (const Status s = save_run_config(c, plan.run_json); !s.ok()) return s;
    plan.mllog_path = c.training.output_dir + "/mllog.txt";
    plan.engine_log = plan.run_dir + "/engine.log";
    plan.arguments = engine_arguments(plan.run_json, static_cast<int>(c.tasks_per_node()), overrides);
    return plan;
}

Result<LocalJob> LocalExecutor::submit(const RunConfig& config, const std::vector<std::string>& overrides) {
    Result<LocalRunPlan> plan =
        plan_local_run(config, options_.resource_root, options_.runs_dir, options_.engine, overrides);
    if (!plan.ok()) return plan.status();
    Result<ChildProcess> process =
        ChildProcess::start({plan->engine, plan->arguments, plan->run_dir, plan->engine_log, {}});

    StoredRun row;
    row.name = plan->config.name;
    row.cluster = kLocalCluster;
    row.log_path = plan->mllog_path;
    row.config_json = to_json(plan->config).dump(2);
    row.created_ms = now_ms();
    if (process.ok()) {
        row.state = RunState::kRunning;
        row.job_id = std::to_string(process->pid());
    } else {
        row.state = RunState::kFailed;
        row.state_detail = process.error();
    }
    std::string store_problem;
    if (Result<int64_t> id = store_.add(row); id.ok())
        row.id = *id;
    else
        store_problem = id.error();
    if (!process.ok()) return process.status();
    LocalJob job(store_, std::move(row), std::move(*plan), std::move(*process));
    job.store_problem_ = std::move(store_problem);
    return job;
}

LocalEnd local_end(const ProcessExit& exit, bool stop_asked, const std::string& log) {
    LocalEnd end;
    end.exit = exit;
    // The engine answers SIGTERM by saving a checkpoint and exiting 128 + 15: a stop asked here, or by
    // another door (the app cancelling a run `slipway run` runs).
    const bool terminated = exit.signal == SIGTERM || (exit.signal == 0 && exit.code == 128 + SIGTERM);
    if (stop_asked) {
        end.state = RunState::kCancelled;
    } else if (terminated) {
        end.state = RunState::kCancelled;
        end.detail = kStoppedFromElsewhereDetail;
    } else if (exit.success()) {
        end.state = RunState::kCompleted;
    } else {
        end.state = RunState::kFailed;
        end.detail = exit.describe();
        if (const std::string said = last_line_of(log); !said.empty()) end.detail += ": " + said;
    }
    return end;
}

void LocalJob::store_end(const LocalEnd& end) {
    if (run_.id == 0) return;
    run_.state = end.state;
    run_.state_detail = end.detail;
    const Status s = store_->set_state(run_.id, end.state, end.detail, {}, StateWrite::kAlways);
    if (!s.ok()) store_problem_ = s.message();
}

std::optional<LocalEnd> LocalJob::poll() {
    if (end_) return end_;
    const std::optional<ProcessExit> exit = process_.poll();
    if (!exit) {
        if (stop_deadline_ && !killed_ && std::chrono::steady_clock::now() >= *stop_deadline_) {
            process_.kill_group();  // it did not stop when asked; reaped at a later poll
            killed_ = true;
        }
        return std::nullopt;
    }
    LocalEnd end = local_end(*exit, stop_deadline_.has_value(), plan_.engine_log);
    if (interrupted_) {
        end.state = RunState::kInterrupted;
        end.detail = *interrupted_;
    }
    end_ = end;
    store_end(end);
    return end_;
}

std::optional<LocalEnd> LocalJob::wait(std::chrono::milliseconds timeout) {
    return poll_until(timeout, [this] { return poll(); });
}

void LocalJob::ask_stop(std::chrono::milliseconds grace) {
    if (end_ || poll() || stop_deadline_) return;  // ended already: its own end stands
    stop_deadline_ = std::chrono::steady_clock::now() + grace;
    process_.terminate();
}

void LocalJob::cancel(std::chrono::milliseconds grace) {
    ask_stop(grace);
}

void LocalJob::interrupt(const std::string& why, std::chrono::milliseconds grace) {
    if (end_ || poll()) return;
    if (stop_deadline_) {
        // A cancel under way stays a cancel, with the closing's shorter grace.
        stop_deadline_ = std::min(*stop_deadline_, std::chrono::steady_clock::now() + grace);
        return;
    }
    interrupted_ = why;
    ask_stop(grace);
}

Result<pid_t> check_local_engine(const StoredRun& run) {
    if (run.cluster != kLocalCluster || run.job_id.empty())
        return Result<pid_t>::Error("run " + run.name + " is not a run on this computer with an engine");
    char* end = nullptr;
    const long pid = std::strtol(run.job_id.c_str(), &end, 10);
    if (end == run.job_id.c_str() || *end != '\0' || pid <= 1)
        return Result<pid_t>::Error("run " + run.name + ": \"" + run.job_id + "\" is not a process id");
    const std::string proc = "/proc/" + std::to_string(pid);
    std::ifstream cmdline(proc + "/cmdline", std::ios::binary);
    const std::string words((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    // A training run: <run_dir>/output/mllog.txt is its log, and its command line names <run_dir>/run.json.
    const fs::path log(run.log_path);
    const std::string run_json = (log.parent_path().parent_path() / "run.json").string();
    if (words.find('\0' + run_json + '\0') != std::string::npos) return static_cast<pid_t>(pid);
    // A pipeline's other steps: started in the folder of their engine.log. The folder is asked even when
    // the command line reads empty, as it does for an instant while a process replaces itself (exec).
    std::error_code ec;
    if (log.filename() == "engine.log" &&
        fs::equivalent(fs::read_symlink(proc + "/cwd", ec), log.parent_path(), ec))
        return static_cast<pid_t>(pid);
    if (words.empty())  // gone, or a zombie whose command line is no more
        return Result<pid_t>::Error("run " + run.name + ": process " + run.job_id + " has ended");
    return Result<pid_t>::Error("run " + run.name + ": process " + run.job_id +
                                " is not its engine (it does not run " + run_json + ")");
}

Status stop_local_run(const StoredRun& run) {
    const Result<pid_t> pid = check_local_engine(run);
    if (!pid.ok()) return pid.status();
    if (::kill(*pid, SIGTERM) != 0)
        return Status::Error("run " + run.name + ": cannot signal process " + run.job_id + ": " +
                             std::strerror(errno));
    return Status::Ok();
}

}  // namespace slipway::app
