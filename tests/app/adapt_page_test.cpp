// The Language page (app/adapt): its form turned into a pipeline that `slipway pipeline validate` accepts,
// errors that name what is missing, and the whole chain started from the page on This computer with the real
// CLI and engine (two tiny random models as base and instruct, a slice of the demo corpus): every step
// completes, the adapted instruct model is written, each step is a run on the Runs page and the training
// steps are followed in the monitor. Submitted to a cluster (a FakeCluster playing Slurm), the chain is
// queued in-process, step by step, each step a row and each training step followed; a step Slurm refuses
// takes back the jobs already queued. With SLIPWAY_SCREENSHOT_DIR set, the page and the Runs page are saved
// as language-this-computer.png and language-runs.png.
#include <signal.h>

#include <gtest/gtest.h>

#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSpinBox>
#include <QTextStream>

#include "adapt/adapt_page.h"
#include "clusters/pipeline_job.h"
#include "fake_cluster.h"
#include "history/run_history.h"
#include "main_window.h"
#include "runs/run_tracker.h"
#include "runs/runs_model.h"
#include "runs_page.h"
#include "service/local_executor.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

using testing_util::wait_until;

const QString kSource = QString::fromUtf8(test_paths::source_dir());

// An HF folder of the demo model's shape with random weights and the demo tokenizer.
bool make_model(const QString& engine, const QString& dir, int seed) {
    QProcess p;
    p.start(engine, {"init-model", "--config", kSource + "/resources/demo/model/config.json", "--out", dir,
                     "--seed", QString::number(seed)});
    if (!p.waitForFinished(120000) || p.exitCode() != 0) return false;
    return QFile::copy(kSource + "/resources/demo/tokenizer.json", dir + "/tokenizer.json");
}

TEST(AdaptPage, TheFormMakesAValidPipelineAndSaysWhatIsMissing) {
    testing_util::IsolatedHome home;
    AdaptPage page(kSource, home.path() + "/pipelines", [] { return QStringList{"gpu-cluster"}; });
    EXPECT_FALSE(page.pipeline().ok());
    EXPECT_NE(page.status_label()->text().indexOf("base model"), -1)
        << page.status_label()->text().toStdString();
    page.base_edit()->setText("/models/llama-3-8b");
    page.instruct_edit()->setText("/models/llama-3-8b-instruct");
    page.corpus_edit()->setText("/data/ru.jsonl");
    page.tokenizer_box()->setCurrentIndex(page.tokenizer_box()->findData("extend"));
    ASSERT_TRUE(page.pipeline().ok()) << page.pipeline().error();
    const nlohmann::json doc = *page.pipeline();
    ASSERT_EQ(doc["steps"].size(), 5u);  // tokenizer, adapt, embeddings, lep, calibrate (no eval tasks)
    EXPECT_EQ(doc["steps"][0]["mode"], "extend");
    EXPECT_EQ(doc["steps"][0]["add"], 8000);
    EXPECT_EQ(doc["steps"][2]["config"]["adapter"]["method"], "embeddings");
    EXPECT_EQ(doc["steps"][2]["config"]["slurm"]["gpus_per_node"], 0);  // This computer
    EXPECT_EQ(doc["steps"][4]["config"]["model"]["path"], "${steps.lep.out}");
    EXPECT_TRUE(page.preview()->toPlainText().contains("\"kind\": \"lep\""));
    // On a cluster the presets' Slurm resources and bf16 stay.
    page.target_box()->setCurrentIndex(page.target_box()->findData("gpu-cluster"));
    ASSERT_TRUE(page.pipeline().ok());
    EXPECT_EQ((*page.pipeline())["steps"][2]["config"]["slurm"]["gpus_per_node"], 8);
    EXPECT_EQ((*page.pipeline())["steps"][2]["config"]["training"]["bf16"], true);
    EXPECT_TRUE(page.nodes_box()->isEnabled());
    EXPECT_FALSE(page.mounts_edit()->isEnabled());  // mounts go with an image of one's own

    // The user's cluster, not the seed's: its resources and image, with its own mounts and no preset's
    // folder.
    page.nodes_box()->setValue(1);
    page.gpus_box()->setValue(2);
    page.time_edit()->setText("02:00:00");
    page.image_edit()->setText("/shared/images/pytorch.sqsh");
    EXPECT_TRUE(page.mounts_edit()->isEnabled());
    page.mounts_edit()->setText("/data:/data, /models:/models,");
    ASSERT_TRUE(page.pipeline().ok()) << page.pipeline().error();
    for (const size_t step : {size_t{2}, size_t{4}}) {  // embeddings, calibration
        const nlohmann::json slurm = (*page.pipeline())["steps"][step]["config"]["slurm"];
        EXPECT_EQ(slurm["nodes"], 1);
        EXPECT_EQ(slurm["gpus_per_node"], 2);
        EXPECT_EQ(slurm["time"], "02:00:00");
        EXPECT_EQ(slurm["container_image"], "/shared/images/pytorch.sqsh");
        EXPECT_EQ(slurm["container_mounts"], (nlohmann::json{"/data:/data", "/models:/models"}));
        EXPECT_FALSE(slurm.contains("container_workdir"));
    }
    EXPECT_FALSE(page.preview()->toPlainText().contains("/scratch/user"));
    // Zero GPUs is a choice too (a CPU partition); back on This computer the fields do not apply.
    page.gpus_box()->setValue(0);
    ASSERT_TRUE(page.pipeline().ok()) << page.pipeline().error();
    EXPECT_EQ((*page.pipeline())["steps"][2]["config"]["slurm"]["gpus_per_node"], 0);
    EXPECT_EQ((*page.pipeline())["steps"][2]["config"]["training"]["bf16"], false);  // CPUs train in fp32
    EXPECT_EQ((*page.pipeline())["steps"][2]["config"]["model"]["dtype"], "float32");
    page.target_box()->setCurrentIndex(page.target_box()->findData(QString()));
    EXPECT_FALSE(page.nodes_box()->isEnabled());
    ASSERT_TRUE(page.pipeline().ok()) << page.pipeline().error();
    EXPECT_EQ((*page.pipeline())["steps"][2]["config"]["slurm"]["nodes"], 1);
    EXPECT_FALSE((*page.pipeline())["steps"][2]["config"]["slurm"].contains("container_image"));
}

