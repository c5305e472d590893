// Tests of run ids, local run records and deployment over FakeSession: the run folder's contents, the
// resolved run.json (uploaded inputs, outputs in the run folder), the engine for bare-metal profiles, and
// submission with its pre-flight and record.
#include <gtest/gtest.h>

#include <unistd.h>
#include "temp_dir.h"

#include <filesystem>
#include <fstream>

#include "remote/deploy/deploy.h"
#include "remote/ssh/fake_session.h"

namespace slipway::remote {
namespace {

namespace fs = std::filesystem;

using testing_support::TempDir;

// YYYYMMDD-HHMMSS of `t` in UTC, as the run id writes it.
std::string utc_compact(std::time_t t) {
    std::string iso = utc_timestamp(t);  // 2026-11-22T09:01:12Z
    return iso.substr(0, 4) + iso.substr(5, 2) + iso.substr(8, 2) + "-" + iso.substr(11, 2) +
           iso.substr(14, 2) + iso.substr(17, 2);
}

TEST(RunId, ShellSafeSortableUnique) {
    const std::time_t t = 1795338072;  // 2026-11-22T09:01:12Z
    EXPECT_EQ(make_run_id("demo-tiny", t, 0xa1b2), "demo-tiny-" + utc_compact(t) + "-a1b2");
    const std::string id = make_run_id("it's \"$(touch /tmp/pwned)\" `id`; Привет", t, 0x1234);
    EXPECT_TRUE(check_run_id(id).ok()) << id;
    EXPECT_EQ(id.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"),
              std::string::npos)
        << id;
    EXPECT_EQ(id.substr(id.size() - 5), "-1234");
    EXPECT_NE(make_run_id("x", t, 1), make_run_id("x", t, 2));
    EXPECT_EQ(make_run_id("", t, 1).rfind("run-", 0), 0u);
    EXPECT_FALSE(check_run_id("../etc").ok());
    EXPECT_FALSE(check_run_id("a;b").ok());
    EXPECT_FALSE(check_run_id("").ok());
    EXPECT_EQ(utc_timestamp(0), "1970-01-01T00:00:00Z");
}

// The submitted time a record keeps reads back as the same second; anything else is no time.
TEST(RunId, UtcTimestampsReadBack) {
    const std::time_t t = 1795338072;
    EXPECT_EQ(parse_utc_timestamp(utc_timestamp(t)), t);
    EXPECT_EQ(parse_utc_timestamp("1970-01-01T00:00:00Z"), std::time_t{0});
    EXPECT_EQ(parse_utc_timestamp("2026-11-22T09:01:12"), std::nullopt);  // no zone: not ours
    EXPECT_EQ(parse_utc_timestamp("2026-11-22T09:01:12Z trailing"), std::nullopt);
    EXPECT_EQ(parse_utc_timestamp(""), std::nullopt);
    EXPECT_EQ(parse_utc_timestamp("2026-02-31T09:01:12Z"), std::nullopt);  // no such day
    EXPECT_EQ(parse_utc_timestamp("2026-2-1T9:01:12Z"), std::nullopt);
}

TEST(RunRecords, SaveLoadListFromANewStore) {
    TempDir dir;
    RunRecord a{"a-20261122-090000-0001", "a",      "local-test", "5", "", "/home/u/slipway/runs/a",
                "2026-11-22T09:00:00Z",   "PENDING"};
    RunRecord b = a;
    b.run_id = "b-20261122-080000-0002";
    b.submitted = "2026-11-22T08:00:00Z";
    ASSERT_TRUE(RunRecordStore(dir.path()).save(a).ok());
    ASSERT_TRUE(RunRecordStore(dir.path()).save(b).ok());
    RunRecordStore fresh(dir.path());
    Result<RunRecord> loaded = fresh.load(a.run_id);
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    EXPECT_EQ(loaded->remote_dir, a.remote_dir);
    EXPECT_EQ(loaded->slurm_log(), "/home/u/slipway/runs/a/slurm-5.out");
    Result<std::vector<RunRecord>> all = fresh.list();
    ASSERT_TRUE(all.ok());
    ASSERT_EQ(all->size(), 2u);
    EXPECT_EQ((*all)[0].run_id, b.run_id);  // oldest first
    EXPECT_EQ(fresh.load("nope-1").code(), StatusCode::kNotFound);
    EXPECT_FALSE(fresh.load("../x").ok());
}

TEST(RunRecords, ScanKeepsEveryReadableRecordAndNamesTheBadFile) {
    TempDir dir;
    RunRecord a{"a-20261122-090000-0001", "a",      "local-test", "5", "", "/home/u/slipway/runs/a",
                "2026-11-22T09:00:00Z",   "PENDING"};
    ASSERT_TRUE(RunRecordStore(dir.path()).save(a).ok());
    {
        std::ofstream bad(dir.path() + "/b-20261122-080000-0002.json");
        bad << "{\"run_id\": 7";  // torn
    }
    const RunRecordStore store(dir.path());
    EXPECT_FALSE(store.list().ok());  // list stops at the bad file
    const RunRecordStore::Scan scan = store.scan();
    ASSERT_EQ(scan.records.size(), 1u);
    EXPECT_EQ(scan.records[0].run_id, a.run_id);
    ASSERT_EQ(scan.problems.size(), 1u);
    EXPECT_NE(scan.problems[0].find("b-20261122-080000-0002.json"), std::string::npos) << scan.problems[0];
    EXPECT_TRUE(RunRecordStore(dir.path() + "/none").scan().records.empty());
}

class Deploy : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = dir_.path();
        fs::create_directories(root_ + "/data/model");
        std::ofstream(root_ + "/data/model/config.json") << "{\"model_type\": \"llama\"}";
        std::ofstream(root_ + "/data/tokenizer.json") << "{}";
        std::ofstream(root_ + "/data/train.jsonl") << "{\"text\": \"a\"}\n";
        std::ofstream(root_ + "/engine") << "ELF";
        request_.config.name = "it's $(touch /tmp/pwned)";
        request_.config.model.path = "data/model";
        request_.config.model.init = "random";
        request_.config.tokenizer.path = "data/tokenizer.json";
        request_.config.data.train_file = "data/train.jsonl";
        request_.config.data.validation_file = "/scratch/shared/val.jsonl";  // already on the cluster
        request_.config.data.cache_dir = "cache";
        request_.config.adapter.method = "full";
        request_.config.slurm.gpus_per_node = 0;
        request_.config.slurm.ntasks_per_node = 2;
        request_.config.distributed.backend = "gloo";
        request_.input_root = root_;
        request_.profile.name = "local-test";
        request_.profile.host = "127.0.0.1";
        request_.profile.remote_workdir = "~/slipway work";
        request_.engine_binary = root_ + "/engine";
        request_.run_id = "r-20261122-090112-abcd";
        session_.on_exec_prefix("printf '%s' \"$HOME\"", ExecResult{"/home/u", "", 0});
    }

