// A pipeline as a chain of Slurm jobs on the real local cluster (tests/cluster; label cluster), through the
// real `slipway` binary: `slipway submit PIPELINE.json` queues the demo pipeline's 8 steps linked by afterok,
// every job completes in order, the LEP model is written on the cluster and loads in the engine, and `slipway
// status` lists the chain; in a chain whose middle step fails, the step after it is cancelled by Slurm
// (DependencyNeverSatisfied) and never runs, and `status` says so.
#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QRegularExpression>

#include "remote/slurm/cluster_profile.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

using testing_util::Cli;
using testing_util::slipway;
using testing_util::wait_until;

class PipelineOnSlurm : public ::testing::Test {
protected:
    void SetUp() override {
        env_ = testing_util::use_local_cluster(QString::fromUtf8(test_paths::engine_bin()));
        if (env_.empty()) GTEST_SKIP() << "no local cluster (SLIPWAY_CLUSTER_ENV)";
        if (!QFile::exists(QString::fromUtf8(test_paths::engine_bin())))
            GTEST_SKIP() << "no slipway-engine built";
        remote::ClusterProfile profile =
            testing_util::local_cluster_profile(env_, env_["SLIPWAY_REMOTE_DIR"] + "/pipeline");
        ASSERT_TRUE(remote::ProfileStore().put(profile).ok());
    }

    // The submitted chain: step name -> job id, in order.
    std::vector<std::pair<QString, QString>> submit(const QString& file, QString* run_dir) {
        const Cli r =
            slipway({"submit", file, "--cluster", "local-slurm", "--engine", test_paths::engine_bin()}, env_);
        EXPECT_EQ(r.exit_code, 0) << r.out.toStdString() << r.err.toStdString();
        std::vector<std::pair<QString, QString>> chain;
        for (const QString& line : r.out.split('\n')) {
            const QRegularExpressionMatch row =
                QRegularExpression(
                    QStringLiteral("^(\\S+)\\s+(train|tokenizer|adapt-vocab|lep|eval)\\s+(\\d+)\\s"))
                    .match(line);
            if (row.hasMatch()) chain.emplace_back(row.captured(1), row.captured(3));
            if (line.startsWith("pipeline ") && line.contains(" in ")) *run_dir = line.section(" in ", 1);
        }
        return chain;
    }

    // The STATE column of `slipway status` for each job id.
    std::map<QString, QString> states() {
        const Cli status = slipway({"status"}, env_);
        std::map<QString, QString> out;
        for (const QString& line : status.out.split('\n')) {
            const QStringList cells = line.split(QRegularExpression(QStringLiteral("\\s{2,}")));
            if (cells.size() >= 4 && cells[2] != "JOB") out[cells[2]] = cells[3];
        }
        return out;
    }

    testing_util::IsolatedHome home_;
    std::map<QString, QString> env_;
};

TEST_F(PipelineOnSlurm, DemoChainCompletesInOrder) {
    QString run_dir;
    const auto chain =
        submit(QString::fromUtf8(test_paths::source_dir("/resources/presets/pipelines/ruadapt-demo.json")),
               &run_dir);
    ASSERT_EQ(chain.size(), 8u);
    EXPECT_EQ(chain.front().first, "base");
    EXPECT_EQ(chain.back().first, "eval");
    for (size_t i = 1; i < chain.size(); ++i)
        EXPECT_GT(chain[i].second.toInt(), chain[i - 1].second.toInt());
    std::map<QString, QString> seen;
    const bool done = wait_until(
        [&] {
            seen = states();
            for (const auto& [step, job] : chain)
                if (seen[job] != "COMPLETED")
                    return seen[job].startsWith("FAILED") || seen[job].startsWith("CANCELLED");
            return true;
        },
        480'000);
    ASSERT_TRUE(done) << "chain still running";
    for (const auto& [step, job] : chain)
        EXPECT_EQ(seen[job], "COMPLETED") << step.toStdString() << " (job " << job.toStdString() << ")";
    // The cluster is this machine: the LEP model written there loads in the engine.
    ASSERT_FALSE(run_dir.isEmpty());
    for (const char* file : {"lep/config.json", "lep/model.safetensors", "lep/tokenizer.json", "eval.json"})
        EXPECT_TRUE(QFile::exists(run_dir + "/" + file)) << file;
    QProcess gen;
    gen.start(QString::fromUtf8(test_paths::engine_bin()),
              {"generate", "--model", run_dir + "/lep", "--prompt", "Привет", "--max-new-tokens", "4"});
    ASSERT_TRUE(gen.waitForFinished(60'000));
    EXPECT_EQ(gen.exitCode(), 0) << gen.readAllStandardError().toStdString();
}

TEST_F(PipelineOnSlurm, AFailedMiddleStepCancelsTheRest) {
    const QString path = home_.path() + "/broken.json";
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(QStringLiteral(R"({"schema": "slipway.pipeline/1", "name": "broken", "steps": [
      {"name": "tok", "kind": "tokenizer", "corpus": "resources/demo/corpus.jsonl", "vocab_size": 400,
       "out": "t.json", "cpus": 1},
      {"name": "adapt", "kind": "adapt-vocab", "model": "/nonexistent/model", "old_tokenizer": "${steps.tok.out}",
       "new_tokenizer": "${steps.tok.out}", "out": "adapted", "cpus": 1},
      {"name": "eval", "kind": "eval", "model": "${steps.adapt.out}", "tasks": "resources/eval/demo-tasks.json",
       "out": "eval.json", "cpus": 1}]})")
                .toUtf8());
    f.close();
    QString run_dir;
    const Cli r = slipway({"submit", path, "--cluster", "local-slurm", "--engine", test_paths::engine_bin(),
                           "--inputs", test_paths::source_dir()},
                          env_);
    ASSERT_EQ(r.exit_code, 0) << r.out.toStdString() << r.err.toStdString();
    const QRegularExpressionMatch jobs =
        QRegularExpression(QStringLiteral("jobs=(\\d+) (\\d+) (\\d+)")).match(r.out);
    ASSERT_TRUE(jobs.hasMatch()) << r.out.toStdString();
    std::map<QString, QString> seen;
    ASSERT_TRUE(wait_until(
        [&] {
            seen = states();
            return seen[jobs.captured(3)].startsWith("CANCELLED") || seen[jobs.captured(3)] == "COMPLETED";
        },
        120'000))
        << seen[jobs.captured(3)].toStdString();
    EXPECT_EQ(seen[jobs.captured(1)], "COMPLETED");
    EXPECT_TRUE(seen[jobs.captured(2)].startsWith("FAILED")) << seen[jobs.captured(2)].toStdString();
    EXPECT_EQ(seen[jobs.captured(3)], "CANCELLED (DependencyNeverSatisfied)");
    // And so it stays once the job has ended (the reason is stored with the state).
    EXPECT_EQ(states()[jobs.captured(3)], "CANCELLED (DependencyNeverSatisfied)");
}

}  // namespace
}  // namespace slipway::app
