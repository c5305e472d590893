// SlurmClient (see slurm_client.h).
#include "remote/slurm/slurm_client.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "remote/ssh/shell_quote.h"

namespace slipway::remote {
namespace {

std::string trimmed(std::string text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.pop_back();
    size_t start = 0;
    while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start])))
        ++start;
    return text.substr(start);
}

std::string joined(const std::vector<std::string>& argv) {
    std::string text;
    for (const std::string& a : argv)
        text += (text.empty() ? "" : " ") + a;
    return text;
}

}  // namespace

Status check_job_id(const std::string& job_id) {
    const size_t underscore = job_id.find('_');
    auto digits = [](const std::string& s) {
        return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
    };
    if (!digits(job_id.substr(0, underscore)) ||
        (underscore != std::string::npos && !digits(job_id.substr(underscore + 1))))
        return Status::Error("\"" + job_id + "\" is not a Slurm job id");
    return Status::Ok();
}

Status check_host_list(const std::string& host_list) {
    const bool allowed = std::all_of(host_list.begin(), host_list.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '.' || c == '_' || c == '-' || c == ',' || c == '[' || c == ']';
    });
    if (host_list.empty() || !allowed || host_list.front() == '-' || host_list.size() > 4096)
        return Status::Error("\"" + host_list + "\" is not a Slurm host list");
    return Status::Ok();
}

Result<ExecResult> SlurmClient::run(const std::vector<std::string>& argv, const std::string& dir) {
    Result<std::string> command = shell_command(argv);
    if (!command.ok()) return command.status();
    std::string line = *command;
    if (!dir.empty()) {
        Result<std::string> quoted = shell_quote(dir, "run folder");
        if (!quoted.ok()) return quoted.status();
        line = "cd " + *quoted + " && " + line;
    }
    Result<ExecResult> result = session_.exec(line, timeout_);
    if (!result.ok()) {
        return Status::Error(result.code(),
                             session_.describe() + ": `" + joined(argv) + "`: " + result.error());
    }
    return result;
}

Status SlurmClient::failure(const std::vector<std::string>& argv, const ExecResult& result) const {
    std::string why = trimmed(result.err);
    if (why.empty()) why = trimmed(result.out);
    return Status::Error(session_.describe() + ": `" + joined(argv) + "` exited " +
                         std::to_string(result.exit_status) + (why.empty() ? "" : ": " + why));
}

Result<std::string> SlurmClient::test_only(const std::string& dir, const std::string& script) {
    const std::vector<std::string> argv = {"sbatch", "--test-only", script};
    Result<ExecResult> r = run(argv, dir);
    if (!r.ok()) return r.status();
    if (r->exit_status != 0) return failure(argv, *r);
    // sbatch reports the estimate on stderr.
    return trimmed(r->err + r->out);
}

Result<SubmittedJob> SlurmClient::submit(const std::string& dir, const std::string& script) {
    const std::vector<std::string> argv = {"sbatch", "--parsable", script};
    Result<ExecResult> r = run(argv, dir);
    if (!r.ok()) return r.status();
    if (r->exit_status != 0) return failure(argv, *r);
    Result<SubmittedJob> job = parse_sbatch_parsable(r->out);
    if (!job.ok()) return Status::Error(session_.describe() + ": " + job.error());
    return job;
}

namespace {

JobInfo info_from_queue(const QueueRow& row) {
    JobInfo info;
    info.job_id = row.job_id;
    info.state = row.state;
    info.reason = row.reason;
    info.elapsed = row.elapsed;
    info.node_list = row.node_list;
    info.source = "squeue";
    return info;
}

}  // namespace

Result<JobInfo> SlurmClient::job(const std::string& job_id) {
    if (Status s = check_job_id(job_id); !s.ok()) return s;
    const std::vector<std::string> squeue = {"squeue", "-h", "-t", "all", "-j", job_id, "-o", kSqueueFormat};
    Result<ExecResult> q = run(squeue);
    if (!q.ok()) return q.status();
    // squeue exits 1 with "Invalid job id specified" once the job is purged: that is "left the queue".
    if (q->exit_status != 0) return job_from_queue(job_id, {});
    Result<std::vector<QueueRow>> rows = parse_squeue(q->out);
    if (!rows.ok()) return Status::Error(session_.describe() + ": " + rows.error());
    return job_from_queue(job_id, *rows);
}