// The page as the window sets it up for clusters: profile "hpc" on `cluster`, the steps' rows in `history`.
class AdaptPageOnACluster : public ::testing::Test {
protected:
    void SetUp() override {
        Result<std::unique_ptr<RunHistory>> opened =
            RunHistory::open((home_.path() + "/history.sqlite").toStdString());
        ASSERT_TRUE(opened.ok()) << opened.error();
        history_ = std::move(*opened);
        page_ = std::make_unique<AdaptPage>(kSource, home_.path() + "/pipelines",
                                            [] { return QStringList{"hpc"}; });
        page_->set_local_runner(testing_util::fake_engine(),
                                QString::fromStdString(history_->path()));  // uploaded for bare metal
        page_->set_cluster_jobs([this](const QString& name) -> PipelineJob* {
            if (name != "hpc") return nullptr;
            remote::ClusterProfile profile;
            profile.name = "hpc";
            profile.host = "login.example.org";
            profile.user = "researcher";
            profile.container = remote::ContainerMode::kPyxis;  // the page's cluster steps name an image
            return new PipelineJob(profile, {}, cluster_.connector());
        });
        QObject::connect(page_.get(), &AdaptPage::training_step_started,
                         [this](qint64 id) { followed_.push_back(id); });
        QObject::connect(page_.get(), &AdaptPage::finished, [this](int code) { exit_code_ = code; });
        page_->base_edit()->setText("/models/llama-3-8b");
        page_->instruct_edit()->setText("/models/llama-3-8b-instruct");
        page_->corpus_edit()->setText("/data/ru.jsonl");
        page_->target_box()->setCurrentIndex(page_->target_box()->findData("hpc"));
        ASSERT_TRUE(page_->pipeline().ok()) << page_->pipeline().error();
    }

    std::vector<StoredRun> rows_by_job() const {
        std::vector<StoredRun> rows = *history_->cluster_runs();
        std::sort(rows.begin(), rows.end(), [](const StoredRun& a, const StoredRun& b) {
            return std::atoi(a.job_id.c_str()) < std::atoi(b.job_id.c_str());
        });
        return rows;
    }

    testing_util::IsolatedHome home_;
    testing_util::FakeCluster cluster_;
    std::unique_ptr<RunHistory> history_;
    std::unique_ptr<AdaptPage> page_;
    std::vector<qint64> followed_;
    int exit_code_ = -1;
};

