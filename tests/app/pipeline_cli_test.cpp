// `slipway pipeline validate | run` as a user runs them (the real binary): the demo pipeline on This computer
// runs every step with the local engine (about 20 s on 2 cores), the adapted instruct model it writes loads
// in `slipway-engine generate`, eval's JSON is written, and every step is a completed row in the run history;
// a failing middle step stops the chain naming the step, and the steps after it never run. Skipped without an
// engine.
#include <signal.h>

#include <gtest/gtest.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include "history/history_run_store.h"
#include "history/run_history.h"
#include "service/local_executor.h"
#include "service/local_pipeline.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

using testing_util::Cli;

Cli run(const QString& program, const QStringList& args) {
    return testing_util::run_program(program, args, 300'000);
}

const QString kDemo =
    QString::fromUtf8(test_paths::source_dir("/resources/presets/pipelines/ruadapt-demo.json"));

TEST(PipelineCli, ValidateNamesThePointer) {
    QTemporaryDir dir;
    const QString path = dir.path() + "/bad.json";
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(R"({"schema": "slipway.pipeline/1", "name": "bad", "steps": [
      {"name": "tok", "kind": "tokenizer", "corpus": "/c.jsonl", "out": "t.json"},
      {"name": "adapt", "kind": "adapt-vocab", "model": "/m", "old_tokenizer": "/m/tokenizer.json",
       "new_tokenizer": "${steps.tokenizer.out}", "out": "a"}]})");
    f.close();
    const Cli bad = run(QString::fromUtf8(test_paths::slipway_bin()), {"pipeline", "validate", path});
    EXPECT_EQ(bad.exit_code, 2) << bad.out.toStdString();
    EXPECT_TRUE(bad.err.contains("/steps/1/new_tokenizer")) << bad.err.toStdString();
    EXPECT_TRUE(bad.err.contains("no step named \"tokenizer\"")) << bad.err.toStdString();
    const Cli good = run(QString::fromUtf8(test_paths::slipway_bin()), {"pipeline", "validate", kDemo});
    EXPECT_EQ(good.exit_code, 0) << good.err.toStdString();
    EXPECT_TRUE(good.out.contains("8 steps, valid")) << good.out.toStdString();
}

TEST(PipelineCli, DemoRunsOnThisComputer) {
    const QString engine = QString::fromUtf8(test_paths::engine_bin());
    if (!QFileInfo(engine).isExecutable()) GTEST_SKIP() << "no slipway-engine at " << engine.toStdString();
    testing_util::IsolatedHome home;
    const QString runs = home.path() + "/runs";
    const Cli r = run(QString::fromUtf8(test_paths::slipway_bin()),
                      {"pipeline", "run", kDemo, "--engine", engine, "--runs-dir", runs});
    ASSERT_EQ(r.exit_code, 0) << r.out.toStdString() << r.err.toStdString();
    EXPECT_TRUE(r.out.contains("pipeline ruadapt-demo completed")) << r.out.toStdString();
    for (const char* step :
         {"base", "instruct", "tokenizer", "adapt", "embeddings", "lep", "calibrate", "eval"})
        EXPECT_TRUE(r.out.contains(QStringLiteral("] %1 (").arg(QString::fromLatin1(step)))) << step;
    const QStringList folders = QDir(runs).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    ASSERT_EQ(folders.size(), 1);
    const QString run_dir = runs + "/" + folders.first();
    // The adapted instruct model: an HF folder with the new tokenizer, usable by the engine.
    for (const char* file : {"config.json", "model.safetensors", "tokenizer.json"})
        EXPECT_TRUE(QFile::exists(run_dir + "/lep/" + file)) << file;
    const Cli gen = run(engine, {"generate", "--model", run_dir + "/lep", "--prompt",
                                 QStringLiteral("Привет"), "--max-new-tokens", "4"});
    EXPECT_EQ(gen.exit_code, 0) << gen.err.toStdString();
    EXPECT_TRUE(gen.out.contains("\"new_tokens\":4")) << gen.out.toStdString();
    // The calibration LoRA is an instruction tune on the demo conversations with the demo chat template:
    // its adapter folder carries the template, and the adapted model chats through it.
    const QStringList calibrate_runs =
        QDir(run_dir + "/steps/calibrate").entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    ASSERT_EQ(calibrate_runs.size(), 1);
    const QString adapter = run_dir + "/steps/calibrate/" + calibrate_runs.first() + "/output";
    QFile calibrated(adapter + "/tokenizer_config.json");
    ASSERT_TRUE(calibrated.open(QIODevice::ReadOnly)) << "the calibration wrote no tokenizer_config.json";
    EXPECT_TRUE(calibrated.readAll().contains("<|assistant|>"));
    const Cli chat =
        run(engine, {"generate", "--chat", "--model", run_dir + "/lep", "--adapter", adapter, "--prompt",
                     QStringLiteral("Сколько будет 2 плюс 3?"), "--max-new-tokens", "4"});
    EXPECT_EQ(chat.exit_code, 0) << chat.err.toStdString();
    QFile eval(run_dir + "/eval.json");
    ASSERT_TRUE(eval.open(QIODevice::ReadOnly));
    const QJsonObject results = QJsonDocument::fromJson(eval.readAll()).object();
    EXPECT_TRUE(results.contains("tasks")) << run_dir.toStdString();
    // Every step is a completed run in the history the app shows.
    Result<std::unique_ptr<RunHistory>> store = RunHistory::open_default();
    ASSERT_TRUE(store.ok()) << store.error();
    Result<std::vector<StoredRun>> rows = (*store)->runs();
    ASSERT_TRUE(rows.ok());
    ASSERT_EQ(rows->size(), 8u);
    for (const StoredRun& row : *rows) {
        EXPECT_EQ(row.state, RunState::kCompleted) << row.name;
        EXPECT_EQ(row.cluster, kLocalCluster);
        EXPECT_EQ(row.name.rfind("ruadapt-demo.", 0), 0u) << row.name;
    }
}

