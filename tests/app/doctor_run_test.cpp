// GUI test (offscreen) of Run doctor on the Clusters page's Health view over a FakeSession cluster: the
// inputs start from the profile, a healthy run streams its progress and ends with the saved report drawn;
// a refused connection, a refused host key and a job Slurm refuses each say what failed; Cancel on a job
// that never ends cancels it with scancel; a second Run cancels the first and its output is dropped.
#include <gtest/gtest.h>

#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>

#include <memory>
#include <mutex>

#include "clusters/doctor_job.h"
#include "clusters/health_view.h"
#include "clusters_page.h"
#include "main_window.h"
#include "remote/ssh/fake_session.h"
#include "test_util.h"

namespace slipway::app {
namespace {

// Every command the fake clusters ran (their sessions live on the doctor's worker thread).
struct CommandLog {
    std::mutex mutex;
    std::vector<std::string> commands;
    void add(const std::string& c) {
        const std::lock_guard<std::mutex> lock(mutex);
        commands.push_back(c);
    }
    int count(const std::string& part) {
        const std::lock_guard<std::mutex> lock(mutex);
        int n = 0;
        for (const std::string& c : commands)
            n += c.find(part) != std::string::npos ? 1 : 0;
        return n;
    }
};

enum class Job { kHealthy, kNeverEnds, kRefused };

// A cluster with one node `localhost` whose doctor job ends healthy, never ends, or is refused by sbatch.
ClusterSession::Connector fake_cluster(std::shared_ptr<CommandLog> log, Job job) {
    return [log, job](const remote::ClusterProfile&, const remote::SessionCallbacks&) {
        auto fake = std::make_unique<remote::FakeSession>("me@login.example.org:22");
        remote::FakeSession* raw = fake.get();
        fake->set_exec_handler([log, job, raw](const std::string& command) -> Result<remote::ExecResult> {
            log->add(command);
            if (command.rfind("printf '%s' \"$HOME\"", 0) == 0) return remote::ExecResult{"/home/me", "", 0};
            if (command.rfind("sinfo", 0) == 0)
                return remote::ExecResult{"localhost|debug*|idle|2|1000|(null)\n", "", 0};
            if (command.find("sbatch --parsable") != std::string::npos) {
                if (job == Job::kRefused)
                    return remote::ExecResult{
                        "", "sbatch: error: Batch job submission failed: Invalid partition name specified\n",
                        1};
                // The job's output, where it writes it: "cd DIR && sbatch ...".
                const std::string dir = command.substr(3, command.find(" && ") - 3);
                raw->put_file(dir + "/doctor-77.out",
                              "SLIPWAY-DOCTOR - job 77 nodes localhost master localhost:20077\n"
                              "SLIPWAY-DOCTOR localhost begin localhost\n"
                              "SLIPWAY-DOCTOR localhost gpu-none no nvidia-smi\n"
                              "SLIPWAY-DOCTOR localhost intra-json {\"backend\":\"gloo\",\"world_size\":2,"
                              "\"results\":[{\"bytes\":1,\"busbw_gbps\":1.2,\"correct\":true}]}\n"
                              "SLIPWAY-DOCTOR localhost rendezvous ok localhost:20077 3 ms\n");
                return remote::ExecResult{"77\n", "", 0};
            }
            if (command.rfind("squeue", 0) == 0)
                return remote::ExecResult{job == Job::kNeverEnds ? "77|RUNNING|None|1:00|1|localhost\n"
                                                                 : "77|COMPLETED|None|0:05|1|localhost\n",
                                          "", 0};
            if (command.rfind("scontrol show job", 0) == 0)
                return remote::ExecResult{
                    "JobId=77 JobName=slipway-doctor\n   JobState=COMPLETED Reason=None\n"
                    "   ExitCode=0:0\n   NodeList=localhost\n",
                    "", 0};
            if (command.rfind("scancel", 0) == 0) return remote::ExecResult{"", "", 0};
            return Status::Error("unexpected command: " + command);
        });
        return Result<std::unique_ptr<remote::Session>>(std::unique_ptr<remote::Session>(std::move(fake)));
    };
}

class DoctorRun : public ::testing::Test {
protected:
    void SetUp() override {
        window_ = std::make_unique<MainWindow>(home_.path() + "/history.sqlite");
        page_ = window_->clusters_page();
        for (const char* name : {"hpc", "other"}) {
            remote::ClusterProfile p;
            p.name = name;
            p.host = "login.example.org";
            p.default_partition = "debug";
            p.container = remote::ContainerMode::kPyxis;  // nothing to upload: the image holds the engine
            ASSERT_TRUE(page_->add_profile(p).ok());
        }
        page_->select(QStringLiteral("hpc"));
        health_ = page_->health_view();
        health_->image_edit()->setText(QStringLiteral("/images/slipway.sqsh"));
    }

