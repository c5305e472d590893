// Tests of the Slurm output parsers on outputs as Slurm 22.05 prints them (sbatch, squeue, scontrol,
// sacct, sinfo with typed and untyped GRES).
#include <gtest/gtest.h>

#include "remote/slurm/slurm_parsers.h"

namespace slipway::remote {
namespace {

TEST(SbatchParsable, JobIdAlone) {
    Result<SubmittedJob> job = parse_sbatch_parsable("4211\n");
    ASSERT_TRUE(job.ok()) << job.error();
    EXPECT_EQ(job->job_id, "4211");
    EXPECT_EQ(job->cluster, "");
}

TEST(SbatchParsable, JobIdWithClusterAfterWarnings) {
    Result<SubmittedJob> job =
        parse_sbatch_parsable("sbatch: warning: can't honor --ntasks-per-node set to 8\n77;lomonosov2\n");
    ASSERT_TRUE(job.ok()) << job.error();
    EXPECT_EQ(job->job_id, "77");
    EXPECT_EQ(job->cluster, "lomonosov2");
}

TEST(SbatchParsable, GarbageIsAnErrorThatQuotesIt) {
    Result<SubmittedJob> job = parse_sbatch_parsable("Submitted batch job 12\n");
    ASSERT_FALSE(job.ok());
    EXPECT_NE(job.error().find("Submitted batch job 12"), std::string::npos);
    EXPECT_FALSE(parse_sbatch_parsable("").ok());
    EXPECT_FALSE(parse_sbatch_parsable("1$(x)\n").ok());
}

TEST(JobState, NormalizedAndClassified) {
    EXPECT_EQ(normalize_job_state("CANCELLED by 1000"), "CANCELLED");
    EXPECT_EQ(normalize_job_state(" completed\n"), "COMPLETED");
    EXPECT_EQ(normalize_job_state("CANCELLED+"), "CANCELLED");
    EXPECT_EQ(normalize_job_state(""), "UNKNOWN");
    EXPECT_TRUE(is_terminal_state("COMPLETED"));
    EXPECT_TRUE(is_terminal_state("TIMEOUT"));
    EXPECT_TRUE(is_terminal_state("OUT_OF_MEMORY"));
    EXPECT_FALSE(is_terminal_state("COMPLETING"));
    EXPECT_FALSE(is_terminal_state("PENDING"));
    EXPECT_FALSE(is_terminal_state("UNKNOWN"));
    EXPECT_TRUE(is_success_state("COMPLETED"));
    EXPECT_FALSE(is_success_state("FAILED"));
}

TEST(Squeue, RowsOfTheClientFormat) {
    const std::string out =
        "17|RUNNING|None|1:02|2|gpu[01-02]\n"
        "1|PENDING|None|0:00|1|(None)\n"  // this line and the next: the local test cluster
        "18|PENDING|Resources|0:00|4|(Resources)\n"
        "19|COMPLETED|None|0:02|1|localhost\n";
    Result<std::vector<QueueRow>> rows = parse_squeue(out);
    ASSERT_TRUE(rows.ok()) << rows.error();
    ASSERT_EQ(rows->size(), 4u);
    EXPECT_EQ((*rows)[1].state, "PENDING");
    rows->erase(rows->begin() + 1);
    EXPECT_EQ((*rows)[0].job_id, "17");
    EXPECT_EQ((*rows)[0].state, "RUNNING");
    EXPECT_EQ((*rows)[0].node_list, "gpu[01-02]");
    EXPECT_EQ((*rows)[1].reason, "Resources");
    EXPECT_EQ((*rows)[2].state, "COMPLETED");
    EXPECT_TRUE(parse_squeue("")->empty());
    Result<std::vector<QueueRow>> bad = parse_squeue("17 RUNNING\n");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("17 RUNNING"), std::string::npos);
}

// `scontrol show job 1` of a finished 2-task job, captured from the local test cluster (Slurm 22.05,
// tests/cluster/start_cluster.sh), trailing whitespace lines included.
constexpr const char* kScontrolCompleted = R"(JobId=1 JobName=demo-tiny
   UserId=slipway-test(1001) GroupId=slipway-test(1001) MCS_label=N/A
   Priority=4294901759 Nice=0 Account=(null) QOS=(null)
   JobState=COMPLETED Reason=None Dependency=(null)
   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0
   RunTime=00:00:02 TimeLimit=UNLIMITED TimeMin=N/A
   SubmitTime=2026-11-22T08:40:39 EligibleTime=2026-11-22T08:40:39
   AccrueTime=2026-11-22T08:40:39
   StartTime=2026-11-22T08:40:41 EndTime=2026-11-22T08:40:43 Deadline=N/A
   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-22T08:40:41 Scheduler=Main
   Partition=debug AllocNode:Sid=localhost:3068
   ReqNodeList=(null) ExcNodeList=(null)
   NodeList=localhost
   BatchHost=localhost
   NumNodes=1 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:*
   TRES=cpu=2,node=1,billing=2
   Socks/Node=* NtasksPerN:B:S:C=2:0:*:* CoreSpec=*
   MinCPUsNode=2 MinMemoryNode=0 MinTmpDiskNode=0
   Features=(null) DelayBoot=00:00:00
   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)
   Command=/work/main/build-slurm/test-cluster/remote/cap/j.sbatch
   WorkDir=/work/main/build-slurm/test-cluster/remote/cap
   StdErr=/work/main/build-slurm/test-cluster/remote/cap/slurm-1.out
   StdIn=/dev/null
   StdOut=/work/main/build-slurm/test-cluster/remote/cap/slurm-1.out
   Power=
   

)";