TEST_F(AdaptPageOnACluster, EveryStepIsQueuedInOrderInProcessWithItsRowAndTheTrainingStepsAreFollowed) {
    ASSERT_TRUE(page_->start().ok());
    ASSERT_TRUE(wait_until([&] { return exit_code_ != -1; }, 30000))
        << page_->log()->toPlainText().toStdString();
    const QString log = page_->log()->toPlainText();
    ASSERT_EQ(exit_code_, 0) << log.toStdString();
    // tokenizer, adapt-vocab, embeddings (train), lep, calibration (train): a chain of five jobs.
    EXPECT_TRUE(log.contains(QStringLiteral("[1/5] tokenizer (tokenizer): job 100, run ")))
        << log.toStdString();
    EXPECT_TRUE(log.contains(QStringLiteral("(train): job 102 after 101, run "))) << log.toStdString();
    EXPECT_TRUE(log.contains(QStringLiteral("[5/5] "))) << log.toStdString();
    EXPECT_FALSE(log.contains(QStringLiteral("$ slipway"))) << log.toStdString();  // no CLI subprocess
    const std::vector<StoredRun> rows = rows_by_job();
    ASSERT_EQ(rows.size(), 5u);
    std::vector<qint64> training;
    for (size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ(rows[i].job_id, std::to_string(100 + i));
        EXPECT_EQ(rows[i].state, RunState::kPending) << rows[i].name;
        EXPECT_EQ(rows[i].cluster, "hpc");
        EXPECT_FALSE(rows[i].log_path.empty());
        if (rows[i].config_json.find("\"training\"") != std::string::npos) training.push_back(rows[i].id);
    }
    // The training steps' rows, told as they were queued (the window follows them).
    EXPECT_EQ(training.size(), 2u);
    EXPECT_EQ(followed_, training);
    size_t sbatches = 0;
    for (const std::string& c : cluster_.commands())
        sbatches += c.find("sbatch --parsable") != std::string::npos ? 1 : 0;
    EXPECT_EQ(sbatches, 5u);
    EXPECT_FALSE(page_->running());
}

TEST_F(AdaptPageOnACluster, TheTrainingStepsRunInTheUsersImageWithThePipelinesFolderMounted) {
    page_->image_edit()->setText("/shared/images/pytorch.sqsh");
    page_->mounts_edit()->setText("/data:/data");
    ASSERT_TRUE(page_->start().ok());
    ASSERT_TRUE(wait_until([&] { return exit_code_ != -1; }, 30000))
        << page_->log()->toPlainText().toStdString();
    ASSERT_EQ(exit_code_, 0) << page_->log()->toPlainText().toStdString();
    int training = 0;
    for (const StoredRun& row : rows_by_job()) {
        if (row.config_json.find("\"training\"") == std::string::npos) continue;
        ++training;
        // An earlier step's output and ${run}/... are in the pipeline's folder, beside the step's own.
        const std::string runs_dir = row.remote_dir.substr(0, row.remote_dir.find_last_of('/'));
        const std::string script = cluster_.file(row.remote_dir + "/run.sbatch");
        EXPECT_NE(script.find("--container-image=/shared/images/pytorch.sqsh"), std::string::npos) << script;
        EXPECT_NE(script.find("mounts=/data:/data," + runs_dir + ":" + runs_dir), std::string::npos)
            << script;
        EXPECT_EQ(script.find("/scratch/user"), std::string::npos) << script;  // the seed's cluster's
    }
    EXPECT_EQ(training, 2);
}

TEST_F(AdaptPageOnACluster, AStepSlurmRefusesTakesBackTheJobsAlreadyQueued) {
    cluster_.refuse_submissions(
        "Invalid generic resource (gres) specification");  // the first training step's
    ASSERT_TRUE(page_->start().ok());
    ASSERT_TRUE(wait_until([&] { return exit_code_ != -1; }, 30000))
        << page_->log()->toPlainText().toStdString();
    const QString log = page_->log()->toPlainText();
    EXPECT_EQ(exit_code_, 1);
    EXPECT_TRUE(log.contains(QStringLiteral("Invalid generic resource"))) << log.toStdString();
    EXPECT_TRUE(log.contains(QStringLiteral("cancelled the 2 job(s) already queued"))) << log.toStdString();
    EXPECT_EQ(cluster_.job_state("100"), "CANCELLED");
    EXPECT_EQ(cluster_.job_state("101"), "CANCELLED");
    const std::vector<StoredRun> rows = *history_->cluster_runs();
    ASSERT_EQ(rows.size(), 3u);  // the two queued steps, cancelled, and the refused one, failed
    int cancelled = 0, failed = 0;
    for (const StoredRun& row : rows) {
        cancelled += row.state == RunState::kCancelled ? 1 : 0;
        failed += row.state == RunState::kFailed ? 1 : 0;
    }
    EXPECT_EQ(cancelled, 2);
    EXPECT_EQ(failed, 1);
    EXPECT_TRUE(followed_.empty());
}