    TempDir dir_;
    std::string root_;
    DeployRequest request_;
    FakeSession session_;
};

TEST_F(Deploy, RunFolderHoldsInputsEngineConfigAndScript) {
    Result<Deployment> d = deploy_run(session_, request_);
    ASSERT_TRUE(d.ok()) << d.error();
    const std::string run = "/home/u/slipway work/runs/r-20261122-090112-abcd";
    EXPECT_EQ(d->remote_dir, run);
    EXPECT_EQ(session_.file(run + "/inputs/data/model/config.json"), "{\"model_type\": \"llama\"}");
    EXPECT_EQ(session_.file(run + "/inputs/data/train.jsonl"), "{\"text\": \"a\"}\n");
    EXPECT_EQ(session_.file(run + "/slipway-engine"), "ELF");
    EXPECT_EQ(session_.mode(run + "/slipway-engine"), 0755u);
    ASSERT_TRUE(session_.has(run + "/run.json"));
    ASSERT_TRUE(session_.has(run + "/run.sbatch"));
    EXPECT_EQ(d->uploaded.back(), run + "/run.sbatch");  // the script goes last

    Result<ParsedRunConfig> parsed =
        parse_run_config(nlohmann::json::parse(session_.file(run + "/run.json")));
    ASSERT_TRUE(parsed.ok());
    const RunConfig& c = parsed->config;
    EXPECT_TRUE(parsed->problems.empty()) << format_problems(parsed->problems);
    EXPECT_EQ(c.name, request_.config.name);  // intact, whatever it holds
    EXPECT_EQ(c.model.path, run + "/inputs/data/model");
    EXPECT_EQ(c.tokenizer.path, run + "/inputs/data/tokenizer.json");
    EXPECT_EQ(c.data.validation_file, "/scratch/shared/val.jsonl");
    EXPECT_EQ(c.training.output_dir, run + "/output");
    EXPECT_EQ(c.data.cache_dir, run + "/cache");
    EXPECT_NE(d->script.find("run_dir='" + run + "'"), std::string::npos) << d->script;
}

