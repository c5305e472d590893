// Tests of `slipway doctor`'s library: the job scripts (bash -n, shellcheck, every value quoted or refused,
// injection attempts refused), the nvidia-smi and job-output parsers on real-shaped text with garbage and
// truncated lines (errors name the line), the verdicts (slow against the fabric and against the median,
// failed, no report), the report store, and run_doctor over FakeSession with a job that never ends.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>

#include "remote/deploy/doctor_run.h"
#include "remote/deploy/engine_build.h"
#include "remote/slurm/doctor_report.h"
#include "remote/slurm/doctor_script.h"
#include "remote/slurm/rendezvous_script.h"
#include "remote/ssh/fake_session.h"
#include "temp_dir.h"
#include "test_paths.h"

namespace slipway::remote {
namespace {

using testing_support::TempDir;

std::string data(const std::string& name) {
    std::ifstream in(std::string(test_paths::source_dir("/tests/data/doctor/")) + name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

int run_shell(const std::string& command, std::string* output = nullptr) {
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    if (!pipe) return -1;
    char buffer[4096];
    std::string text;
    for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;)
        text.append(buffer, n);
    if (output) *output = text;
    return WEXITSTATUS(::pclose(pipe));
}

DoctorJobRequest request() {
    DoctorJobRequest r;
    r.doctor_dir = "/scratch/me/doctor/d1";
    r.engine = "/scratch/me/doctor/d1/slipway-engine";
    r.partition = "gpu";
    r.nodes = 2;
    return r;
}

TEST(DoctorScript, PassesBashAndShellcheck) {
    TempDir dir;
    DoctorJobRequest r = request();
    r.gpus_per_node = 8;
    r.environment.runtime = ContainerMode::kPyxis;
    r.environment.image = "nvcr.io#nvidia/pytorch:24.04-py3";
    r.nodelist = {"n01", "n02", "n03"};
    r.exclude = {"n07"};
    Result<std::string> script = render_doctor_sbatch(r);
    ASSERT_TRUE(script.ok()) << script.error();
    EXPECT_NE(script->find("#SBATCH --nodelist=n01,n02,n03\n"), std::string::npos);
    // Three nodes or more: each other node's link to the master, one at a time, on its own port file.
    EXPECT_NE(script->find("for peer in \"${hosts[@]:1}\"; do\n"), std::string::npos) << *script;
    EXPECT_NE(script->find("--nodelist=\"$MASTER_ADDR,$peer\""), std::string::npos) << *script;
    r.nodelist = {"n01", "n02"};
    Result<std::string> two = render_doctor_sbatch(r);
    ASSERT_TRUE(two.ok()) << two.error();
    EXPECT_EQ(two->find("step links"), std::string::npos) << "one link cannot tell which end is slow";
    EXPECT_NE(script->find("#SBATCH --exclude=n07\n"), std::string::npos);
    EXPECT_NE(script->find("#SBATCH --gres=gpu:8\n"), std::string::npos);
    EXPECT_NE(script->find("#SBATCH --ntasks-per-node=8\n"), std::string::npos);
    EXPECT_NE(script->find("#SBATCH --exclusive\n"), std::string::npos);
    // The training script's rendezvous: rank 0 binds a free port and publishes it; no port from the job id.
    EXPECT_NE(script->find(rendezvous_lines("doctor_dir")), std::string::npos);
    EXPECT_NE(script->find("unset MASTER_PORT\n"), std::string::npos);
    EXPECT_EQ(script->find("SLURM_JOB_ID %"), std::string::npos);
    EXPECT_NE(doctor_node_script().find("read -r port _ <\"$SLIPWAY_RDZV_FILE\""), std::string::npos);
    for (const auto& [name, text] :
         {std::pair{"doctor.sbatch", *script}, std::pair{"node_check.sh", doctor_node_script()}}) {
        const std::string path = dir.path() + "/" + name;
        std::ofstream(path) << text;
        std::string output;
        EXPECT_EQ(run_shell("bash -n " + path, &output), 0) << name << ": " << output;
        if (run_shell("command -v shellcheck >/dev/null") == 0)
            EXPECT_EQ(run_shell("shellcheck -s bash " + path, &output), 0) << name << ":\n" << output;
    }
}

// Under apptainer with the site's setup line and an engine built on the cluster: the setup runs first, the
// checks run in the image with the doctor's and the engine's folders bound at their own paths.
TEST(DoctorScript, RunsInTheProfilesEnvironmentWithABuiltEngine) {
    TempDir dir;
    DoctorJobRequest r = request();
    r.engine = "/scratch/me/engines/0123456789abcdef/slipway-engine";
    r.engine_dir = "/scratch/me/engines/0123456789abcdef";
    r.gpus_per_node = 4;
    r.environment = {
        ContainerMode::kApptainer, "/scratch/me/pytorch.sif", {}, "", {"module load apptainer"}, true};
    Result<std::string> script = render_doctor_sbatch(r);
    ASSERT_TRUE(script.ok()) << script.error();
    const size_t setup = script->find("  module load apptainer\n");
    const size_t step = script->find("step node");
    ASSERT_NE(setup, std::string::npos) << *script;
    EXPECT_LT(setup, step);
    EXPECT_NE(script->find("engine_dir=/scratch/me/engines/0123456789abcdef\n"), std::string::npos)
        << *script;
    EXPECT_NE(script->find("mounts=\"${mounts:+$mounts,}$engine_dir:$engine_dir\"\n"), std::string::npos);
    EXPECT_NE(script->find("container=(apptainer exec --nv --bind \"$mounts\" --pwd \"$workdir\" "
                           "/scratch/me/pytorch.sif)\n"),
              std::string::npos)
        << *script;
    const std::string path = dir.path() + "/doctor.sbatch";
    std::ofstream(path) << *script;
    std::string output;
    EXPECT_EQ(run_shell("bash -n " + path, &output), 0) << output;
    if (run_shell("command -v shellcheck >/dev/null") == 0)
        EXPECT_EQ(run_shell("shellcheck -s bash " + path, &output), 0) << output;
}

// A hostile folder and engine path arrive intact as data: the script's own assignments echo them back.
TEST(DoctorScript, ValuesAreQuoted) {
    TempDir dir;
    const std::string marker = dir.path() + "/pwned";
    DoctorJobRequest r = request();
    r.doctor_dir = "/tmp/it's \"q\" $(touch " + marker + ") `touch " + marker + "`; x";
    r.engine = "/opt/e $(touch " + marker + ")";
    Result<std::string> script = render_doctor_sbatch(r);
    ASSERT_TRUE(script.ok()) << script.error();
    // Only the variable lines, then print what the shell made of them.
    std::string assignments;
    std::istringstream in(*script);
    for (std::string line; std::getline(in, line);)
        if (line.rfind("doctor_dir=", 0) == 0 || line.rfind("export DOCTOR_", 0) == 0)
            assignments += line + "\n";
    const std::string path = dir.path() + "/vars.sh";
    std::ofstream(path) << assignments << "printf '%s\\n' \"$doctor_dir\" \"$DOCTOR_ENGINE\"\n";
    std::string output;
    ASSERT_EQ(run_shell("bash " + path, &output), 0) << output;
    EXPECT_EQ(output, r.doctor_dir + "\n" + r.engine + "\n");
    EXPECT_FALSE(std::ifstream(marker).good()) << "a value executed";
}

TEST(DoctorScript, RefusesWhatCannotBeQuotedOrChecked) {
    const std::vector<std::pair<std::string, std::function<void(DoctorJobRequest&)>>> cases = {
        {"partition", [](DoctorJobRequest& r) { r.partition = "gpu\n#SBATCH --uid=0"; }},
        {"partition", [](DoctorJobRequest& r) { r.partition = "gpu;reboot"; }},
        {"account", [](DoctorJobRequest& r) { r.account = "a b"; }},
        {"Slurm node name",
         [](DoctorJobRequest& r) {
             r.nodelist = {"n01", "n02 --uid=0"};
         }},
        {"Slurm node name", [](DoctorJobRequest& r) { r.exclude = {"$(reboot)"}; }},
        {"--sizes", [](DoctorJobRequest& r) { r.sizes = "1M;reboot"; }},
        {"container image",
         [](DoctorJobRequest& r) {
             r.environment.runtime = ContainerMode::kPyxis;
             r.environment.image = "img --container-mounts=/:/x";
         }},
        {"a container image is needed",
         [](DoctorJobRequest& r) { r.environment.runtime = ContainerMode::kApptainer; }},
        {"absolute", [](DoctorJobRequest& r) { r.doctor_dir = "relative/dir"; }},
        {"NUL", [](DoctorJobRequest& r) { r.engine = std::string("/opt/e\0x", 8); }},
        {"--step-timeout", [](DoctorJobRequest& r) { r.step_timeout_s = 0; }},
        {"--nodes", [](DoctorJobRequest& r) { r.nodes = 0; }},
    };
    for (const auto& [what, change] : cases) {
        DoctorJobRequest r = request();
        change(r);
        Result<std::string> script = render_doctor_sbatch(r);
        ASSERT_FALSE(script.ok()) << what;
        EXPECT_NE(script.error().find(what), std::string::npos) << script.error();
    }
}

TEST(NvidiaSmi, ParsesRealShapedCsv) {
    Result<std::vector<GpuStatus>> gpus = parse_nvidia_smi_csv(data("nvidia-smi-h100.csv"));
    ASSERT_TRUE(gpus.ok()) << gpus.error();
    ASSERT_EQ(gpus->size(), 4u);
    EXPECT_EQ((*gpus)[0].name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ((*gpus)[0].driver, "535.129.03");
    EXPECT_EQ((*gpus)[0].bus_id, "00000000:18:00.0");
    EXPECT_EQ((*gpus)[2].ecc_uncorrected, 2);
    EXPECT_EQ((*gpus)[3].sm_clock_mhz, 1410);
    EXPECT_EQ((*gpus)[3].max_sm_clock_mhz, 1980);
    EXPECT_EQ((*gpus)[3].hw_slowdown, true);
    EXPECT_EQ((*gpus)[3].temperature_c, 88);

    Result<std::vector<GpuStatus>> geforce = parse_nvidia_smi_csv(data("nvidia-smi-geforce.csv"));
    ASSERT_TRUE(geforce.ok()) << geforce.error();
    EXPECT_FALSE((*geforce)[0].ecc_uncorrected.has_value());  // [N/A]: no ECC on this card
    EXPECT_EQ((*geforce)[0].hw_slowdown, false);              // clocks_event_reasons.* header
}

TEST(NvidiaSmi, BadLinesAreNamed) {
    const std::string header =
        data("nvidia-smi-h100.csv").substr(0, data("nvidia-smi-h100.csv").find('\n') + 1);
    Result<std::vector<GpuStatus>> truncated =
        parse_nvidia_smi_csv(header + "0, 00000000:18:00.0, NVIDIA H1\n");
    ASSERT_FALSE(truncated.ok());
    EXPECT_NE(truncated.error().find("line 2"), std::string::npos) << truncated.error();
    Result<std::vector<GpuStatus>> garbage =
        parse_nvidia_smi_csv(header + "0, x, NVIDIA H100, 535, 0, fast, 1980 MHz, Not Active, 34\n");
    ASSERT_FALSE(garbage.ok());
    EXPECT_NE(garbage.error().find("line 2: clocks.sm \"fast\""), std::string::npos) << garbage.error();
    Result<std::vector<GpuStatus>> no_header = parse_nvidia_smi_csv(
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n");
    ASSERT_FALSE(no_header.ok());
    EXPECT_NE(no_header.error().find("line 1"), std::string::npos) << no_header.error();
}

TEST(DoctorLine, SplitsAndNamesBadLines) {
    Result<std::optional<DoctorLine>> plain = parse_doctor_line("srun: error: Unable to create step", 3);
    ASSERT_TRUE(plain.ok());
    EXPECT_FALSE(plain->has_value());
    Result<std::optional<DoctorLine>> labelled =
        parse_doctor_line("0: SLIPWAY-DOCTOR n01 rendezvous ok n01:2 1 ms", 4);
    ASSERT_TRUE(labelled.ok() && labelled->has_value());
    EXPECT_EQ((*labelled)->node, "n01");
    EXPECT_EQ((*labelled)->check, "rendezvous");
    EXPECT_EQ((*labelled)->payload, "ok n01:2 1 ms");
    for (const std::string bad :
         {"SLIPWAY-DOCTOR n01", "SLIPWAY-DOCTOR n01 ", "SLIPWAY-DOCTOR $(x) begin y"}) {
        Result<std::optional<DoctorLine>> r = parse_doctor_line(bad, 17);
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_NE(r.error().find("line 17"), std::string::npos) << r.error();
    }
}

const NodeHealth& node(const DoctorReport& report, const std::string& name) {
    for (const NodeHealth& n : report.nodes)
        if (n.node == name) return n;
    static NodeHealth none;
    ADD_FAILURE() << "no node " << name;
    return none;
}

TEST(DoctorJudge, SlowFailedAndSilentNodes) {
    DoctorJudgement judgement;  // CPU nodes, fabric auto: cpu-tcp's 0.5 GB/s
    const DoctorReport report = judge_doctor_output(data("job-two-nodes.out"), judgement);
    EXPECT_EQ(report.job_id, "4711");
    EXPECT_EQ(report.fabric, "cpu-tcp");
    EXPECT_EQ(report.backend, "gloo");
    ASSERT_EQ(report.nodes.size(), 3u);
    EXPECT_EQ(node(report, "n01").verdict, NodeVerdict::kOk);
    EXPECT_DOUBLE_EQ(*node(report, "n01").intra_busbw_gbps, 1.259);
    EXPECT_EQ(node(report, "n01").gpu_check, "not applicable: no nvidia-smi");
    EXPECT_EQ(node(report, "n01").rendezvous, "ok n01:24711 12 ms");
    const NodeHealth& n02 = node(report, "n02");
    EXPECT_EQ(n02.verdict, NodeVerdict::kSlow);
    ASSERT_FALSE(n02.reasons.empty());
    EXPECT_EQ(n02.reasons[0], "intra-node busbw 0.06 GB/s < 50% of the expected 0.50 GB/s (cpu-tcp)");
    EXPECT_EQ(node(report, "n03").verdict, NodeVerdict::kFailed);
    EXPECT_EQ(node(report, "n03").reasons, std::vector<std::string>{"no report"});
    EXPECT_EQ(report.bad_nodes(), (std::vector<std::string>{"n02", "n03"}));
    // The truncated across-node JSON and the line without a check are named; Slurm's errors are kept.
    std::string problems;
    for (const std::string& p : report.problems)
        problems += p + "\n";
    EXPECT_NE(problems.find("line 16 (n01 across-json): bench-comm JSON is not a JSON object"),
              std::string::npos)
        << problems;
    EXPECT_NE(problems.find("line 17: no check named"), std::string::npos) << problems;
    EXPECT_NE(problems.find("line 18: slurmstepd: error: *** STEP 4711.1"), std::string::npos) << problems;
    EXPECT_EQ(report.inter_check.rfind("failed: no result", 0), 0u) << report.inter_check;
    const std::string table = format_report(report);
    EXPECT_NE(table.find("exclude: n02,n03\n"), std::string::npos) << table;
}

// Real: node2's slurmd stopped on the two-node test cluster. node2 is failed; node1, whose own checks passed,
// is not blamed for the across step that could not start without node2.
TEST(DoctorJudge, ANodeWhoseSlurmdIsStoppedFailsAloneWithoutItsPeers) {
    DoctorJudgement judgement;
    judgement.expected_nodes = {"node1", "node2"};
    judgement.expect_busbw_gbps = 0.3;
    const DoctorReport report = judge_doctor_output(data("two-nodes-slurmd-stopped.out"), judgement);
    EXPECT_EQ(report.bad_nodes(), std::vector<std::string>{"node2"});
    EXPECT_EQ(node(report, "node2").reasons, std::vector<std::string>{"no report"});
    const NodeHealth& node1 = node(report, "node1");
    EXPECT_EQ(node1.verdict, NodeVerdict::kOk);
    EXPECT_EQ(node1.reasons,
              std::vector<std::string>{"rendezvous not checked: node2 did not run its checks"});
    EXPECT_EQ(report.inter_check.rfind("failed: no result", 0), 0u) << report.inter_check;
    EXPECT_FALSE(report.healthy());
    std::string problems;
    for (const std::string& p : report.problems)
        problems += p + "\n";
    EXPECT_NE(problems.find("Task launch for StepId=1.0 failed on node node2"), std::string::npos)
        << problems;
    EXPECT_NE(format_report(report).find("exclude: node2\n"), std::string::npos) << format_report(report);
}

// Three CPU nodes, each fine on its own; the links step measured each other node's link to the master n1.
std::string three_nodes_with_links(double n2_link, double n3_link) {
    const auto bench = [](int world, double busbw) {
        return "{\"backend\":\"gloo\",\"world_size\":" + std::to_string(world) +
               ",\"results\":[{\"bytes\":1,\"busbw_gbps\":" + std::to_string(busbw) + ",\"correct\":true}]}";
    };
    std::string output = "SLIPWAY-DOCTOR - job 9 nodes n1 n2 n3 master n1:20009\n";
    for (const char* n : {"n1", "n2", "n3"})
        output += std::string("SLIPWAY-DOCTOR ") + n + " begin " + n + "\nSLIPWAY-DOCTOR " + n +
                  " gpu-none no nvidia-smi\nSLIPWAY-DOCTOR " + n + " intra-json " + bench(2, 0.9) +
                  "\nSLIPWAY-DOCTOR " + n + " rendezvous ok n1:20009 2 ms\n";
    output += "SLIPWAY-DOCTOR n1 across-json " + bench(6, std::min(n2_link, n3_link)) + "\n";
    output += "SLIPWAY-DOCTOR - step links\n";
    output += "SLIPWAY-DOCTOR n1 link-json n2 " + bench(2, n2_link) + "\n";
    output += "SLIPWAY-DOCTOR n1 link-json n3 " + bench(2, n3_link) + "\n";
    return output;
}

TEST(DoctorJudge, ASlowLinkNamesItsNodeAndEverySlowLinkTheMaster) {
    DoctorJudgement judgement;
    judgement.expect_busbw_gbps = 0.3;
    const DoctorReport n2_slow = judge_doctor_output(three_nodes_with_links(0.02, 0.8), judgement);
    EXPECT_EQ(n2_slow.bad_nodes(), std::vector<std::string>{"n2"});
    EXPECT_EQ(node(n2_slow, "n2").reasons,
              std::vector<std::string>{"link to the master n1: 0.02 GB/s < 50% of the expected 0.30 GB/s"});
    EXPECT_EQ(n2_slow.inter_check.rfind("slow:", 0), 0u) << n2_slow.inter_check;
    const DoctorReport master_slow = judge_doctor_output(three_nodes_with_links(0.02, 0.03), judgement);
    EXPECT_EQ(master_slow.bad_nodes(), std::vector<std::string>{"n1"});
    ASSERT_FALSE(node(master_slow, "n1").reasons.empty());
    EXPECT_EQ(node(master_slow, "n1").reasons.back().rfind("every link to another node is slow or failed", 0),
              0u);
    // Below half the links' median while the table's figure is met: still slow.
    judgement.expect_busbw_gbps = 0.01;
    const DoctorReport median = judge_doctor_output(three_nodes_with_links(0.9, 0.1), judgement);
    EXPECT_EQ(median.bad_nodes(), std::vector<std::string>{"n3"});
    // A link that failed fails its node.
    std::string failed = three_nodes_with_links(0.8, 0.8);
    failed.replace(failed.find("link-json n3"), std::string::npos, "link-error n3 timed out after 20 s\n");
    const DoctorReport n3_failed = judge_doctor_output(failed, judgement);
    EXPECT_EQ(node(n3_failed, "n3").verdict, NodeVerdict::kFailed);
    EXPECT_EQ(node(n3_failed, "n3").reasons,
              std::vector<std::string>{"link to the master n1: failed: timed out after 20 s"});
}

TEST(DoctorJudge, SlowAgainstTheMedianWhenTheTableIsLow) {
    DoctorJudgement judgement;
    judgement.expect_busbw_gbps = 0.05;  // both nodes beat the figure, but n02 is far below its peer
    const DoctorReport report = judge_doctor_output(data("job-two-nodes.out"), judgement);
    EXPECT_EQ(report.fabric, "given");
    EXPECT_EQ(node(report, "n01").verdict, NodeVerdict::kOk);
    ASSERT_EQ(node(report, "n02").verdict, NodeVerdict::kSlow);
    EXPECT_NE(node(report, "n02").reasons[0].find("of the nodes' median 0.66 GB/s"), std::string::npos)
        << node(report, "n02").reasons[0];
}

TEST(DoctorJudge, GpuChecks) {
    std::string output = "SLIPWAY-DOCTOR - job 9 nodes g01 g02 master g01:20009\n";
    for (const char* n : {"g01", "g02"}) {
        output += std::string("SLIPWAY-DOCTOR ") + n + " begin " + n + "\n";
        std::istringstream csv(
            data(std::string(n) == "g01" ? "nvidia-smi-h100.csv" : "nvidia-smi-geforce.csv"));
        for (std::string line; std::getline(csv, line);)
            output += std::string("SLIPWAY-DOCTOR ") + n + " gpu-csv " + line + "\n";
        output += std::string("SLIPWAY-DOCTOR ") + n +
                  " intra-json "
                  "{\"backend\":\"nccl\",\"world_size\":4,\"results\":[{\"bytes\":1,\"busbw_gbps\":400,"
                  "\"correct\":true}]}\n";
        output += std::string("SLIPWAY-DOCTOR ") + n + " rendezvous ok g01:20009 2 ms\n";
    }
    output +=
        "SLIPWAY-DOCTOR g01 across-json "
        "{\"backend\":\"nccl\",\"world_size\":8,\"results\":[{\"bytes\":1,\"busbw_gbps\":90,\"correct\":true}"
        "]}\n";
    DoctorJudgement judgement;
    judgement.gpus_per_node = 4;
    const DoctorReport report = judge_doctor_output(output, judgement);
    EXPECT_EQ(report.fabric, "h100-ndr");  // from the first node's GPUs
    const NodeHealth& g01 = node(report, "g01");
    EXPECT_EQ(g01.verdict, NodeVerdict::kFailed);
    std::string reasons;
    for (const std::string& r : g01.reasons)
        reasons += r + "\n";
    EXPECT_NE(reasons.find("GPU 2 (00000000:3A:00.0): 2 uncorrected ECC errors"), std::string::npos)
        << reasons;
    EXPECT_NE(reasons.find("GPU 3 (00000000:5D:00.0): hardware slowdown active"), std::string::npos)
        << reasons;
    const NodeHealth& g02 = node(report, "g02");
    EXPECT_EQ(g02.verdict, NodeVerdict::kFailed);
    EXPECT_EQ(g02.reasons[0], "1 of 4 GPUs visible");
    EXPECT_EQ(report.inter_check, "slow: 90 GB/s < 50% of the expected 350 GB/s");
}

// Two CPU nodes, each fast on its own, whose crossing is slow (one's link throttled): no node can be blamed,
// yet the report is not healthy (the doctor exits 3), and nothing is excluded.
TEST(DoctorJudge, ASlowCrossingIsNotHealthyThoughNoNodeIsToBlame) {
    std::string output = "SLIPWAY-DOCTOR - job 9 nodes node1 node2 master node1:20009\n";
    for (const char* n : {"node1", "node2"})
        output += std::string("SLIPWAY-DOCTOR ") + n + " begin " + n + "\nSLIPWAY-DOCTOR " + n +
                  " gpu-none no nvidia-smi\nSLIPWAY-DOCTOR " + n +
                  " intra-json {\"backend\":\"gloo\",\"world_size\":2,\"results\":[{\"bytes\":1,"
                  "\"busbw_gbps\":0.9,\"correct\":true}]}\nSLIPWAY-DOCTOR " +
                  n + " rendezvous ok node1:20009 2 ms\n";
    output +=
        "SLIPWAY-DOCTOR node1 across-json {\"backend\":\"gloo\",\"world_size\":4,\"results\":[{\"bytes\":1,"
        "\"busbw_gbps\":0.02,\"correct\":true}]}\n";
    DoctorJudgement judgement;
    judgement.expect_busbw_gbps = 0.3;
    const DoctorReport report = judge_doctor_output(output, judgement);
    EXPECT_TRUE(report.bad_nodes().empty());
    EXPECT_EQ(report.inter_check.rfind("slow: 0.02 GB/s", 0), 0u) << report.inter_check;
    EXPECT_FALSE(report.healthy());
    DoctorReport crossing_ok = report;
    crossing_ok.inter_check = "ok";
    EXPECT_TRUE(crossing_ok.healthy());
    crossing_ok.inter_check = "not applicable: one node";
    EXPECT_TRUE(crossing_ok.healthy());
}

TEST(DoctorJudge, CpuNodeWithoutNvidiaSmiIsNotAGpuFailure) {
    const std::string output =
        "SLIPWAY-DOCTOR c1 begin c1\nSLIPWAY-DOCTOR c1 gpu-none no nvidia-smi\n"
        "SLIPWAY-DOCTOR c1 intra-error timed out after 30 s\n";
    const DoctorReport report = judge_doctor_output(output, {});
    ASSERT_EQ(report.nodes.size(), 1u);
    EXPECT_EQ(report.nodes[0].gpu_check, "not applicable: no nvidia-smi");
    EXPECT_EQ(report.nodes[0].reasons,
              std::vector<std::string>{"intra-node bench-comm: timed out after 30 s"});
    EXPECT_EQ(report.inter_check, "not applicable: one node");
}

TEST(DoctorReportStore, SavesAndLoadsTheLastReport) {
    TempDir dir;
    const DoctorReportStore store(dir.path() + "/doctor");
    EXPECT_EQ(store.load("c").code(), StatusCode::kNotFound);
    DoctorReport report = judge_doctor_output(data("job-two-nodes.out"), {});
    report.cluster = "c";
    report.created = "2026-11-23T15:00:00Z";
    ASSERT_TRUE(store.save(report).ok());
    Result<DoctorReport> loaded = store.load("c");
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    EXPECT_EQ(report_to_json(*loaded).dump(), report_to_json(report).dump());
    EXPECT_EQ(loaded->bad_nodes(), (std::vector<std::string>{"n02", "n03"}));
    std::ofstream(store.path_for("bad")) << "{\"schema\": \"slipway.doctor/1\"}";
    EXPECT_FALSE(store.load("bad").ok());
}

// A job that never ends (a hung node) is cancelled at the deadline and judged on what it printed.
TEST(DoctorRun, DeadlineCancelsAndSilentNodesFail) {
    FakeSession session;
    session.on_exec_prefix("printf '%s' \"$HOME\"", {"/home/me", "", 0});
    session.set_exec_handler([](const std::string& command) -> Result<ExecResult> {
        if (command.find("sbatch --parsable") != std::string::npos) return ExecResult{"77\n", "", 0};
        if (command.find("squeue") != std::string::npos)
            return ExecResult{"77|RUNNING|None|1:00|2|a[1-2]\n", "", 0};
        if (command.find("scancel") != std::string::npos) return ExecResult{"", "", 0};
        if (command.find("scontrol show hostnames") != std::string::npos)
            return ExecResult{"a1\na2\n", "", 0};
        return Status::Error("unexpected " + command);
    });
    ClusterProfile profile;
    profile.name = "c";
    profile.host = "login";
    DoctorRun run;
    run.remote_engine = "/opt/slipway-engine";
    run.job.nodes = 2;
    run.deadline = std::chrono::seconds(10);
    run.sleep = [](std::chrono::milliseconds) {};
    // a1 reported before a2 hung: the output file appears where the job writes it.
    std::string doctor_dir;
    run.on_progress = [&](const std::string& text) {
        const size_t open = text.find(" (/");
        if (text.rfind("submitted", 0) == 0 && open != std::string::npos) {
            doctor_dir = text.substr(open + 2, text.size() - open - 3);
            session.put_file(
                doctor_dir + "/doctor-77.out",
                "SLIPWAY-DOCTOR - job 77 nodes a1 a2 master a1:20077\nSLIPWAY-DOCTOR a1 begin a1\n"
                "SLIPWAY-DOCTOR a1 gpu-none no nvidia-smi\nSLIPWAY-DOCTOR a1 intra-json "
                "{\"backend\":\"gloo\",\"world_size\":2,\"results\":[{\"bytes\":1,\"busbw_gbps\":1.2,"
                "\"correct\":true}]}\n");
        }
    };
    SlurmClient slurm(session);
    Result<DoctorOutcome> outcome = run_doctor(session, slurm, profile, run);
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_EQ(outcome->final_state, "CANCELLED (deadline)");
    bool cancelled = false;
    for (const std::string& c : session.commands())
        cancelled = cancelled || c.find("scancel") != std::string::npos;
    EXPECT_TRUE(cancelled);
    ASSERT_EQ(outcome->report.nodes.size(), 2u);
    EXPECT_EQ(outcome->report.nodes[1].node, "a2");
    EXPECT_EQ(outcome->report.nodes[1].reasons, std::vector<std::string>{"no report"});
    EXPECT_EQ(outcome->report.nodes[0].verdict, NodeVerdict::kOk);
    EXPECT_EQ(outcome->report.job_id, "77");
    EXPECT_TRUE(session.has(doctor_dir + "/doctor.sbatch"));
    EXPECT_TRUE(session.has(doctor_dir + "/node_check.sh"));
    EXPECT_NE(session.file(doctor_dir + "/doctor.sbatch").find("DOCTOR_ENGINE=/opt/slipway-engine"),
              std::string::npos);
    EXPECT_NE(outcome->report.problems.back().find("did not finish within 10 s"), std::string::npos);
}

// A profile that builds its engine: the doctor runs the engine built for its environment (found here, so no
// build job), in the image, with the engine's folder bound; without a bundle it says how to name one.
TEST(DoctorRun, ABuildProfileRunsTheEngineBuiltForItsEnvironment) {
    TempDir dir;
    const std::string bundle_path = dir.path() + "/slipway-engine-src.tar.gz";
    std::ofstream(bundle_path) << "a bundle's bytes";
    FakeSession session;
    session.put_file("/scratch/me/pytorch.sif", "an image");
    int next_job = 40;
    session.set_exec_handler([&next_job](const std::string& command) -> Result<ExecResult> {
        if (command.find("sbatch --parsable") != std::string::npos)
            return ExecResult{std::to_string(++next_job) + "\n", "", 0};
        if (command.rfind("squeue", 0) == 0)
            return ExecResult{std::to_string(next_job) + "|COMPLETED|None|0:05|1|a1\n", "", 0};
        if (command.find("scontrol show hostnames") != std::string::npos) return ExecResult{"a1\n", "", 0};
        return ExecResult{"", "not known here", 1};
    });
    ClusterProfile profile;
    profile.name = "hpc";
    profile.host = "login";
    profile.remote_workdir = "/scratch/me/slipway";
    profile.container = ContainerMode::kApptainer;
    profile.engine_source = EngineSource::kBuild;
    profile.env_setup = {"module load apptainer"};
    DoctorRun run;
    run.job.nodes = 1;
    run.job.environment.image = "/scratch/me/pytorch.sif";
    run.sleep = [](std::chrono::milliseconds) {};
    SlurmClient slurm(session);
    const Result<DoctorOutcome> refused = run_doctor(session, slurm, profile, run);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().find("--remote-engine"), std::string::npos) << refused.error();

    // The engine a run in this image would use, built before.
    RunConfig config;
    config.slurm.container_image = "/scratch/me/pytorch.sif";
    const Result<EngineBundle> bundle = read_engine_bundle(bundle_path);
    ASSERT_TRUE(bundle.ok()) << bundle.error();
    const Result<EnginePlace> place = find_or_queue_engine(session, slurm, config, profile, *bundle);
    ASSERT_TRUE(place.ok()) << place.error();
    session.put_file(place->engine, "ELF", 0755);
    session.put_file(place->dir + "/engine-manifest.json", "{}");

    run.engine_bundle = bundle_path;
    std::vector<std::string> said;
    run.on_progress = [&said](const std::string& line) { said.push_back(line); };
    const Result<DoctorOutcome> outcome = run_doctor(session, slurm, profile, run);
    ASSERT_TRUE(outcome.ok()) << outcome.error();
    EXPECT_EQ(std::count(said.begin(), said.end(), "engine " + place->engine + " (built before)"), 1);
    const std::string script = session.file(outcome->doctor_dir + "/doctor.sbatch");
    EXPECT_NE(script.find("DOCTOR_ENGINE=" + place->engine + "\n"), std::string::npos) << script;
    EXPECT_NE(script.find("engine_dir=" + place->dir + "\n"), std::string::npos) << script;
    EXPECT_NE(script.find("apptainer exec --bind \"$mounts\" --pwd \"$workdir\" /scratch/me/pytorch.sif"),
              std::string::npos)
        << script;
    EXPECT_FALSE(session.has(outcome->doctor_dir + "/slipway-engine"))
        << "nothing of this computer's uploaded";
}

}  // namespace
}  // namespace slipway::remote