    // Presses Run and waits for the job to end.
    void run_to_end() {
        ASSERT_TRUE(health_->run_button()->isEnabled());
        health_->run_button()->click();
        ASSERT_NE(page_->doctor_job(), nullptr);
        EXPECT_FALSE(health_->run_button()->isEnabled());
        EXPECT_TRUE(health_->cancel_button()->isEnabled());
        ASSERT_TRUE(testing_util::wait_until([&] { return !page_->doctor_job()->running(); }, 20'000));
        EXPECT_TRUE(health_->run_button()->isEnabled());
        EXPECT_FALSE(health_->cancel_button()->isEnabled());
    }

    QString result() const { return health_->result_label()->text(); }
    QString output() const { return health_->output_view()->toPlainText(); }

    testing_util::IsolatedHome home_;
    std::unique_ptr<MainWindow> window_;
    ClustersPage* page_ = nullptr;
    HealthView* health_ = nullptr;
    std::shared_ptr<CommandLog> log_ = std::make_shared<CommandLog>();
};

TEST_F(DoctorRun, HealthyRunStreamsAndShowsTheSavedReport) {
    EXPECT_EQ(health_->partition_edit()->text(), "debug");  // the profile's, as the CLI's default
    EXPECT_TRUE(health_->nodelist_edit()->text().isEmpty());
    EXPECT_EQ(health_->deadline_box()->value(), 0);
    EXPECT_TRUE(health_->image_edit()->isVisibleTo(health_));
    health_->nodelist_edit()->setText(QStringLiteral("localhost"));
    page_->set_connector(fake_cluster(log_, Job::kHealthy));
    run_to_end();
    EXPECT_TRUE(output().contains("connecting to login.example.org")) << output().toStdString();
    EXPECT_TRUE(output().contains("submitted doctor job 77")) << output().toStdString();
    EXPECT_TRUE(output().contains("job 77 COMPLETED")) << output().toStdString();
    EXPECT_TRUE(output().contains("report saved to")) << output().toStdString();
    EXPECT_EQ(result().toStdString(), "Every node ok (job 77).");
    ASSERT_EQ(health_->table()->rowCount(), 1);
    EXPECT_EQ(health_->table()->item(0, 0)->text(), "localhost");
    EXPECT_EQ(health_->table()->item(0, 1)->text(), "ok");
    EXPECT_TRUE(remote::DoctorReportStore().load("hpc").ok());
    EXPECT_EQ(log_->count("sinfo"), 1);              // the node count from sinfo, as the CLI does
    EXPECT_EQ(log_->count("--partition=debug"), 0);  // the job script is uploaded, not run as a command
}

TEST_F(DoctorRun, FailuresNameWhatFailed) {
    page_->set_connector([](const remote::ClusterProfile&, const remote::SessionCallbacks&) {
        return Result<std::unique_ptr<remote::Session>>(
            Status::Error(StatusCode::kUnavailable, "connect to login.example.org:22: Connection refused"));
    });
    run_to_end();
    EXPECT_EQ(result(),
              "Could not connect to login.example.org: connect to login.example.org:22: Connection refused");
    EXPECT_TRUE(health_->summary_text().contains("No health report yet"));

    page_->set_connector([](const remote::ClusterProfile&, const remote::SessionCallbacks&) {
        return Result<std::unique_ptr<remote::Session>>(
            Status::Error(StatusCode::kHostKeyRejected,
                          "the host key of login.example.org changed: refused (known_hosts)"));
    });
    run_to_end();
    EXPECT_TRUE(result().contains("host key of login.example.org changed")) << result().toStdString();

    page_->set_connector(fake_cluster(log_, Job::kRefused));
    run_to_end();
    EXPECT_TRUE(
        result().contains("sbatch --parsable doctor.sbatch` exited 1: sbatch: error: Batch job "
                          "submission failed: Invalid partition name specified"))
        << result().toStdString();
    EXPECT_NE(health_->result_label()->styleSheet(), QString());
    EXPECT_FALSE(remote::DoctorReportStore().load("hpc").ok());
}

TEST_F(DoctorRun, CancelCancelsTheJobThatNeverEnds) {
    page_->set_connector(fake_cluster(log_, Job::kNeverEnds));
    health_->run_button()->click();
    ASSERT_TRUE(testing_util::wait_until([&] { return output().contains("job 77 RUNNING"); }, 10'000));
    health_->cancel_button()->click();
    ASSERT_TRUE(testing_util::wait_until([&] { return !page_->doctor_job()->running(); }, 10'000));
    EXPECT_EQ(log_->count("scancel 77"), 1);
    EXPECT_TRUE(result().startsWith("Cancelled")) << result().toStdString();
    EXPECT_TRUE(health_->run_button()->isEnabled());
    EXPECT_FALSE(remote::DoctorReportStore().load("hpc").ok());  // a user's stop judges nothing

    // The deadline cancels it too, and that run is judged on what it printed.
    health_->deadline_box()->setValue(1);
    run_to_end();
    EXPECT_EQ(log_->count("scancel 77"), 2);
    EXPECT_TRUE(output().contains("cancelled")) << output().toStdString();
    EXPECT_EQ(health_->table()->rowCount(), 1);
    EXPECT_TRUE(health_->summary_text().contains("did not finish within 1 s"))
        << health_->summary_text().toStdString();
}

TEST_F(DoctorRun, AnotherClusterShowsItsOwnAndASecondRunCancelsTheFirst) {
    page_->set_connector(fake_cluster(log_, Job::kNeverEnds));
    health_->run_button()->click();
    ASSERT_TRUE(testing_util::wait_until([&] { return output().contains("job 77 RUNNING"); }, 10'000));

    // Another cluster shown: its own inputs and no output; back again: the running doctor's progress.
    health_->partition_edit()->setText(QStringLiteral("typed"));
    page_->select(QStringLiteral("other"));
    EXPECT_TRUE(output().isEmpty());
    EXPECT_TRUE(health_->run_button()->isEnabled());
    EXPECT_EQ(health_->partition_edit()->text(), "debug");
    page_->select(QStringLiteral("hpc"));
    EXPECT_TRUE(output().contains("job 77 RUNNING"));
    EXPECT_FALSE(health_->run_button()->isEnabled());
    EXPECT_TRUE(health_->cancel_button()->isEnabled());

    // Run on the other cluster: the first job is cancelled and what it still says is dropped.
    page_->select(QStringLiteral("other"));
    health_->image_edit()->setText(QStringLiteral("/images/slipway.sqsh"));
    page_->set_connector(fake_cluster(log_, Job::kHealthy));
    run_to_end();
    EXPECT_TRUE(testing_util::wait_until([&] { return log_->count("scancel 77") == 1; }, 10'000));
    EXPECT_EQ(result().toStdString(), "Every node ok (job 77).");
    EXPECT_FALSE(output().contains("still RUNNING")) << output().toStdString();
    EXPECT_TRUE(remote::DoctorReportStore().load("other").ok());
    EXPECT_FALSE(remote::DoctorReportStore().load("hpc").ok());
    page_->select(QStringLiteral("hpc"));
    EXPECT_TRUE(output().isEmpty());
    EXPECT_TRUE(health_->run_button()->isEnabled());
}

}  // namespace
}  // namespace slipway::app