TEST(Scontrol, FinishedJob) {
    Result<JobInfo> info = job_info_from_scontrol(kScontrolCompleted);
    ASSERT_TRUE(info.ok()) << info.error();
    EXPECT_EQ(info->job_id, "1");
    EXPECT_EQ(info->name, "demo-tiny");
    EXPECT_EQ(info->state, "COMPLETED");
    EXPECT_EQ(info->exit_code, "0:0");
    EXPECT_EQ(info->node_list, "localhost");
    EXPECT_EQ(info->elapsed, "00:00:02");
    EXPECT_EQ(info->source, "scontrol");
}

TEST(Scontrol, ValuesWithSpacesAndEqualsSigns) {
    // scontrol prints paths verbatim: a run folder with spaces spreads over several words.
    std::string text = kScontrolCompleted;
    const std::string plain = "WorkDir=/work/main/build-slurm/test-cluster/remote/cap\n";
    text.replace(text.find(plain), plain.size(), "WorkDir=/home/u/slipway work/runs/it's a run\n");
    const std::vector<ScontrolRecord> records = parse_scontrol_records(text);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].at("WorkDir"), "/home/u/slipway work/runs/it's a run");
    EXPECT_EQ(records[0].at("TRES"), "cpu=2,node=1,billing=2");
    EXPECT_EQ(records[0].at("AllocNode:Sid"), "localhost:3068");
    EXPECT_EQ(records[0].at("Power"), "");
}

TEST(Scontrol, FailedJobWithReason) {
    Result<JobInfo> info = job_info_from_scontrol(
        "JobId=9 JobName=x\n   JobState=FAILED Reason=NonZeroExitCode Dependency=(null)\n   ExitCode=1:0\n");
    ASSERT_TRUE(info.ok()) << info.error();
    EXPECT_EQ(info->state, "FAILED");
    EXPECT_EQ(info->reason, "NonZeroExitCode");
    EXPECT_EQ(info->reason_suffix(), " (NonZeroExitCode)");
    EXPECT_EQ(info->exit_code, "1:0");
}

TEST(Scontrol, NoReasonAddsNothingToTheState) {
    Result<JobInfo> info = job_info_from_scontrol(kScontrolCompleted);
    ASSERT_TRUE(info.ok()) << info.error();
    EXPECT_EQ(info->reason, "None");  // Slurm's word for no reason
    EXPECT_EQ(info->reason_suffix(), "");
    info->reason.clear();
    EXPECT_EQ(info->reason_suffix(), "");
}

TEST(Scontrol, AJobNameCannotSpoofFields) {
    // A user's job name is free text: "JobState=COMPLETED" inside it is part of the name.
    Result<JobInfo> info = job_info_from_scontrol(
        "JobId=9 JobName=x JobState=COMPLETED ExitCode=0:0 JobId=1\n   JobState=FAILED "
        "Reason=NonZeroExitCode\n"
        "   ExitCode=1:0\n   Command=/r/job.sbatch JobState=COMPLETED\n");
    ASSERT_TRUE(info.ok()) << info.error();
    EXPECT_EQ(info->job_id, "9");
    EXPECT_EQ(info->name, "x JobState=COMPLETED ExitCode=0:0 JobId=1");
    EXPECT_EQ(info->state, "FAILED");
    EXPECT_EQ(info->exit_code, "1:0");
}

TEST(Scontrol, PurgedJobIsAnError) {
    EXPECT_FALSE(job_info_from_scontrol("slurm_load_jobs error: Invalid job id specified\n").ok());
    EXPECT_FALSE(job_info_from_scontrol("").ok());
}

TEST(Sacct, AllocationLineOfTheJob) {
    const std::string out =
        "4211|ruadapt-lora|CANCELLED by 1000|0:15|01:02:03|gpu[01-08]\n"
        "4211.batch|batch|CANCELLED|0:15|01:02:03|gpu01\n";
    Result<JobInfo> info = job_info_from_sacct(out, "4211");
    ASSERT_TRUE(info.ok()) << info.error();
    EXPECT_EQ(info->state, "CANCELLED");
    EXPECT_EQ(info->exit_code, "0:15");
    EXPECT_EQ(info->node_list, "gpu[01-08]");
    EXPECT_EQ(info->source, "sacct");
    Result<JobInfo> missing = job_info_from_sacct("", "4211");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.code(), StatusCode::kNotFound);
}

