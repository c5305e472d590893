// Pure parsers of what Slurm's commands print: sbatch --parsable, squeue, scontrol show job, sacct, sinfo
// (with GRES). No I/O: the client runs the commands, these turn their text into value structs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "contract/status.h"

namespace slipway::remote {

// Text helpers shared by the Slurm and doctor parsers: white space trimmed at both ends; fields split at
// `separator` (a trailing separator gives a last empty field).
std::string trim_space(const std::string& text);
std::vector<std::string> split_fields(const std::string& text, char separator);

// `sbatch --parsable` prints "jobid" or "jobid;cluster" (federations, multi-cluster).
struct SubmittedJob {
    std::string job_id;   // digits (an array job's "123_4" is kept as given)
    std::string cluster;  // empty when sbatch named none
};
Result<SubmittedJob> parse_sbatch_parsable(const std::string& out);

// A job state as Slurm names it (PENDING, RUNNING, COMPLETED, CANCELLED, ...); sacct's "CANCELLED by 1000"
// is reduced to its first word.
std::string normalize_job_state(const std::string& state);
// The job will not change state any more.
bool is_terminal_state(const std::string& state);
// Only COMPLETED means the job's program exited 0.
inline bool is_success_state(const std::string& state) {
    return state == "COMPLETED";
}

// The squeue format the client asks for, and one row of its output.
inline constexpr const char* kSqueueFormat = "%i|%T|%r|%M|%D|%R";
struct QueueRow {
    std::string job_id;
    std::string state;
    std::string reason;
    std::string elapsed;
    std::string nodes;
    std::string node_list;  // or the pending reason in parentheses, as squeue prints %R
};
// Lines of `squeue -h -o kSqueueFormat`; a line that does not split into 6 fields is an error naming it.
Result<std::vector<QueueRow>> parse_squeue(const std::string& out);

// `scontrol show job ID` (one or more "Key=Value" records; values may contain spaces, e.g. JobName).
using ScontrolRecord = std::map<std::string, std::string>;
std::vector<ScontrolRecord> parse_scontrol_records(const std::string& out);

// What the client reports about one job, whichever command it came from.
struct JobInfo {
    std::string job_id;
    std::string name;
    std::string state;      // normalized; "UNKNOWN" when no source knows the job any more
    std::string reason;     // squeue/scontrol reason ("None", "Resources", ...)
    std::string exit_code;  // "0:0" (exit code:signal) when known
    std::string elapsed;
    std::string node_list;
    std::string source;  // squeue | scontrol | sacct | none: where the state came from

    // " (Resources)" after a state or node list; empty when Slurm gives no reason (it says "None").
    std::string reason_suffix() const {
        return reason.empty() || reason == "None" ? "" : " (" + reason + ")";
    }
};
// The job in `scontrol show job` output; an error when the output holds no JobId/JobState.
Result<JobInfo> job_info_from_scontrol(const std::string& out);

// The format the client asks sacct for (-n -P -X): JobID|JobName|State|ExitCode|Elapsed|NodeList.
inline constexpr const char* kSacctFields = "JobID,JobName,State,ExitCode,Elapsed,NodeList";
Result<JobInfo> job_info_from_sacct(const std::string& out, const std::string& job_id);

// The largest count a sinfo field or GRES entry may hold (CPUs, MiB, GPUs of a node): far past any
// machine, and small enough that totals over nodes stay far from int64's end.
inline constexpr int64_t kMaxSlurmCount = int64_t{1} << 40;

// One GRES entry: "gpu:a100:4(S:0-1)" -> {name gpu, type a100, count 4}.
struct Gres {
    std::string name;
    std::string type;
    int64_t count = 0;
};
// "gpu:8", "gpu:h100:4,shard:8", "gpu:a100:4(S:0-1)", "(null)" -> entries (empty for "(null)"); an error
// for a count past kMaxSlurmCount, naming the entry.
Result<std::vector<Gres>> parse_gres(const std::string& text);
int64_t gpu_count(const std::vector<Gres>& gres);

// `sinfo -h -N -o kSinfoFormat`: one line per node and partition.
inline constexpr const char* kSinfoFormat = "%N|%P|%T|%c|%m|%G";
struct NodeRow {
    std::string node;
    std::string partition;  // without sinfo's '*' default marker
    bool default_partition = false;
    std::string state;  // idle, mixed, allocated, down*, drained, ...
    int64_t cpus = 0;
    int64_t memory_mb = 0;
    int64_t gpus = 0;
    std::string gpu_type;  // first typed GPU GRES, empty if untyped
};
Result<std::vector<NodeRow>> parse_sinfo_nodes(const std::string& out);

// Per partition totals, in the order sinfo lists them.
struct PartitionInfo {
    std::string name;
    bool is_default = false;
    int64_t nodes = 0;
    int64_t idle_nodes = 0;
    int64_t cpus = 0;
    int64_t gpus = 0;
};
std::vector<PartitionInfo> summarize_partitions(const std::vector<NodeRow>& nodes);

}  // namespace slipway::remote