TEST(PipelineCli, AFailingStepStopsTheChain) {
    const QString engine = QString::fromUtf8(test_paths::engine_bin());
    if (!QFileInfo(engine).isExecutable()) GTEST_SKIP() << "no slipway-engine at " << engine.toStdString();
    testing_util::IsolatedHome home;
    const QString path = home.path() + "/broken.json";
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(QStringLiteral(R"({"schema": "slipway.pipeline/1", "name": "broken", "steps": [
      {"name": "tok", "kind": "tokenizer", "corpus": "%1/resources/demo/corpus.jsonl", "vocab_size": 400, "out": "t.json"},
      {"name": "adapt", "kind": "adapt-vocab", "model": "/nonexistent/model", "old_tokenizer": "${steps.tok.out}",
       "new_tokenizer": "${steps.tok.out}", "out": "adapted"},
      {"name": "eval", "kind": "eval", "model": "${steps.adapt.out}", "tasks": "%1/resources/eval/demo-tasks.json",
       "out": "eval.json"}]})")
                .arg(QString::fromUtf8(test_paths::source_dir()))
                .toUtf8());
    f.close();
    const Cli r = run(QString::fromUtf8(test_paths::slipway_bin()),
                      {"pipeline", "run", path, "--engine", engine, "--runs-dir", home.path() + "/runs"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(r.err.contains("stopped at step 1 \"adapt\" (adapt-vocab)")) << r.err.toStdString();
    EXPECT_TRUE(r.out.contains("[2/3] adapt")) << r.out.toStdString();
    EXPECT_FALSE(r.out.contains("[3/3]")) << r.out.toStdString();
    Result<std::unique_ptr<RunHistory>> store = RunHistory::open_default();
    ASSERT_TRUE(store.ok());
    Result<std::vector<StoredRun>> rows = (*store)->runs();
    ASSERT_TRUE(rows.ok());
    ASSERT_EQ(rows->size(), 2u);  // eval never started
}

// The runner the CLI and the Adaptation page share, stopped while a step runs (the page's Stop): the step's
// process is killed, its row ends cancelled, no later step starts, and the error names the step. The
// "engine" is a script that would run for a minute.
TEST(LocalPipeline, AStopKillsTheRunningStepAndEndsItCancelled) {
    testing_util::IsolatedHome home;
    const QString engine = home.path() + "/slow-engine.sh";
    ASSERT_TRUE(testing_util::write_script(engine, "#!/bin/sh\nexec sleep 60\n"));
    const ParsedPipeline parsed = parse_pipeline(nlohmann::json::parse(R"({"schema": "slipway.pipeline/1",
      "name": "slow", "steps": [
        {"name": "tok", "kind": "tokenizer", "corpus": "corpus.jsonl", "vocab_size": 400, "out": "t.json"},
        {"name": "tok2", "kind": "tokenizer", "corpus": "corpus.jsonl", "vocab_size": 400, "out": "t2.json"}]})"),
                                                 home.path().toStdString());
    ASSERT_TRUE(parsed.problems.empty()) << format_problems(parsed.problems);
    const Pipeline* pipeline = &parsed.pipeline;
    Result<std::unique_ptr<RunHistory>> store = RunHistory::open_default();
    ASSERT_TRUE(store.ok()) << store.error();
    LocalPipelineOptions options;
    options.engine = engine.toStdString();
    options.input_root = home.path().toStdString();
    options.runs_dir = (home.path() + "/runs").toStdString();
    HistoryRunStore runs_store(**store);
    options.store = &runs_store;
    QElapsedTimer since_start;
    std::vector<LocalPipelineEvent> events;
    options.stop_requested = [&]() -> std::optional<std::chrono::milliseconds> {
        if (!since_start.isValid() || since_start.elapsed() <= 300) return std::nullopt;
        return kStopGrace;
    };
    Result<LocalPipelineOutcome> outcome =
        run_local_pipeline(*pipeline, options, [&](const LocalPipelineEvent& e) {
            events.push_back(e);
            if (e.kind == LocalPipelineEvent::Kind::kStepStarted) since_start.start();
        });
    ASSERT_FALSE(outcome.ok());
    EXPECT_NE(outcome.error().find("stopped at step 0 \"tok\" (tokenizer): stopped"), std::string::npos)
        << outcome.error();
    EXPECT_LT(since_start.elapsed(), 10000);  // not the script's minute
    ASSERT_EQ(events.size(), 3u);             // started, tok started, tok finished; tok2 never
    EXPECT_EQ(describe_pipeline_event(events[1]).rfind("[1/2] tok (tokenizer): " + engine.toStdString(), 0),
              0u)
        << describe_pipeline_event(events[1]);
    EXPECT_EQ(events[2].exit_code, -1);
    Result<std::vector<StoredRun>> rows = (*store)->runs();
    ASSERT_TRUE(rows.ok());
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_EQ(rows->front().id, events[1].store_id);
    EXPECT_EQ(rows->front().state, RunState::kCancelled);
    EXPECT_EQ(rows->front().state_detail, "stopped");
}