TEST_F(AdaptPageOnACluster, AJobScancelRefusesStaysLiveAndIsNamed) {
    cluster_.refuse_submissions("Invalid generic resource (gres) specification");
    cluster_.refuse_scancel("scancel: error: Kill job error on job id 100: Access/permission denied");
    ASSERT_TRUE(page_->start().ok());
    ASSERT_TRUE(wait_until([&] { return exit_code_ != -1; }, 30000))
        << page_->log()->toPlainText().toStdString();
    const QString log = page_->log()->toPlainText();
    EXPECT_EQ(exit_code_, 1);
    EXPECT_TRUE(log.contains(QStringLiteral("job 100 could not be cancelled: "))) << log.toStdString();
    EXPECT_TRUE(log.contains(QStringLiteral("Access/permission denied"))) << log.toStdString();
    // Rows say what Slurm has: the jobs it kept are still live (pending), not cancelled.
    for (const StoredRun& row : rows_by_job()) {
        if (!row.job_id.empty()) {
            EXPECT_EQ(row.state, RunState::kPending) << row.job_id;
        }
    }
}

TEST(AdaptPage, StartedOnThisComputerEveryStepCompletesAndIsARun) {
    const QString engine = QString::fromUtf8(test_paths::engine_bin());
    if (!QFileInfo(engine).isExecutable()) GTEST_SKIP() << "no slipway-engine at " << engine.toStdString();
    testing_util::IsolatedHome home;
    qputenv("SLIPWAY_ENGINE", engine.toUtf8());
    const QString base = home.path() + "/base", instruct = home.path() + "/instruct";
    ASSERT_TRUE(make_model(engine, base, 1));
    ASSERT_TRUE(make_model(engine, instruct, 2));
    // 400 documents of the demo corpus: enough for a 600-token BPE and a few steps.
    QFile in(kSource + "/resources/demo/corpus.jsonl"), out(home.path() + "/corpus.jsonl");
    ASSERT_TRUE(in.open(QIODevice::ReadOnly) && out.open(QIODevice::WriteOnly));
    for (int i = 0; i < 400 && !in.atEnd(); ++i)
        out.write(in.readLine());
    out.close();

    MainWindow window;  // the default history: the one the CLI writes (IsolatedHome's XDG_DATA_HOME)
    window.show_page(MainWindow::kAdaptPage);
    AdaptPage* page = window.adapt_page();
    page->base_edit()->setText(base);
    page->instruct_edit()->setText(instruct);
    page->corpus_edit()->setText(home.path() + "/corpus.jsonl");
    page->vocab_box()->setValue(600);
    page->block_box()->setValue(64);
    page->embedding_steps_box()->setValue(3);
    page->calibration_steps_box()->setValue(2);
    page->tasks_edit()->setText(kSource + "/resources/eval/demo-tasks.json");
    ASSERT_TRUE(page->pipeline().ok()) << page->pipeline().error();
    int exit_code = -1;
    QObject::connect(page, &AdaptPage::finished, [&](int code) { exit_code = code; });
    const Status started = page->start();
    ASSERT_TRUE(started.ok()) << started.message();
    ASSERT_TRUE(wait_until([&] { return exit_code != -1; }, 600000))
        << page->log()->toPlainText().toStdString();
    ASSERT_EQ(exit_code, 0) << page->log()->toPlainText().toStdString();
    if (const QString dir = qEnvironmentVariable("SLIPWAY_SCREENSHOT_DIR"); !dir.isEmpty()) {
        window.resize(1300, 820);
        QDir().mkpath(dir);
        EXPECT_TRUE(window.grab().save(dir + "/language-this-computer.png"));
        window.show_page(MainWindow::kRunsPage);
        window.runs_page()->reload();
        EXPECT_TRUE(window.grab().save(dir + "/language-runs.png"));
    }
    // Run in-process: the page's log holds the runner's own step lines, no CLI was started.
    const QString log = page->log()->toPlainText();
    EXPECT_TRUE(log.contains(QStringLiteral("Running pipeline "))) << log.toStdString();
    EXPECT_TRUE(log.contains(QStringLiteral("] embeddings (train): "))) << log.toStdString();
    EXPECT_FALSE(log.contains(QStringLiteral("$ slipway"))) << log.toStdString();
    ASSERT_TRUE(wait_until([&] { return !page->running(); }));
    EXPECT_FALSE(page->stop_button()->isEnabled());
    // The adapted instruct model (LEP output) and the eval results, in the run folder the runner names.
    const QString marker = QStringLiteral("pipeline ruadapt completed in ");
    const int at = log.indexOf(marker);
    ASSERT_NE(at, -1) << log.toStdString();
    const QString line = log.mid(at, log.indexOf('\n', at) - at);
    const QString run_dir = line.mid(line.indexOf(QStringLiteral(": ")) + 2).trimmed();
    for (const char* file : {"config.json", "model.safetensors", "tokenizer.json"})
        EXPECT_TRUE(QFile::exists(run_dir + "/lep/" + file)) << run_dir.toStdString() << " " << file;
    EXPECT_TRUE(QFile::exists(run_dir + "/eval.json")) << run_dir.toStdString();
    // Both training steps (embeddings, calibration) were followed in the monitor.
    ASSERT_TRUE(wait_until([&] { return window.tracker()->keys().size() >= 2; }, 10000))
        << window.tracker()->keys().size();
    // Every step that trains is a completed run on the Runs page; the others are rows too.
    ASSERT_TRUE(wait_until([&] { return window.runs_page()->shown_rows() >= 6; }, 10000))
        << window.runs_page()->shown_rows();
}

