// Deploying, submitting and judging the doctor job (see doctor_run.h).
#include "remote/deploy/doctor_run.h"

#include <algorithm>
#include <thread>

#include "remote/deploy/deploy.h"
#include "remote/deploy/engine_build.h"
#include "remote/deploy/run_record.h"
#include "remote/ssh/shell_quote.h"

namespace slipway::remote {
namespace {

// The whole output file (a doctor's is a few KiB per node; 64 MiB is far beyond any real one).
Result<std::string> read_whole(Session& session, const std::string& path) {
    constexpr std::size_t kChunk = 1 << 20;
    std::string text;
    while (text.size() < (64u << 20)) {
        Result<std::string> chunk = session.read_range(path, text.size(), kChunk);
        if (!chunk.ok()) return chunk.status();
        text += *chunk;
        if (chunk->size() < kChunk) break;
    }
    return text;
}

// "n[01-02],gpu7" -> n01 n02 gpu7, by Slurm itself.
Result<std::vector<std::string>> expand_hostlist(Session& session, const std::string& hostlist) {
    Result<std::string> command = shell_command({"scontrol", "show", "hostnames", hostlist});
    if (!command.ok()) return command.status();
    Result<ExecResult> result = session.exec(*command, std::chrono::seconds(30));
    if (!result.ok()) return result.status();
    if (result->exit_status != 0)
        return Status::Error("scontrol show hostnames " + hostlist + ": " + result->err);
    std::vector<std::string> hosts;
    std::string line;
    for (char c : result->out + "\n") {
        if (c != '\n') {
            line += c;
        } else if (!line.empty()) {
            if (check_node_name(line).ok()) hosts.push_back(line);
            line.clear();
        }
    }
    return hosts;
}

// The engine built on the cluster for the checks' environment, as a run there uses it: found, or built now
// (its build job waited for, and cancelled when the doctor is stopped).
Result<EnginePlace> built_engine(Session& session, SlurmClient& slurm, const ClusterProfile& profile,
                                 const DoctorRun& run,
                                 const std::function<void(const std::string&)>& progress,
                                 const std::function<bool()>& stopped) {
    if (run.engine_bundle.empty())
        return Status::Error(
            "cluster \"" + profile.name +
            "\" builds its engine on the cluster, but no engine bundle was given (or give the "
            "doctor a built one with --remote-engine; `slipway engine list --cluster " +
            profile.name + "` shows them)");
    // What the fingerprint and the build job read: the environment, and where the build job runs.
    RunConfig config;
    config.name = "doctor";
    config.slurm.container_image = run.job.environment.image;
    config.slurm.partition = run.job.partition;
    config.slurm.account = run.job.account;
    config.slurm.qos = run.job.qos;
    config.slurm.gpus_per_node = run.job.gpus_per_node;
    EngineBuildWatch watch;
    watch.poll = run.poll_interval;
    watch.progress = progress;
    watch.stop_requested = stopped;
    return find_or_build_engine(session, slurm, config, profile, run.engine_bundle, watch);
}

}  // namespace

Result<DoctorOutcome> run_doctor(Session& session, SlurmClient& slurm, const ClusterProfile& profile,
                                 DoctorRun run) {
    if (Status s = validate_profile(profile); !s.ok()) return s;
    auto progress = [&](const std::string& text) {
        if (run.on_progress) run.on_progress(text);
    };
    const auto stopped = [&] { return run.stop_requested && run.stop_requested(); };
    // The default sleep wakes every 100 ms to notice a stop request.
    const auto sleep = run.sleep ? run.sleep : [&](std::chrono::milliseconds d) {
        for (auto end = std::chrono::steady_clock::now() + d;
             !stopped() && std::chrono::steady_clock::now() < end;)
            std::this_thread::sleep_for(
                std::min<std::chrono::milliseconds>(d, std::chrono::milliseconds(100)));
    };
    DoctorJobRequest& job = run.job;
    if (job.partition.empty()) job.partition = profile.default_partition;
    if (job.account.empty()) job.account = profile.default_account;
    if (job.qos.empty()) job.qos = profile.default_qos;
    job.environment.runtime = profile.container;
    job.environment.setup = profile.env_setup;
    job.environment.gpus = job.gpus_per_node > 0;
    if (takes_image(profile.container) && job.environment.image.empty())
        return Status::Error("cluster \"" + profile.name + "\" runs jobs in containers (" +
                             container_mode_name(profile.container) +
                             "): give the image to run the checks in");
    const EngineSource source = engine_source_of(profile);
    if (source == EngineSource::kDesktop && run.remote_engine.empty() && run.engine_binary.empty())
        return Status::Error("cluster \"" + profile.name +
                             "\" runs this computer's engine: the engine binary must be deployed (build "
                             "slipway-engine or pass --engine)");

    Result<std::string> workdir = resolve_remote_path(session, profile.remote_workdir);
    if (!workdir.ok()) return workdir.status();
    DoctorOutcome outcome;
    outcome.doctor_dir = *workdir + "/doctor/" + make_run_id("doctor");
    job.doctor_dir = outcome.doctor_dir;
    if (!run.remote_engine.empty()) {
        job.engine = run.remote_engine;
    } else if (source == EngineSource::kBuild) {
        Result<EnginePlace> place = built_engine(session, slurm, profile, run, progress, stopped);
        if (!place.ok()) return place.status();
        job.engine = place->engine;
        job.engine_dir = place->dir;
    } else if (source == EngineSource::kImage) {
        job.engine = "slipway-engine";
    } else {
        job.engine = outcome.doctor_dir + "/slipway-engine";
    }
    const bool upload_engine = job.engine == outcome.doctor_dir + "/slipway-engine";
    // Rendered before anything is written on the cluster, so a refused value changes nothing there.
    Result<std::string> script = render_doctor_sbatch(job);
    if (!script.ok()) return script.status();

    if (Status s = session.mkdir_p(outcome.doctor_dir, 0755); !s.ok()) return s;
    if (upload_engine) {
        if (Status s = session.upload_file(run.engine_binary, job.engine, 0755); !s.ok()) return s;
    }
    const std::string& dir = outcome.doctor_dir;
    if (Status s = session.upload_bytes(doctor_node_script(), dir + "/" + kDoctorNodeScriptName, 0755);
        !s.ok())
        return s;
    if (Status s = session.upload_bytes(*script, dir + "/" + kDoctorSbatchName, 0644); !s.ok()) return s;
    if (stopped()) return Status::Error("the doctor was stopped before its job was submitted");
    Result<SubmittedJob> submitted = slurm.submit(dir, kDoctorSbatchName);
    if (!submitted.ok()) return submitted.status();
    const std::string job_id = submitted->job_id;
    progress("submitted doctor job " + job_id + " (" + dir + ")");

    // Wait, but never longer than the deadline: a job stuck on a hung node is cancelled and judged on what
    // it printed (the silent nodes fail with "no report").
    const std::chrono::milliseconds deadline =
        run.deadline.count() > 0
            ? std::chrono::milliseconds(run.deadline)
            : std::chrono::milliseconds(std::chrono::minutes(job.job_minutes) + std::chrono::minutes(5));
    std::chrono::milliseconds waited{0};
    JobInfo info;
    std::string last_state;
    bool cancelled = false;
    for (;;) {
        Result<JobInfo> polled = slurm.job(job_id);
        if (!polled.ok()) return polled.status();
        info = *polled;
        if (info.state != last_state) progress("job " + job_id + " " + info.state);
        last_state = info.state;
        if (is_terminal_state(info.state) || info.state == "UNKNOWN") break;
        const bool stop = stopped();
        if (stop || waited >= deadline) {
            if (Status s = slurm.cancel(job_id); !s.ok()) return s;
            cancelled = true;
            progress("job " + job_id + " still " + info.state + " after " +
                     std::to_string(waited.count() / 1000) + " s: cancelled");
            if (stop) return Status::Error("stopped: doctor job " + job_id + " cancelled (scancel)");
            break;
        }
        sleep(run.poll_interval);
        waited += run.poll_interval;
    }
    outcome.final_state = cancelled ? "CANCELLED (deadline)" : info.state;

    const std::string output_file = dir + "/doctor-" + job_id + ".out";
    Result<std::string> output = read_whole(session, output_file);
    if (output.ok())
        outcome.output = *output;
    else if (output.code() != StatusCode::kNotFound)
        return output.status();

    DoctorJudgement judgement = run.judgement;
    if (judgement.expected_nodes.empty()) judgement.expected_nodes = job.nodelist;
    if (judgement.expected_nodes.empty() && !info.node_list.empty() && info.node_list[0] != '(') {
        Result<std::vector<std::string>> hosts = expand_hostlist(session, info.node_list);
        if (hosts.ok()) judgement.expected_nodes = *hosts;
    }
    if (judgement.gpus_per_node == 0) judgement.gpus_per_node = job.gpus_per_node;
    outcome.report = judge_doctor_output(outcome.output, judgement);
    DoctorReport& report = outcome.report;
    report.cluster = profile.name;
    report.job_id = job_id;
    report.created = utc_timestamp(std::time(nullptr));
    report.partition = job.partition;
    if (cancelled)
        report.problems.push_back("the job did not finish within " + std::to_string(deadline.count() / 1000) +
                                  " s and was cancelled (state was " + info.state + ")");
    else if (!is_success_state(info.state))
        report.problems.push_back("the job ended " + info.state +
                                  (info.exit_code.empty() ? "" : " (exit " + info.exit_code + ")"));
    if (!output.ok()) report.problems.push_back("the job wrote no output (" + output_file + ")");
    if (report.nodes.empty())
        report.problems.push_back("no node reported and Slurm named none (the job never ran?)");
    return outcome;
}

}  // namespace slipway::remote
