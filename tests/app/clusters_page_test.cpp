// GUI tests of the clusters page (offscreen) over a FakeSession: profiles added, edited and removed in
// clusters.json (XDG config), a connection test on the cluster's worker thread showing the login node and
// the sinfo partitions, the editor offered the new cluster as a Submit target, the host-key question.
#include "clusters_page.h"

#include <gtest/gtest.h>

#include <QComboBox>
#include <QLineEdit>
#include <QListWidget>
#include <QTableWidget>

#include "clusters/cluster_dialogs.h"
#include "clusters/remote_browser.h"
#include "editor/run_editor.h"
#include "history/run_history.h"
#include "main_window.h"
#include "monitor/monitor_widget.h"
#include "remote/ssh/fake_session.h"
#include "test_util.h"

namespace slipway::app {
namespace {

remote::ClusterProfile profile(const std::string& name) {
    remote::ClusterProfile p;
    p.name = name;
    p.host = "login.example.org";
    p.user = "researcher";
    return p;
}

Result<std::unique_ptr<remote::Session>> fake_cluster(const remote::ClusterProfile&,
                                                      const remote::SessionCallbacks&) {
    auto fake = std::make_unique<remote::FakeSession>("researcher@login.example.org:22");
    fake->on_exec_prefix("hostname", remote::ExecResult{"login01\n", "", 0});
    fake->on_exec_prefix("sinfo", remote::ExecResult{"gpu01|a100*|idle|64|512000|gpu:a100:8\n"
                                                     "gpu02|a100*|mixed|64|512000|gpu:a100:8\n"
                                                     "cpu01|cpu|idle|128|256000|(null)\n",
                                                     "", 0});
    // What the cluster offers: apptainer, pyxis in srun with enroot, no accounting.
    fake->on_exec_prefix("bash -lc ",
                         remote::ExecResult{"slurm=slurm 24.11.1\nenroot=/usr/bin/enroot\n"
                                            "apptainer=/usr/bin/apptainer\nsingularity=\npyxis=2\n"
                                            "sacct_status=1\nsacct=sacct: error: Slurm accounting "
                                            "storage is disabled\n",
                                            "", 0});
    return std::unique_ptr<remote::Session>(std::move(fake));
}

TEST(ClustersPage, ProfilesTestAndPartitions) {
    testing_util::IsolatedHome home;
    MainWindow window(home.path() + "/history.sqlite");
    ClustersPage* page = window.clusters_page();
    page->set_connector(fake_cluster);
    EXPECT_EQ(page->list()->count(), 1);  // This computer
    EXPECT_TRUE(page->details_text().contains("This computer"));

    ASSERT_TRUE(page->add_profile(profile("hpc")).ok());
    EXPECT_FALSE(page->add_profile(profile("bad name with spaces")).ok());
    ASSERT_EQ(page->list()->count(), 2);
    EXPECT_EQ(page->list()->currentItem()->text(), "hpc");
    EXPECT_TRUE(page->details_text().contains("login.example.org"));
    // The editor can now send runs there, and preview the sbatch script for it.
    EXPECT_EQ(window.editor()->target_box()->itemText(1), "hpc");
    EXPECT_EQ(window.editor()->sbatch_profile_box()->currentText(), "hpc");

    QString tested;
    QObject::connect(page, &ClustersPage::tested, [&](const QString& name, bool ok, const QString& message) {
        tested = name + (ok ? " ok: " : " failed: ") + message;
    });
    page->test_selected();
    ASSERT_TRUE(testing_util::wait_until([&] { return !tested.isEmpty(); }));
    EXPECT_EQ(
        tested,
        "hpc ok: connected to researcher@login.example.org:22 (login01)\nslurm 24.11.1\n"
        "runtimes: pyxis (enroot), apptainer\naccounting: off (sacct: error: Slurm accounting storage is "
        "disabled): ended jobs are followed with squeue and scontrol");
    EXPECT_TRUE(page->details_text().contains("slurm 24.11.1<br>runtimes: pyxis (enroot), apptainer"))
        << page->details_text().toStdString();
    QTableWidget* partitions = page->partitions_table();
    ASSERT_EQ(partitions->rowCount(), 2);
    EXPECT_EQ(partitions->item(0, 0)->text(), "a100 *");
    EXPECT_EQ(partitions->item(0, 1)->text(), "2");
    EXPECT_EQ(partitions->item(0, 3)->text(), "16");
    EXPECT_EQ(partitions->item(0, 4)->text(), "a100");
    EXPECT_EQ(partitions->item(1, 0)->text(), "cpu");
    // The editor's Resources page shows what the cluster has.
    EXPECT_TRUE(window.editor()->derived_text().contains(
        "Cluster hpc (sinfo): a100 (default): 2 nodes, 1 idle, 16 GPUs a100"))
        << window.editor()->derived_text().toStdString();

    // A second start of the app reads the same clusters.json.
    ASSERT_TRUE(page->remove_profile("hpc").ok());
    EXPECT_EQ(page->list()->count(), 1);
    EXPECT_EQ(window.editor()->target_box()->count(), 1);
}

std::string line(double loss, int step) {
    return ":::MLLOG {\"namespace\": \"\", \"time_ms\": " + std::to_string(1000 + step) +
           ", \"event_type\": \"POINT_IN_TIME\", \"key\": \"train_loss\", \"value\": " +
           std::to_string(loss) + ", \"metadata\": {\"samples_count\": " + std::to_string(step * 8) +
           ", \"step_num\": " + std::to_string(step) + "}}\n";
}

TEST(ClustersPage, AClusterRunResumesFromTheStoredOffsetOverSsh) {
    testing_util::IsolatedHome home;
    // The job wrote steps 1-3 (the history holds 1-2 and the offset after them), then step 4 while the app
    // was closed.
    const std::string stored = "0: starting\n" + line(3.0, 1) + line(2.5, 2);
    const std::string log = stored + line(2.2, 3) + line(2.0, 4);
    MainWindow window(home.path() + "/history.sqlite");
    window.clusters_page()->set_connector([log](const remote::ClusterProfile&,
                                                const remote::SessionCallbacks&) {
        auto fake = std::make_unique<remote::FakeSession>();
        fake->put_file("/scratch/runs/r1/slurm-77.out", log);
        return Result<std::unique_ptr<remote::Session>>(std::unique_ptr<remote::Session>(std::move(fake)));
    });
    ASSERT_TRUE(window.clusters_page()->add_profile(profile("hpc")).ok());
    StoredRun record;
    record.name = "r1";
    record.cluster = "hpc";
    record.job_id = "77";
    record.state = RunState::kRunning;
    record.slurm_state = "RUNNING";
    record.log_path = "/scratch/runs/r1/slurm-77.out";
    const int64_t id = *window.history()->add_run(record);
    RunMetrics before;
    std::vector<MetricPointRow> rows;
    for (int step = 1; step <= 2; ++step) {
        MllogEvent e;
        e.key = "train_loss";
        e.value = 3.5 - 0.5 * step;
        e.metadata = {{"samples_count", step * 8}, {"step_num", step}};
        before.add(e);
        rows.emplace_back(Metric::kTrainLoss, before.points(Metric::kTrainLoss).back());
    }
    ASSERT_TRUE(window.history()->append(id, rows, before, stored.size()).ok());

    const Result<int> key = window.resume_history_run(id);
    ASSERT_TRUE(key.ok()) << key.error();
    const TrackedRun* run = window.monitor()->run(*key);
    ASSERT_TRUE(
        testing_util::wait_until([&] { return run->metrics.points(Metric::kTrainLoss).size() == 4; }));
    std::vector<double> steps;
    for (const MetricSample& p : run->metrics.points(Metric::kTrainLoss))
        steps.push_back(p.step);
    EXPECT_EQ(steps, (std::vector<double>{1, 2, 3, 4}));  // nothing lost, nothing twice
    ASSERT_TRUE(testing_util::wait_until([&] { return *window.history()->point_count(id) == 4; }));
    EXPECT_EQ(window.history()->run(id)->log_offset, log.size());
}

TEST(RemoteBrowser, ListsClusterFoldersAndPicksAFile) {
    testing_util::IsolatedHome home;
    ClusterSession session(
        profile("hpc"), {}, [](const remote::ClusterProfile&, const remote::SessionCallbacks&) {
            auto fake = std::make_unique<remote::FakeSession>();
            fake->on_exec_prefix("printf '%s' \"$HOME\"", remote::ExecResult{"/home/u", "", 0});
            fake->put_file("/home/u/.bashrc", "");
            fake->put_dir("/home/u/data");
            fake->put_file("/home/u/models/config.json", "{}");
            fake->put_file("/home/u/models/model.safetensors", "");
            fake->put_dir("/scratch/u");
            fake->put_symlink("/home/u/scratch", "/scratch/u");  // a link to a folder is a folder
            fake->put_symlink("/home/u/dangling", "/nowhere");
            return Result<std::unique_ptr<remote::Session>>(
                std::unique_ptr<remote::Session>(std::move(fake)));
        });
    RemoteBrowser browser(&session, false, QString());
    ASSERT_TRUE(testing_util::wait_until([&] { return browser.entries()->count() == 5; }));
    EXPECT_EQ(browser.current_dir(), "/home/u");
    QStringList shown;
    for (int i = 0; i < browser.entries()->count(); ++i)
        shown << browser.entries()->item(i)->text();
    EXPECT_EQ(shown, (QStringList{".bashrc", "dangling", "data/", "models/", "scratch/"}));
    emit browser.entries()->itemDoubleClicked(browser.entries()->item(3));  // models/
    ASSERT_TRUE(testing_util::wait_until([&] { return browser.current_dir() == "/home/u/models"; }));
    ASSERT_EQ(browser.entries()->count(), 2);
    emit browser.entries()->itemDoubleClicked(browser.entries()->item(0));
    EXPECT_EQ(browser.chosen(), "/home/u/models/config.json");
    EXPECT_EQ(browser.result(), QDialog::Accepted);
}

TEST(ClustersPage, ARemoteSlurmLogIsPlottedAndStopsWhenRemoved) {
    testing_util::IsolatedHome home;
    MainWindow window(home.path() + "/history.sqlite");
    window.clusters_page()->set_connector([](const remote::ClusterProfile&, const remote::SessionCallbacks&) {
        auto fake = std::make_unique<remote::FakeSession>();
        fake->put_file("/scratch/slurm-12.out", "0: hello\n" + line(3.0, 1) + line(2.0, 2) + "1: bye");
        return Result<std::unique_ptr<remote::Session>>(std::unique_ptr<remote::Session>(std::move(fake)));
    });
    ASSERT_TRUE(window.clusters_page()->add_profile(profile("hpc")).ok());
    const Result<int> key = window.open_remote_log("hpc", "/scratch/slurm-12.out");
    ASSERT_TRUE(key.ok()) << key.error();
    const TrackedRun* run = window.monitor()->run(*key);
    ASSERT_TRUE(
        testing_util::wait_until([&] { return run->metrics.points(Metric::kTrainLoss).size() == 2; }));
    EXPECT_EQ(run->name, "slurm-12.out @ hpc");
    EXPECT_TRUE(window.monitor()->view(*key)->lines.size() >= 3);
    window.monitor()->remove_run(*key);
    EXPECT_EQ(window.monitor()->run(*key), nullptr);
    EXPECT_FALSE(window.open_remote_log("nowhere", "/x").ok());
}

// A FakeSession cluster whose only file is `path` with `content`.
ClusterSession::Connector cluster_with_file(const std::string& path, const std::string& content) {
    return [path, content](const remote::ClusterProfile&, const remote::SessionCallbacks&) {
        auto fake = std::make_unique<remote::FakeSession>();
        fake->put_file(path, content);
        return Result<std::unique_ptr<remote::Session>>(std::unique_ptr<remote::Session>(std::move(fake)));
    };
}

TEST(ClustersPage, ARemoteLogIsStoredOnceAndResumedFromItsOffset) {
    testing_util::IsolatedHome home;
    const QString db = home.path() + "/history.sqlite";
    const std::string path = "/scratch/slurm-12.out";
    const std::string first = "0: hello\n" + line(3.0, 1) + line(2.0, 2);
    int64_t id = 0;
    {
        MainWindow window(db);
        window.clusters_page()->set_connector(cluster_with_file(path, first + "1: still writ"));
        ASSERT_TRUE(window.clusters_page()->add_profile(profile("hpc")).ok());
        const Result<int> key = window.open_remote_log("hpc", QString::fromStdString(path));
        ASSERT_TRUE(key.ok()) << key.error();
        id = window.monitor()->run(*key)->store_id;
        ASSERT_NE(id, 0);
        ASSERT_TRUE(testing_util::wait_until([&] { return *window.history()->point_count(id) == 2; }));
        const StoredRun stored = *window.history()->run(id);
        EXPECT_EQ(stored.cluster, "hpc");
        EXPECT_EQ(stored.log_path, path);
        EXPECT_EQ(stored.state, RunState::kFollowing);
        EXPECT_EQ(stored.log_offset, first.size());  // the unfinished last line is read later

        // Opened again: the same run, shown once, its points not stored twice.
        const Result<int> again = window.open_remote_log("hpc", QString::fromStdString(path));
        ASSERT_TRUE(again.ok());
        EXPECT_EQ(window.monitor()->run(*key), nullptr);
        EXPECT_EQ(window.monitor()->run(*again)->store_id, id);
        EXPECT_EQ(window.monitor()->run(*again)->metrics.points(Metric::kTrainLoss).size(), 2u);
        testing_util::wait_until([] { return false; }, 600);  // the follower's first read
        EXPECT_EQ(*window.history()->point_count(id), 2);
        EXPECT_EQ(window.monitor()->run(*again)->metrics.points(Metric::kTrainLoss).size(), 2u);
        EXPECT_EQ(window.history()->runs()->size(), 1u);
    }
    // After a restart the job has written step 3 and its run_stop: following resumes at the stored offset
    // (reading from 0 would plot steps 1 and 2 twice).
    const std::string stop =
        ":::MLLOG {\"namespace\": \"\", \"time_ms\": 2000, \"event_type\": "
        "\"INTERVAL_END\", \"key\": \"run_stop\", \"value\": null, \"metadata\": "
        "{\"status\": \"success\"}}\n";
    MainWindow window(db);
    window.clusters_page()->set_connector(cluster_with_file(path, first + line(1.5, 3) + stop));
    EXPECT_EQ(window.history()->run(id)->state, RunState::kIncomplete);  // nobody followed it while closed
    const Result<int> key = window.resume_history_run(id);
    ASSERT_TRUE(key.ok()) << key.error();
    const TrackedRun* run = window.monitor()->run(*key);
    ASSERT_TRUE(
        testing_util::wait_until([&] { return window.history()->run(id)->state == RunState::kCompleted; }));
    std::vector<double> steps;
    for (const MetricSample& p : run->metrics.points(Metric::kTrainLoss))
        steps.push_back(p.step);
    EXPECT_EQ(steps, (std::vector<double>{1, 2, 3}));
    EXPECT_EQ(*window.history()->point_count(id), 3);
    EXPECT_EQ(window.history()->runs()->size(), 1u);
}

TEST(ClustersPage, HostKeyQuestionShowsTheFingerprint) {
    remote::HostKeyInfo key;
    key.host = "[127.0.0.1]:2222";
    key.port = 2222;
    key.key_type = "ssh-ed25519";
    key.sha256_fingerprint = "SHA256:abcDEF123";
    key.known_hosts_file = "/home/u/.ssh/known_hosts";
    const QString q = host_key_question(key);
    EXPECT_TRUE(q.contains("SHA256:abcDEF123"));
    EXPECT_TRUE(q.contains("ssh-ed25519"));
    EXPECT_TRUE(q.contains("[127.0.0.1]:2222"));
    EXPECT_TRUE(q.contains("/home/u/.ssh/known_hosts"));
}

TEST(ClustersPage, ProfileDialogRefusesAnInvalidProfile) {
    ProfileDialog dialog(profile("ok-name"));
    ASSERT_TRUE(dialog.profile().ok());
    dialog.host_edit()->setText("");
    const Result<remote::ClusterProfile> p = dialog.profile();
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().find("host"), std::string::npos) << p.error();
}

// The runtime, the engine's source and the setup lines come back as edited; unset, the source shows what
// the profile means (the image's under a runtime).
TEST(ClustersPage, ProfileDialogKeepsTheEnvironmentAndTheEnginesSource) {
    remote::ClusterProfile apptainer = profile("hpc");
    apptainer.container = remote::ContainerMode::kApptainer;
    apptainer.engine_source = remote::EngineSource::kBuild;
    apptainer.env_setup = {"module load apptainer/1.3", "export OMP_NUM_THREADS=8"};
    ProfileDialog dialog(apptainer);
    const Result<remote::ClusterProfile> back = dialog.profile();
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_EQ(back->container, remote::ContainerMode::kApptainer);
    EXPECT_EQ(back->engine_source, remote::EngineSource::kBuild);
    EXPECT_EQ(back->env_setup, apptainer.env_setup);

    remote::ClusterProfile pyxis = profile("old");
    pyxis.container = remote::ContainerMode::kPyxis;
    const Result<remote::ClusterProfile> unset = ProfileDialog(pyxis).profile();
    ASSERT_TRUE(unset.ok()) << unset.error();
    EXPECT_EQ(unset->engine_source, remote::EngineSource::kImage);
    EXPECT_TRUE(unset->env_setup.empty());
}

}  // namespace
}  // namespace slipway::app