// Ctrl-C in `slipway pipeline run`: the running step, in a process group of its own, never gets the
// terminal's SIGINT, so the CLI stops it itself: the step's process is gone (not left running behind a dead
// CLI), its row ends cancelled, the next step never starts, and the CLI exits non-zero naming the step.
TEST(PipelineCli, CtrlCStopsTheRunningStepAndItsRowSaysSo) {
    testing_util::IsolatedHome home;
    const QString engine = home.path() + "/slow-engine.sh";
    ASSERT_TRUE(testing_util::write_script(engine, "#!/bin/sh\nexec sleep 60\n"));
    const QString path = home.path() + "/slow.json";
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.write(R"({"schema": "slipway.pipeline/1", "name": "slow", "steps": [
      {"name": "tok", "kind": "tokenizer", "corpus": "corpus.jsonl", "vocab_size": 400, "out": "t.json"},
      {"name": "tok2", "kind": "tokenizer", "corpus": "corpus.jsonl", "vocab_size": 400, "out": "t2.json"}]})");
    file.close();

    QProcess cli;
    ASSERT_TRUE(testing_util::start_as_from_terminal(
        cli, QString::fromUtf8(test_paths::slipway_bin()),
        {"pipeline", "run", path, "--engine", engine, "--runs-dir", home.path() + "/runs"}));
    QByteArray out;
    ASSERT_TRUE(testing_util::read_until(cli, out, "[1/2] tok")) << out.toStdString();
    Result<std::unique_ptr<RunHistory>> store = RunHistory::open_default();
    ASSERT_TRUE(store.ok()) << store.error();
    Result<std::vector<StoredRun>> rows = (*store)->runs();
    ASSERT_TRUE(rows.ok() && rows->size() == 1u);
    const pid_t step = static_cast<pid_t>(std::atoll(rows->front().job_id.c_str()));
    ASSERT_GT(step, 0);
    ASSERT_EQ(::kill(step, 0), 0);  // the step runs

    ::kill(static_cast<pid_t>(cli.processId()), SIGINT);
    ASSERT_TRUE(cli.waitForFinished(20000));
    out += cli.readAllStandardOutput();
    const std::string err = cli.readAllStandardError().toStdString();
    EXPECT_EQ(cli.exitStatus(), QProcess::NormalExit);  // it handled the signal, it was not killed by it
    EXPECT_NE(cli.exitCode(), 0);
    EXPECT_NE(err.find("stopped at step 0 \"tok\" (tokenizer): stopped"), std::string::npos) << err;
    EXPECT_NE(err.find("slipway: stopping the pipeline (it saves a checkpoint"), std::string::npos) << err;
    EXPECT_FALSE(out.contains("[2/2]")) << out.toStdString();
    const bool step_gone = ::kill(step, 0) == -1;  // and reaped
    if (!step_gone) ::kill(step, SIGKILL);
    EXPECT_TRUE(step_gone);
    rows = (*store)->runs();
    ASSERT_TRUE(rows.ok());
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_EQ(rows->front().state, RunState::kCancelled);
}

}  // namespace
}  // namespace slipway::app