TEST_F(Deploy, MissingLocalInputNamesTheField) {
    request_.config.data.train_file = "data/missing.jsonl";
    Result<Deployment> d = deploy_run(session_, request_);
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.error().find("/data/train_file"), std::string::npos);
    EXPECT_NE(d.error().find("data/missing.jsonl"), std::string::npos);
    request_.config.data.train_file = "../outside.jsonl";
    request_.run_id = "r-20261122-090112-abce";
    EXPECT_NE(deploy_run(session_, request_).error().find("'..'"), std::string::npos);
}

// /eval/tasks: the task file goes up with the data files it names (relative to itself), so the uploaded file
// still finds them; a data file outside the inputs' tree is refused like any input.
TEST_F(Deploy, EvalTasksGoUpWithTheirDataFiles) {
    fs::create_directories(root_ + "/eval/sets");
    std::ofstream(root_ + "/eval/tasks.json")
        << R"({"tasks": [{"name": "a", "kind": "perplexity", "data": "sets/a.jsonl"},
                         {"name": "b", "kind": "perplexity", "data": "/scratch/b.jsonl"}]})";
    std::ofstream(root_ + "/eval/sets/a.jsonl") << "{\"text\": \"abc\"}\n";
    request_.config.eval.tasks = "eval/tasks.json";
    Result<Deployment> d = deploy_run(session_, request_);
    ASSERT_TRUE(d.ok()) << d.error();
    const std::string run = "/home/u/slipway work/runs/r-20261122-090112-abcd";
    EXPECT_TRUE(session_.has(run + "/inputs/eval/tasks.json"));
    EXPECT_EQ(session_.file(run + "/inputs/eval/sets/a.jsonl"), "{\"text\": \"abc\"}\n");
    Result<ParsedRunConfig> parsed =
        parse_run_config(nlohmann::json::parse(session_.file(run + "/run.json")));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->config.eval.tasks, run + "/inputs/eval/tasks.json");

    std::ofstream(root_ + "/eval/tasks.json")
        << R"({"tasks": [{"name": "a", "kind": "perplexity", "data": "../../outside.jsonl"}]})";
    request_.run_id = "r-20261122-090112-abce";
    const std::string error = deploy_run(session_, request_).error();
    EXPECT_NE(error.find("/eval/tasks"), std::string::npos) << error;
    EXPECT_NE(error.find("'..'"), std::string::npos) << error;
}

TEST_F(Deploy, BareMetalNeedsTheEngineAndAnExistingFolderIsRefused) {
    request_.engine_binary.clear();
    EXPECT_NE(deploy_run(session_, request_).error().find("this computer's engine (engine_source desktop)"),
              std::string::npos);
    request_.engine_binary = root_ + "/engine";
    ASSERT_TRUE(deploy_run(session_, request_).ok());
    EXPECT_NE(deploy_run(session_, request_).error().find("already exists"), std::string::npos);
}