// Closing the page while a step runs on This computer (the window closing) gives the step the closing grace,
// not a user's Stop's: a step deaf to SIGTERM is killed, with its group, a few seconds after the close, and
// its row says it was stopped.
TEST(AdaptPage, ClosingWhileAStepRunsKillsItAfterTheClosingGrace) {
    testing_util::IsolatedHome home;
    const QString engine = home.path() + "/deaf-engine.sh";
    ASSERT_TRUE(testing_util::write_script(engine, "#!/bin/sh\ntrap '' TERM\nwhile :; do sleep 1; done\n"));
    Result<std::unique_ptr<RunHistory>> history =
        RunHistory::open((home.path() + "/history.sqlite").toStdString());
    ASSERT_TRUE(history.ok()) << history.error();
    auto page =
        std::make_unique<AdaptPage>(kSource, home.path() + "/pipelines", [] { return QStringList{}; });
    page->set_local_runner(engine, QString::fromStdString((*history)->path()));
    page->base_edit()->setText(home.path() + "/base");
    page->instruct_edit()->setText(home.path() + "/instruct");
    page->corpus_edit()->setText(home.path() + "/corpus.jsonl");
    ASSERT_TRUE(page->pipeline().ok()) << page->pipeline().error();
    const Status started = page->start();
    ASSERT_TRUE(started.ok()) << started.message();
    pid_t step = 0;
    ASSERT_TRUE(wait_until(
        [&] {
            const Result<std::vector<StoredRun>> rows = (*history)->runs();
            if (!rows.ok() || rows->empty()) return false;
            step = static_cast<pid_t>(std::atoll(rows->front().job_id.c_str()));
            return step > 0;
        },
        20000));
    ASSERT_EQ(::kill(step, 0), 0);

    QElapsedTimer closing;
    closing.start();
    page.reset();
    const qint64 closed_ms = closing.elapsed();
    EXPECT_GE(closed_ms, kClosingGrace.count() - 500);  // asked first, killed after the grace
    EXPECT_LT(closed_ms, kStopGrace.count());           // not a user's stop's grace
    const bool step_gone = ::kill(step, 0) == -1;
    if (!step_gone) ::kill(step, SIGKILL);
    EXPECT_TRUE(step_gone);
    const Result<std::vector<StoredRun>> rows = (*history)->runs();
    ASSERT_TRUE(rows.ok());
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_EQ(rows->front().state, RunState::kCancelled);
}

}  // namespace
}  // namespace slipway::app