// The entries of a GRES string the test knows to be valid.
std::vector<Gres> gres_of(const std::string& text) {
    Result<std::vector<Gres>> gres = parse_gres(text);
    EXPECT_TRUE(gres.ok()) << gres.error();
    return gres.ok() ? *gres : std::vector<Gres>();
}

TEST(Gres, TypedUntypedSocketsAndShards) {
    std::vector<Gres> g = gres_of("gpu:a100:4(S:0-1),shard:8");
    ASSERT_EQ(g.size(), 2u);
    EXPECT_EQ(g[0].name, "gpu");
    EXPECT_EQ(g[0].type, "a100");
    EXPECT_EQ(g[0].count, 4);
    EXPECT_EQ(g[1].name, "shard");
    EXPECT_EQ(gpu_count(g), 4);
    EXPECT_EQ(gpu_count(gres_of("gpu:8")), 8);
    EXPECT_EQ(gpu_count(gres_of("gpu:h100:8,gpu:a100:2")), 10);
    EXPECT_TRUE(gres_of("(null)").empty());
    EXPECT_TRUE(gres_of("").empty());
    EXPECT_EQ(gpu_count(gres_of("gpu")), 1);
    EXPECT_EQ(gres_of("gpu:tesla")[0].type, "tesla");
}

TEST(Gres, ACountPastTheLimitIsAnError) {
    // Found by fuzz_slurm: counts past 2^63 were undefined behaviour, then saturated into a total that
    // wrapped.
    const Result<std::vector<Gres>> gres = parse_gres("gpu:h100:99999999999999999999999(S:0-1)");
    ASSERT_FALSE(gres.ok());
    EXPECT_EQ(gres.error(), "GRES \"gpu:h100:99999999999999999999999\": the count is past 1099511627776");
    EXPECT_EQ(gres_of("gpu:1099511627776")[0].count, kMaxSlurmCount);
}

TEST(Sinfo, ANumberPastTheLimitNamesItsLineAndField) {
    const std::string ok = "gpu01|gpu*|idle|128|1024000|gpu:h100:8\n";
    Result<std::vector<NodeRow>> cpus =
        parse_sinfo_nodes(ok + "gpu02|gpu*|idle|65555555555555555555555|1|(null)\n");
    ASSERT_FALSE(cpus.ok());
    EXPECT_EQ(cpus.error(), "sinfo: line 2 (gpu02): CPUS is past 1099511627776");
    Result<std::vector<NodeRow>> memory = parse_sinfo_nodes("n|p|idle|2|99999999999999|(null)\n");
    ASSERT_FALSE(memory.ok());
    EXPECT_EQ(memory.error(), "sinfo: line 1 (n): MEMORY is past 1099511627776");
    Result<std::vector<NodeRow>> gres = parse_sinfo_nodes("n|p|idle|2|1|gpu:x:1099511627777\n");
    ASSERT_FALSE(gres.ok());
    EXPECT_EQ(gres.error(),
              "sinfo: line 1 (n): GRES \"gpu:x:1099511627777\": the count is past 1099511627776");
}

TEST(Sinfo, NodesAndPartitions) {
    const std::string out =
        "gpu01|gpu*|mixed|128|1024000|gpu:h100:8(S:0-1)\n"
        "gpu02|gpu*|idle|128|1024000|gpu:h100:8(S:0-1)\n"
        "cpu01|cpu|idle|64|256000|(null)\n"
        "gpu02|debug|idle|128|1024000|gpu:h100:8(S:0-1)\n"
        "localhost|debug*|idle|2|1|(null)\n";  // the local test cluster
    Result<std::vector<NodeRow>> rows = parse_sinfo_nodes(out);
    ASSERT_TRUE(rows.ok()) << rows.error();
    ASSERT_EQ(rows->size(), 5u);
    EXPECT_EQ((*rows)[4].node, "localhost");
    EXPECT_EQ((*rows)[4].cpus, 2);
    EXPECT_TRUE((*rows)[4].default_partition);
    rows->pop_back();
    EXPECT_EQ((*rows)[0].partition, "gpu");
    EXPECT_TRUE((*rows)[0].default_partition);
    EXPECT_EQ((*rows)[0].gpus, 8);
    EXPECT_EQ((*rows)[0].gpu_type, "h100");
    EXPECT_EQ((*rows)[2].gpus, 0);
    const std::vector<PartitionInfo> parts = summarize_partitions(*rows);
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_EQ(parts[0].name, "gpu");
    EXPECT_TRUE(parts[0].is_default);
    EXPECT_EQ(parts[0].nodes, 2);
    EXPECT_EQ(parts[0].idle_nodes, 1);
    EXPECT_EQ(parts[0].gpus, 16);
    EXPECT_EQ(parts[1].cpus, 64);
    EXPECT_FALSE(parse_sinfo_nodes("gpu01 idle\n").ok());
}

}  // namespace
}  // namespace slipway::remote