TEST_F(Deploy, SubmitRunsPreflightThenSbatchAndRecordsTheRun) {
    TempDir records_dir;
    RunRecordStore records(records_dir.path());
    session_.on_exec_prefix(
        "cd '/home/u/slipway work/runs/r-20261122-090112-abcd' && sbatch --test-only run.sbatch",
        ExecResult{"", "sbatch: Job 8 to start at 2026-11-22T09:01:13 using 2 processors", 0});
    session_.on_exec_prefix(
        "cd '/home/u/slipway work/runs/r-20261122-090112-abcd' && sbatch --parsable run.sbatch",
        ExecResult{"8\n", "", 0});
    SlurmClient slurm(session_);
    Result<SubmittedRun> run = submit_run(session_, slurm, request_, records);
    ASSERT_TRUE(run.ok()) << run.error();
    EXPECT_EQ(run->job.job_id, "8");
    Result<RunRecord> record = records.load("r-20261122-090112-abcd");
    ASSERT_TRUE(record.ok()) << record.error();
    EXPECT_EQ(record->job_id, "8");
    EXPECT_EQ(record->cluster, "local-test");
    EXPECT_EQ(record->name, request_.config.name);
    EXPECT_EQ(record->slurm_log(), "/home/u/slipway work/runs/r-20261122-090112-abcd/slurm-8.out");
}

TEST_F(Deploy, RefusedPreflightSubmitsNothing) {
    TempDir records_dir;
    session_.on_exec_prefix(
        "cd '/home/u/slipway work/runs/r-20261122-090112-abcd' && sbatch --test-only",
        ExecResult{"",
                   "sbatch: error: Batch job submission failed: Requested node configuration "
                   "is not available",
                   1});
    SlurmClient slurm(session_);
    Result<SubmittedRun> run = submit_run(session_, slurm, request_, RunRecordStore(records_dir.path()));
    ASSERT_FALSE(run.ok());
    EXPECT_NE(run.error().find("Requested node configuration is not available"), std::string::npos);
    for (const std::string& command : session_.commands())
        EXPECT_EQ(command.find("--parsable"), std::string::npos);
    EXPECT_TRUE(RunRecordStore(records_dir.path()).list()->empty());
}

TEST(RunOutputs, ListsWhatFetchDownloadsOverSftp) {
    FakeSession fake;
    const std::string run = "/w/runs/it's $(x)";
    fake.put_file(run + "/run.json", "{}");
    fake.put_file(run + "/run.sbatch", "#!/bin/bash");
    fake.put_file(run + "/slurm-12.out", "log");
    fake.put_file(run + "/slurm-12.err", "not fetched");
    fake.put_file(run + "/slipway-engine", "binary");
    fake.put_file(run + "/inputs/train.jsonl", "{}");
    fake.put_file(run + "/output/mllog.txt", "x");
    fake.put_file(run + "/output/eval/first\nline.json", "{}");
    fake.put_file(run + "/output/checkpoint-8/model.safetensors", "w");
    fake.put_symlink(run + "/output/latest", "checkpoint-8");

    auto listed = list_run_outputs(fake, run, false);
    ASSERT_TRUE(listed.ok()) << listed.error();
    EXPECT_EQ(*listed, (std::vector<std::string>{"output/eval/first\nline.json", "output/mllog.txt",
                                                 "run.json", "run.sbatch", "slurm-12.out"}));
    auto with_checkpoints = list_run_outputs(fake, run, true);
    ASSERT_TRUE(with_checkpoints.ok()) << with_checkpoints.error();
    EXPECT_EQ(with_checkpoints->size(), 6u);
    EXPECT_EQ((*with_checkpoints)[0], "output/checkpoint-8/model.safetensors");
    EXPECT_TRUE(fake.commands().empty());  // no shell involved

    auto missing = list_run_outputs(fake, "/w/runs/gone", false);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().find("/w/runs/gone"), std::string::npos) << missing.error();
}

}  // namespace
}  // namespace slipway::remote
