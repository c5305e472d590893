// `slipway doctor`'s report: what the doctor job printed (tagged lines, nvidia-smi CSV, bench-comm JSON)
// parsed into one verdict per node (ok / slow / failed, with reasons and the measured busbw against the
// figure expected for the fabric), the table of those expected figures, and the last report of each cluster
// kept on this computer so `slipway submit --exclude-bad` can leave the bad nodes out. No I/O but the
// report store; the job script that prints these lines is doctor_script.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/status.h"

namespace slipway::remote {

// Every line the doctor job prints for the report starts with this tag, then the node name (or "-" for the
// job itself), the check, and the check's payload: `SLIPWAY-DOCTOR n01 intra-json {...}`.
inline constexpr const char* kDoctorTag = "SLIPWAY-DOCTOR";

// The nvidia-smi query the job runs (`--format=csv`: a header line, then one line per GPU, with units).
inline constexpr const char* kNvidiaSmiQuery =
    "index,pci.bus_id,name,driver_version,ecc.errors.uncorrected.volatile.total,clocks.sm,clocks.max.sm,"
    "clocks_throttle_reasons.hw_slowdown,temperature.gpu";

// One GPU as nvidia-smi reported it; optional fields are absent when nvidia-smi printed [N/A] or
// [Not Supported] (no ECC on a consumer card, no throttle reasons on old drivers).
struct GpuStatus {
    int index = 0;
    std::string bus_id;
    std::string name;
    std::string driver;
    std::optional<long long> ecc_uncorrected;
    std::optional<int> sm_clock_mhz;
    std::optional<int> max_sm_clock_mhz;
    std::optional<bool> hw_slowdown;
    std::optional<int> temperature_c;
};
// `nvidia-smi --query-gpu=kNvidiaSmiQuery --format=csv` output: the header names the columns (with or
// without units, in any order; clocks_event_reasons.* is accepted for the renamed throttle reasons). A line
// with the wrong number of fields or an unreadable number is an error naming its line number.
[[nodiscard]] Result<std::vector<GpuStatus>> parse_nvidia_smi_csv(const std::string& csv);

// What allreduce bandwidth a healthy fabric gives (nccl-tests' busbw of a large allreduce, GB/s): within a
// node and across nodes. Typical published nccl-tests figures, not guarantees: `--expect-busbw` overrides.
struct FabricExpectation {
    const char* name;
    const char* description;
    double intra_node_gbps;
    double inter_node_gbps;
};
const std::vector<FabricExpectation>& fabric_table();
[[nodiscard]] Result<FabricExpectation> find_fabric(const std::string& name);
// "auto": the fabric that fits the GPUs the nodes reported (H100/H200 -> h100-ndr, A100 -> a100-hdr, other
// GPUs -> pcie, none -> cpu-tcp).
const FabricExpectation& fabric_for_gpus(const std::string& gpu_name);

enum class NodeVerdict { kOk, kSlow, kFailed };
const char* verdict_name(NodeVerdict verdict);

// bench-comm's --json result: allreduce busbw per size.
struct BenchResult {
    std::string backend;
    int world_size = 0;
    struct Size {
        long long bytes = 0;
        double busbw_gbps = 0;
        bool correct = false;
    };
    std::vector<Size> sizes;
    // The busbw of the largest size (the bandwidth-bound one), 0 when there is none.
    double largest_busbw() const { return sizes.empty() ? 0 : sizes.back().busbw_gbps; }
    bool all_correct() const;
};
[[nodiscard]] Result<BenchResult> parse_bench_json(const std::string& json);

struct NodeHealth {
    std::string node;
    NodeVerdict verdict = NodeVerdict::kOk;
    std::vector<std::string> reasons;  // why slow or failed, one fact each
    bool reported = false;             // the node's checks printed anything at all
    std::string gpu_check;             // "ok: 8 x NVIDIA H100 ...", "not applicable: no nvidia-smi", ...
    std::vector<GpuStatus> gpus;
    std::optional<double> intra_busbw_gbps;  // within the node, largest size
    std::string rendezvous;                  // "ok MASTER:PORT 3 ms" / "failed ..." / "" (not run)
};

struct DoctorReport {
    std::string cluster;
    std::string job_id;
    std::string created;  // UTC, ISO 8601
    std::string partition;
    std::string fabric;  // the fabric_table() row the expected figures came from, or "given"
    double expected_intra_gbps = 0;
    double expected_inter_gbps = 0;
    double slow_fraction = 0.5;
    int ranks_per_node = 0;
    std::string backend;                     // what bench-comm used: gloo | NCCL
    std::optional<double> inter_busbw_gbps;  // across all nodes, largest size
    std::string inter_check;                 // "ok", "slow: ...", "failed: ...", "not run: one node"
    std::vector<NodeHealth> nodes;
    std::vector<std::string> problems;  // unreadable lines, naming them; the nodes they concern failed

    // Slow and failed nodes, in report order.
    std::vector<std::string> bad_nodes() const;
    // Every node ok and the crossing ok (or not applicable). A slow crossing with every node ok on its own
    // is not healthy either, though no node is to blame (two nodes cannot be told apart).
    bool healthy() const;
};

// How to judge what the job printed.
struct DoctorJudgement {
    std::vector<std::string> expected_nodes;  // the allocation; nodes that never reported are failed
    int gpus_per_node = 0;                    // 0: CPU nodes (GPU checks not applicable)
    std::string fabric = "auto";              // a fabric_table() name or "auto"
    std::optional<double> expect_busbw_gbps;  // overrides the table for both intra- and inter-node
    double slow_fraction = 0.5;               // slower than this share of expected (or of the median): slow
};

// One tagged line, split: `SLIPWAY-DOCTOR <node> <check> <payload>`.
struct DoctorLine {
    std::string node;
    std::string check;
    std::string payload;
};
// nullopt for a line without the tag (Slurm's and the shell's own output); an error naming `line_number`
// for a tagged line that does not split into node, check and payload.
[[nodiscard]] Result<std::optional<DoctorLine>> parse_doctor_line(const std::string& line, int line_number);

// The report from the job's whole output. Never fails on bad input: a malformed line becomes a problem
// ("line 12: ...") and fails the node it names; a node with no lines is "failed: no report".
DoctorReport judge_doctor_output(const std::string& output, const DoctorJudgement& judgement);

nlohmann::ordered_json report_to_json(const DoctorReport& report);
[[nodiscard]] Result<DoctorReport> report_from_json(const nlohmann::json& json, const std::string& where);
// The node table as the CLI prints it (NODE VERDICT BUSBW EXPECTED GPU RENDEZVOUS REASONS), then the
// across-node line and the nodes to exclude.
std::string format_report(const DoctorReport& report);

// Last report per cluster: $XDG_DATA_HOME/slipway/doctor/<cluster>.json, written atomically.
std::string default_doctor_dir();
class DoctorReportStore {
public:
    explicit DoctorReportStore(std::string dir = default_doctor_dir()) : dir_(std::move(dir)) {}
    const std::string& dir() const { return dir_; }
    std::string path_for(const std::string& cluster) const { return dir_ + "/" + cluster + ".json"; }
    [[nodiscard]] Status save(const DoctorReport& report) const;
    // kNotFound when the cluster has no report yet.
    [[nodiscard]] Result<DoctorReport> load(const std::string& cluster) const;

private:
    std::string dir_;
};

// Slurm node names as a report may hold them (the doctor reads them from the cluster, so they are checked
// before they reach an #SBATCH line): [A-Za-z0-9._-]+.
[[nodiscard]] Status check_node_name(const std::string& node);

}  // namespace slipway::remote
