// Runs the built `slipway` binary as a user would: `logs summary` on the real MLPerf logs, errors, --version,
// `status` over the run history it shares with the app, and `run` on This computer with the stand-in engine
// (the cluster half is in tests/app cluster tests and tests/remote/e2e_cluster_test.sh).
#include <gtest/gtest.h>

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QStringList>
#include <QThread>

#include <nlohmann/json.hpp>

#include <QFileInfo>

#include "history/run_history.h"
#include "remote/deploy/run_record.h"
#include "test_paths.h"
#include "test_util.h"

#include <signal.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

namespace {

const QString kDataDir = QString::fromUtf8(test_paths::test_data_dir("/mlperf-logs"));

struct ProcessResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

ProcessResult run_slipway(const QStringList& args, const QString& working_dir = QString()) {
    QProcess process;
    process.setProgram(QString::fromUtf8(test_paths::slipway_bin()));
    process.setArguments(args);
    if (!working_dir.isEmpty()) process.setWorkingDirectory(working_dir);
    // Should a bug send it to the GUI path, fail fast instead of looking for a display.
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    process.setProcessEnvironment(env);
    process.start();
    ProcessResult run;
    if (!process.waitForStarted(10000)) {
        ADD_FAILURE() << "cannot start " << test_paths::slipway_bin();
        return run;
    }
    if (!process.waitForFinished(30000)) {
        process.kill();
        process.waitForFinished();
        ADD_FAILURE() << "slipway did not finish";
    }
    run.exit_code = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.out = process.readAllStandardOutput().toStdString();
    run.err = process.readAllStandardError().toStdString();
    return run;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

std::string data_file(const char* name) {
    return (kDataDir + "/" + name).toStdString();
}

using Json = nlohmann::ordered_json;

void expect_point(const Json& point, int64_t samples, double value) {
    ASSERT_TRUE(point.is_array());
    ASSERT_EQ(point.size(), 2u);
    EXPECT_TRUE(point[0].is_number_integer()) << point.dump();  // 1536, not 1536.0
    EXPECT_EQ(point[0].get<int64_t>(), samples);
    EXPECT_EQ(point[1].get<double>(), value);
}

TEST(SlipwayCli, LogsSummaryJsonOnTheRealLogs) {
    const ProcessResult run =
        run_slipway({"logs", "summary", "--json", kDataDir + "/dell-xe9680-result_0.txt",
                     kDataDir + "/fujitsu-gx2560m7-result_0.txt", kDataDir + "/juniper-h100n1-result_0.txt"});
    EXPECT_EQ(run.exit_code, 0);
    EXPECT_EQ(run.err, "");
    const std::vector<std::string> lines = lines_of(run.out);
    ASSERT_EQ(lines.size(), 3u) << run.out;
    std::vector<Json> docs;
    for (const std::string& line : lines)
        docs.push_back(Json::parse(line));

    std::vector<std::string> keys;
    for (const auto& item : docs[0].items())
        keys.push_back(item.key());
    EXPECT_EQ(keys,
              (std::vector<std::string>{"file", "lines", "mllog_lines", "bad_lines", "status", "run_start_ms",
                                        "run_stop_ms", "time_to_train_ms", "eval_accuracy", "train_loss"}));

    const Json& dell = docs[0];
    EXPECT_EQ(dell["file"], data_file("dell-xe9680-result_0.txt"));
    EXPECT_EQ(dell["lines"], 699);
    EXPECT_EQ(dell["mllog_lines"], 52);
    EXPECT_EQ(dell["bad_lines"], 0);
    EXPECT_EQ(dell["status"], "success");
    EXPECT_EQ(dell["run_start_ms"], 1713994395504);
    EXPECT_EQ(dell["run_stop_ms"], 1713996161336);
    EXPECT_EQ(dell["time_to_train_ms"], 1765832);
    ASSERT_EQ(dell["eval_accuracy"].size(), 5u);
    expect_point(dell["eval_accuracy"].front(), 1536, 0.937900960445404);
    expect_point(dell["eval_accuracy"].back(), 3072, 0.9239340424537659);
    EXPECT_EQ(dell["train_loss"], Json::array());

    const Json& fujitsu = docs[1];
    EXPECT_EQ(fujitsu["file"], data_file("fujitsu-gx2560m7-result_0.txt"));
    EXPECT_EQ(fujitsu["lines"], 757);
    EXPECT_EQ(fujitsu["mllog_lines"], 52);
    EXPECT_EQ(fujitsu["bad_lines"], 0);
    EXPECT_EQ(fujitsu["status"], "success");
    EXPECT_EQ(fujitsu["run_start_ms"], 1715065028111);
    EXPECT_EQ(fujitsu["run_stop_ms"], 1715068585688);
    EXPECT_EQ(fujitsu["time_to_train_ms"], 3557577);
    ASSERT_EQ(fujitsu["eval_accuracy"].size(), 5u);
    expect_point(fujitsu["eval_accuracy"].front(), 1536, 0.9392887949943542);
    expect_point(fujitsu["eval_accuracy"].back(), 3072, 0.9238672852516174);
    EXPECT_EQ(fujitsu["train_loss"], Json::array());

    const Json& juniper = docs[2];
    EXPECT_EQ(juniper["file"], data_file("juniper-h100n1-result_0.txt"));
    EXPECT_EQ(juniper["lines"], 89);
    EXPECT_EQ(juniper["mllog_lines"], 89);
    EXPECT_EQ(juniper["bad_lines"], 0);
    EXPECT_EQ(juniper["status"], "success");
    EXPECT_EQ(juniper["run_start_ms"], 1715151009823);
    EXPECT_EQ(juniper["run_stop_ms"], 1715157926587);
    EXPECT_EQ(juniper["time_to_train_ms"], 6916764);
    ASSERT_EQ(juniper["eval_accuracy"].size(), 7u);
    expect_point(juniper["eval_accuracy"].front(), 1536, 0.9428010582923889);
    expect_point(juniper["eval_accuracy"].back(), 3840, 0.9246053695678711);
    ASSERT_EQ(juniper["train_loss"].size(), 46u);
    expect_point(juniper["train_loss"].front(), 80, 3.7142);
    expect_point(juniper["train_loss"].back(), 3760, 1.2826);
}

TEST(SlipwayCli, LogsSummaryTable) {
    const ProcessResult run = run_slipway({"logs", "summary", "dell-xe9680-result_0.txt",
                                           "fujitsu-gx2560m7-result_0.txt", "juniper-h100n1-result_0.txt"},
                                          kDataDir);
    EXPECT_EQ(run.exit_code, 0);
    EXPECT_EQ(run.err, "");
    // time to train: 1765832 ms = 29.43 min, 3557577 ms = 59.29 min, 6916764 ms = 115.28 min.
    EXPECT_EQ(run.out,
              "file                           lines  mllog  bad  status   ttt_min           last_eval  evals "
              " losses\n"
              "dell-xe9680-result_0.txt         699     52    0  success    29.43  0.9239340424537659      5 "
              "      0\n"
              "fujitsu-gx2560m7-result_0.txt    757     52    0  success    59.29  0.9238672852516174      5 "
              "      0\n"
              "juniper-h100n1-result_0.txt       89     89    0  success   115.28  0.9246053695678711      7 "
              "     46\n");
}

TEST(SlipwayCli, MissingFileIsNamedAndTheOthersArePrinted) {
    const QString missing = kDataDir + "/no-such-log.txt";
    const ProcessResult json =
        run_slipway({"logs", "summary", "--json", kDataDir + "/dell-xe9680-result_0.txt", missing,
                     kDataDir + "/juniper-h100n1-result_0.txt"});
    EXPECT_EQ(json.exit_code, 1);
    EXPECT_NE(json.err.find(missing.toStdString()), std::string::npos) << json.err;
    const std::vector<std::string> lines = lines_of(json.out);
    ASSERT_EQ(lines.size(), 2u) << json.out;
    EXPECT_EQ(Json::parse(lines[0])["file"], data_file("dell-xe9680-result_0.txt"));
    EXPECT_EQ(Json::parse(lines[1])["file"], data_file("juniper-h100n1-result_0.txt"));

    const ProcessResult table =
        run_slipway({"logs", "summary", "no-such-log.txt", "juniper-h100n1-result_0.txt"}, kDataDir);
    EXPECT_EQ(table.exit_code, 1);
    EXPECT_NE(table.err.find("no-such-log.txt"), std::string::npos) << table.err;
    const std::vector<std::string> rows = lines_of(table.out);
    ASSERT_EQ(rows.size(), 2u) << table.out;
    EXPECT_EQ(rows[1].rfind("juniper-h100n1-result_0.txt", 0), 0u);

    const ProcessResult only_missing = run_slipway({"logs", "summary", missing});
    EXPECT_EQ(only_missing.exit_code, 1);
    EXPECT_EQ(only_missing.out, "");
}

TEST(SlipwayCli, Version) {
    const ProcessResult run = run_slipway({"--version"});
    EXPECT_EQ(run.exit_code, 0);
    EXPECT_EQ(run.out, "slipway " SLIPWAY_VERSION "\n");
}

// The bundle the build made beside build/bin, written where asked, with the hash sha256sum gives; the
// bundle's own build is tests/compat/engine_bundle.sh.
TEST(SlipwayCli, EngineBundleWritesTheBundleItCarriesAndItsHash) {
    const QString out = QDir::temp().filePath(QStringLiteral("slipway-cli-bundle-%1.tar.gz").arg(getpid()));
    const ProcessResult run =
        run_slipway({QStringLiteral("engine"), QStringLiteral("bundle"), QStringLiteral("--out"), out});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    QFile file(out);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    const QByteArray bytes = file.readAll();
    EXPECT_GT(bytes.size(), 1000000);  // the engine's sources, nlohmann-json, CLI11 and PCRE2's tarball
    const std::string sha = QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex().toStdString();
    EXPECT_NE(run.out.find("bundle=" + out.toStdString() + " sha256=" + sha), std::string::npos) << run.out;
    file.remove();
    EXPECT_NE(run_slipway({QStringLiteral("engine"), QStringLiteral("bundle")}).exit_code,
              0);  // --out is required
}

TEST(SlipwayCli, UsageErrorsExitNonZero) {
    const ProcessResult no_action = run_slipway({"logs"});
    EXPECT_NE(no_action.exit_code, 0);
    EXPECT_NE(no_action.err.find("subcommand"), std::string::npos) << no_action.err;

    const ProcessResult no_files = run_slipway({"logs", "summary"});
    EXPECT_NE(no_files.exit_code, 0);
    EXPECT_NE(no_files.err.find("FILE"), std::string::npos) << no_files.err;

    const ProcessResult unknown = run_slipway({"logs", "summary", "--bogus", "x.txt"});
    EXPECT_NE(unknown.exit_code, 0);
    EXPECT_EQ(unknown.out.find("x.txt"), std::string::npos);
}

// An interface language the app does not have is a usage error, caught before any window opens.
TEST(SlipwayCli, UnknownLanguageIsAUsageError) {
    const ProcessResult run = run_slipway({"--lang", "de"});
    EXPECT_NE(run.exit_code, 0);
    EXPECT_NE(run.err.find("unknown language de"), std::string::npos) << run.err;
}

// The history `slipway status` reads: $XDG_DATA_HOME/slipway/history.sqlite of an isolated home.
slipway::app::StoredRun cluster_row(const char* name, const char* run_id, const char* job,
                                    slipway::app::RunState state, const char* slurm_state) {
    slipway::app::StoredRun r;
    r.name = name;
    r.cluster = "gone";  // no such profile: status must not need it for ended runs
    r.job_id = job;
    r.run_id = run_id;
    r.state = state;
    r.slurm_state = slurm_state;
    r.created_ms =
        QDateTime::fromString(QStringLiteral("2026-11-23T09:00:00Z"), Qt::ISODate).toMSecsSinceEpoch();
    r.log_path = std::string("/home/u/slipway/runs/") + run_id + "/slurm-" + job + ".out";
    return r;
}

TEST(SlipwayCliStore, StatusListsClusterRunsFromTheHistoryAndAsksSlurmOnlyAboutLiveOnes) {
    slipway::app::testing_util::IsolatedHome home;
    {
        auto store = slipway::app::RunHistory::open(slipway::app::RunHistory::default_path());
        ASSERT_TRUE(store.ok()) << store.error();
        ASSERT_TRUE((*store)
                        ->add_run(cluster_row("done", "done-20261123-090000-0001", "7",
                                              slipway::app::RunState::kCompleted, "COMPLETED"))
                        .ok());
        slipway::app::StoredRun local;
        local.name = "on this computer";
        local.cluster = slipway::app::kLocalCluster;
        local.job_id = "4242";  // a pid: not a Slurm job
        ASSERT_TRUE((*store)->add_run(local).ok());
    }
    const ProcessResult ended = run_slipway({"status"});
    EXPECT_EQ(ended.exit_code, 0) << ended.err;
    const std::vector<std::string> lines = lines_of(ended.out);
    ASSERT_EQ(lines.size(), 2u) << ended.out;  // header + the cluster run; the local run is not Slurm's
    EXPECT_EQ(lines[1].substr(0, lines[1].find(' ')), "done-20261123-090000-0001");
    EXPECT_NE(lines[1].find("COMPLETED"), std::string::npos) << lines[1];
    EXPECT_NE(lines[1].find("2026-11-23T09:00:00Z"), std::string::npos) << lines[1];

    {
        auto store = slipway::app::RunHistory::open(slipway::app::RunHistory::default_path());
        ASSERT_TRUE((*store)
                        ->add_run(cluster_row("queued", "queued-20261123-090001-0002", "8",
                                              slipway::app::RunState::kPending, ""))
                        .ok());
    }
    // A live run is asked about: its profile is gone, so that row says "?" and the exit code says so; the
    // ended run is still listed.
    const ProcessResult live = run_slipway({"status"});
    EXPECT_EQ(live.exit_code, 1);
    EXPECT_NE(live.err.find("queued-20261123-090001-0002"), std::string::npos) << live.err;
    EXPECT_NE(live.err.find("gone"), std::string::npos) << live.err;
    EXPECT_NE(live.out.find("COMPLETED"), std::string::npos) << live.out;
    const ProcessResult one = run_slipway({"status", "done-20261123-090000-0001"});
    EXPECT_EQ(one.exit_code, 0) << one.err;
    EXPECT_EQ(lines_of(one.out).size(), 2u);
    const ProcessResult unknown = run_slipway({"fetch", "nope-20261123-090000-0003"});
    EXPECT_EQ(unknown.exit_code, 1);
    EXPECT_NE(unknown.err.find("no run nope-20261123-090000-0003 in "), std::string::npos) << unknown.err;
    EXPECT_NE(unknown.err.find("history.sqlite"), std::string::npos) << unknown.err;
}

TEST(SlipwayCliStore, OldJsonRunRecordsAreImportedOnceAndListed) {
    slipway::app::testing_util::IsolatedHome home;
    const std::string dir = slipway::remote::default_runs_dir();
    const slipway::remote::RunRecord old{
        "old-20261101-080000-00aa", "old",      "gone", "5", "", "/home/u/slipway/runs/old",
        "2026-11-01T08:00:00Z",     "COMPLETED"};
    ASSERT_TRUE(slipway::remote::RunRecordStore(dir).save(old).ok());
    const ProcessResult first = run_slipway({"status"});
    EXPECT_EQ(first.exit_code, 0) << first.err;
    EXPECT_NE(first.out.find("old-20261101-080000-00aa"), std::string::npos) << first.out;
    EXPECT_NE(first.out.find("COMPLETED"), std::string::npos) << first.out;
    EXPECT_FALSE(QFileInfo::exists(QString::fromStdString(dir)));
    EXPECT_TRUE(QFileInfo::exists(QString::fromStdString(dir) + ".imported"));
    const ProcessResult second = run_slipway({"status"});
    EXPECT_EQ(lines_of(second.out).size(), 2u) << second.out;  // listed once
}

// `slipway run`: the run service on This computer from the command line, the row in the history the app
// reads.
class SlipwayCliLocalRun : public ::testing::Test {
protected:
    void TearDown() override { qunsetenv("FAKE_ENGINE_MODE"); }
    QStringList run_args() const {
        return {"run", test_paths::source_dir("/resources/presets/demo-tiny.json"), "--engine",
                slipway::app::testing_util::fake_engine()};
    }
    static std::vector<slipway::app::StoredRun> rows() {
        auto store = slipway::app::RunHistory::open(slipway::app::RunHistory::default_path());
        if (!store.ok()) return {};
        auto runs = (*store)->runs();
        return runs.ok() ? *runs : std::vector<slipway::app::StoredRun>{};
    }
    slipway::app::testing_util::IsolatedHome home_;
};

TEST_F(SlipwayCliLocalRun, ARunPrintsItsProgressAndItsEndAndIsStoredForTheApp) {
    qputenv("FAKE_ENGINE_MODE", "complete");
    const ProcessResult done = run_slipway(run_args());
    EXPECT_EQ(done.exit_code, 0) << done.out << done.err;
    EXPECT_NE(done.out.find("train_loss 3.0 step 1 samples 8\ntrain_loss 2.5 step 2 samples 16\n"),
              std::string::npos)
        << done.out;
    EXPECT_NE(done.out.find(" started: " + slipway::app::testing_util::fake_engine().toStdString() +
                            " launch --nproc 2 -- train"),
              std::string::npos)
        << done.out;
    EXPECT_EQ(lines_of(done.out).back(), "final_state=completed");
    std::vector<slipway::app::StoredRun> stored = rows();
    ASSERT_EQ(stored.size(), 1u);
    EXPECT_EQ(stored[0].state, slipway::app::RunState::kCompleted);
    EXPECT_EQ(stored[0].cluster, slipway::app::kLocalCluster);
    EXPECT_FALSE(stored[0].job_id.empty());
    // Under the app's folder for local runs ($XDG_DATA_HOME/slipway/local-runs).
    EXPECT_EQ(
        stored[0].log_path.rfind((home_.path() + "/data/slipway/local-runs/demo-tiny-").toStdString(), 0), 0u)
        << stored[0].log_path;

    qputenv("FAKE_ENGINE_MODE", "fail");
    const ProcessResult failed = run_slipway(run_args());
    EXPECT_EQ(failed.exit_code, 1);
    EXPECT_EQ(lines_of(failed.out).back(),
              "final_state=failed (exit code 3: fake engine: failing on purpose)");
    stored = rows();
    ASSERT_EQ(stored.size(), 2u);
    EXPECT_EQ(stored[0].state, slipway::app::RunState::kFailed);  // newest first

    const ProcessResult no_engine = run_slipway(
        {"run", test_paths::source_dir("/resources/presets/demo-tiny.json"), "--engine", "/nonexistent"});
    EXPECT_EQ(no_engine.exit_code, 1);
    EXPECT_NE(no_engine.err.find("slipway-engine /nonexistent is not an executable file"), std::string::npos)
        << no_engine.err;
}

TEST_F(SlipwayCliLocalRun, CtrlCStopsTheEngineAndTheRunIsCancelled) {
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("FAKE_ENGINE_MODE", "hang");
    env.insert("QT_QPA_PLATFORM", "offscreen");
    process.setProcessEnvironment(env);
    ASSERT_TRUE(slipway::app::testing_util::start_as_from_terminal(
        process, QString::fromUtf8(test_paths::slipway_bin()), run_args()));
    QByteArray out;
    ASSERT_TRUE(slipway::app::testing_util::read_until(process, out, "train_loss 2.5")) << out.toStdString();
    ::kill(static_cast<pid_t>(process.processId()), SIGINT);
    ASSERT_TRUE(process.waitForFinished(20000));
    out += process.readAllStandardOutput();
    const std::string err = process.readAllStandardError().toStdString();
    EXPECT_EQ(process.exitCode(), 1);
    EXPECT_NE(err.find("stopping the engine"), std::string::npos) << err;
    EXPECT_EQ(lines_of(out.toStdString()).back(), "final_state=cancelled") << out.toStdString();
    const std::vector<slipway::app::StoredRun> stored = rows();
    ASSERT_EQ(stored.size(), 1u);
    EXPECT_EQ(stored[0].state, slipway::app::RunState::kCancelled);
}

}  // namespace