Result<std::vector<JobInfo>> SlurmClient::jobs(const std::vector<std::string>& job_ids) {
    if (job_ids.size() == 1) {
        Result<JobInfo> one = job(job_ids.front());
        if (!one.ok()) return one.status();
        return std::vector<JobInfo>{*one};
    }
    std::string id_list;
    for (const std::string& id : job_ids) {
        if (Status s = check_job_id(id); !s.ok()) return s;
        id_list += (id_list.empty() ? "" : ",") + id;
    }
    std::vector<JobInfo> out;
    if (job_ids.empty()) return out;
    // With several ids squeue lists the ones it knows and exits 0 (1 only for one unknown id).
    const std::vector<std::string> squeue = {"squeue", "-h", "-t", "all", "-j", id_list, "-o", kSqueueFormat};
    Result<ExecResult> q = run(squeue);
    if (!q.ok()) return q.status();
    if (q->exit_status != 0) return failure(squeue, *q);
    Result<std::vector<QueueRow>> rows = parse_squeue(q->out);
    if (!rows.ok()) return Status::Error(session_.describe() + ": " + rows.error());
    for (const std::string& id : job_ids) {
        Result<JobInfo> info = job_from_queue(id, *rows);
        if (!info.ok()) return info.status();
        out.push_back(*info);
    }
    return out;
}

Result<JobInfo> SlurmClient::job_from_queue(const std::string& job_id, const std::vector<QueueRow>& rows) {
    // A finished job squeue still lists is asked about again (scontrol has its exit code), but squeue's
    // answer stands if the job is purged in between.
    std::optional<JobInfo> finished_in_queue;
    for (const QueueRow& row : rows) {
        if (row.job_id != job_id) continue;
        if (!is_terminal_state(row.state)) return info_from_queue(row);
        finished_in_queue = info_from_queue(row);
    }
    const std::vector<std::string> scontrol = {"scontrol", "show", "job", job_id};
    Result<ExecResult> c = run(scontrol);
    if (!c.ok()) return c.status();
    if (c->exit_status == 0) {
        Result<JobInfo> info = job_info_from_scontrol(c->out);
        if (info.ok()) return info;
    }
    const std::vector<std::string> sacct = {"sacct", "-n", "-P", "-X", "-j", job_id, "-o", kSacctFields};
    Result<ExecResult> a = run(sacct);
    if (!a.ok()) return a.status();
    if (a->exit_status == 0) {
        Result<JobInfo> info = job_info_from_sacct(a->out, job_id);
        if (info.ok()) return info;
    }
    if (finished_in_queue) return *finished_in_queue;
    JobInfo unknown;
    unknown.job_id = job_id;
    unknown.state = "UNKNOWN";
    unknown.source = "none";
    unknown.reason = "the job left the queue and neither scontrol nor sacct knows it (accounting may be off)";
    return unknown;
}

Status SlurmClient::cancel(const std::string& job_id) {
    if (Status s = check_job_id(job_id); !s.ok()) return s;
    const std::vector<std::string> argv = {"scancel", job_id};
    Result<ExecResult> r = run(argv);
    if (!r.ok()) return r.status();
    if (r->exit_status != 0) return failure(argv, *r);
    return Status::Ok();
}

Result<std::vector<NodeRow>> SlurmClient::nodes() {
    return nodes(std::string());
}

Result<std::vector<NodeRow>> SlurmClient::nodes(const std::string& host_list) {
    std::vector<std::string> argv = {"sinfo", "-h", "-N", "-o", kSinfoFormat};
    if (!host_list.empty()) {
        if (Status s = check_host_list(host_list); !s.ok()) return s;
        argv.insert(argv.end(), {"-n", host_list});
    }
    Result<ExecResult> r = run(argv);
    if (!r.ok()) return r.status();
    if (r->exit_status != 0) return failure(argv, *r);
    Result<std::vector<NodeRow>> rows = parse_sinfo_nodes(r->out);
    if (!rows.ok()) return Status::Error(session_.describe() + ": " + rows.error());
    return rows;
}

}  // namespace slipway::remote
