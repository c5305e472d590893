// The Chat page against the local test cluster (tests/cluster: real sshd + Slurm on 127.0.0.1; label
// cluster): a completed cluster run (its folder holding the deployed engine and a tiny model with a chat
// template) is opened from the Runs page's Chat button; the reply streams back from `srun slipway-engine
// generate` over the cluster's SSH session while its job is in squeue, and Stop ends that job. With
// SLIPWAY_SCREENSHOT_DIR set, the page is saved mid-reply as chat-local-slurm.png. Skipped when the cluster
// or the engine is absent.
#include <gtest/gtest.h>

#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStatusBar>
#include <QTextBrowser>

#include "chat/chat_page.h"
#include "chat/chat_transport.h"
#include "clusters_page.h"
#include "history/run_history.h"
#include "main_window.h"
#include "remote/ssh/libssh_session.h"
#include "runs_page.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

using testing_util::wait_until;

TEST(ChatOnTheLocalCluster, ARunsModelAnswersThroughSrunAndStopEndsTheJob) {
    const QString engine = QString::fromUtf8(test_paths::engine_bin());
    if (!QFileInfo(engine).isExecutable()) GTEST_SKIP() << "no slipway-engine at " << engine.toStdString();
    std::map<QString, QString> env = testing_util::use_local_cluster(engine);
    if (env.empty()) GTEST_SKIP() << "no local cluster (SLIPWAY_CLUSTER_ENV)";
    testing_util::IsolatedHome home;
    const remote::ClusterProfile profile =
        testing_util::local_cluster_profile(env, env["SLIPWAY_REMOTE_DIR"] + "/chat-e2e");

    // A finished run's folder on the cluster, as deploy leaves it: the engine and the output model.
    QTemporaryDir local;
    ASSERT_TRUE(testing_util::make_tiny_model(engine, local.path() + "/output", true));
    remote::ConnectOptions options;
    options.host = profile.host;
    options.port = *profile.port;
    options.user = profile.user;
    options.identity_files = {profile.identity_file};
    options.known_hosts_file = env["SLIPWAY_SSH_KNOWN_HOSTS"].toStdString();
    options.ssh_config_file = "none";
    Result<std::unique_ptr<remote::Session>> ssh = remote::connect_ssh(options, {});
    ASSERT_TRUE(ssh.ok()) << ssh.error();
    remote::Session& s = **ssh;
    const std::string run_dir = env["SLIPWAY_REMOTE_DIR"].toStdString() + "/chat-e2e/runs/chat-e2e-1";
    ASSERT_TRUE(s.mkdir_p(run_dir + "/output").ok());
    ASSERT_TRUE(s.upload_file(engine.toStdString(), run_dir + "/slipway-engine", 0755).ok());
    for (const char* file : {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"}) {
        const Status up =
            s.upload_file(local.path().toStdString() + "/output/" + file, run_dir + "/output/" + file, 0644);
        ASSERT_TRUE(up.ok()) << up.message();
    }
    auto jobs = [&] {
        auto r = s.exec("squeue -h -u \"$(id -un)\" -n chat-e2e-chat -o %i", std::chrono::seconds(20));
        return r.ok() ? QString::fromStdString(r->out).trimmed() : QStringLiteral("squeue failed");
    };

    MainWindow window(home.path() + "/history.sqlite");
    window.resize(1100, 760);
    window.show();
    ASSERT_TRUE(window.clusters_page()->add_profile(profile).ok());
    RunConfig config = testing_util::demo_config();
    config.name = "chat-e2e";
    config.training.output_dir = run_dir + "/output";
    config.tokenizer.path.clear();
    config.slurm.time = "00:05:00";
    StoredRun record;
    record.name = "chat-e2e";
    record.cluster = profile.name;
    record.state = RunState::kCompleted;
    record.remote_dir = run_dir;
    record.config_json = to_json(config).dump();
    const Result<int64_t> id = window.history()->add_run(record);
    ASSERT_TRUE(id.ok()) << id.error();
    window.runs_page()->reload();
    ASSERT_TRUE(window.runs_page()->select_run(*id));
    for (QPushButton* b : window.runs_page()->findChildren<QPushButton*>())
        if (b->text() == "Chat") b->click();
    ChatPage* page = window.chat_page();
    ASSERT_EQ(window.current_page(), MainWindow::kChatPage);
    ASSERT_NE(page->session(), nullptr) << window.statusBar()->currentMessage().toStdString();
    EXPECT_EQ(page->session()->transport()->where(), "cluster local-slurm (srun)");

    QStringList deltas, failures;
    int finished = 0;
    QObject::connect(page->session(), &ChatSession::delta, [&](const QString& d) { deltas << d; });
    QObject::connect(page->session(), &ChatSession::reply_finished, [&] { ++finished; });
    QObject::connect(page->session(), &ChatSession::reply_failed, [&](const QString& e) { failures << e; });
    page->max_tokens_box()->setValue(64);
    page->input()->setPlainText("Hello over srun! What do the fortunes say?");
    page->send_button()->click();
    ASSERT_TRUE(
        wait_until([&] { return deltas.size() >= 6 || finished > 0 || !failures.isEmpty(); }, 180'000))
        << page->status_label()->text().toStdString();
    ASSERT_TRUE(failures.isEmpty()) << failures.join('\n').toStdString();
    ASSERT_EQ(finished, 0) << "the reply ended before it could be seen growing";
    // Mid-reply: the generator is a Slurm job of the test user.
    EXPECT_FALSE(jobs().isEmpty()) << "no chat-e2e-chat job in squeue while the reply streams";
    EXPECT_TRUE(page->transcript()->toPlainText().contains(deltas.join(QString()).trimmed()));
    if (const QString dir = qEnvironmentVariable("SLIPWAY_SCREENSHOT_DIR"); !dir.isEmpty()) {
        QDir().mkpath(dir);
        EXPECT_TRUE(window.grab().save(dir + "/chat-local-slurm.png"));
    }
    ASSERT_TRUE(wait_until([&] { return finished == 1 || !failures.isEmpty(); }, 120'000));
    ASSERT_EQ(finished, 1) << failures.join('\n').toStdString();
    EXPECT_TRUE(page->status_label()->text().contains("tokens/s"))
        << page->status_label()->text().toStdString();
    EXPECT_TRUE(page->session()->chat_mode());

    // A long second reply over the same job, stopped: the srun job ends.
    page->max_tokens_box()->setValue(4000);
    page->input()->setPlainText("Now talk for a long time.");
    page->send_button()->click();
    const int before = deltas.size();
    ASSERT_TRUE(wait_until([&] { return deltas.size() >= before + 3 || !failures.isEmpty(); }, 180'000))
        << failures.join('\n').toStdString();
    ASSERT_TRUE(failures.isEmpty()) << failures.join('\n').toStdString();
    EXPECT_FALSE(jobs().isEmpty());
    page->stop_button()->click();
    EXPECT_EQ(page->session()->messages().size(), 4u);
    ASSERT_TRUE(wait_until([&] { return !page->session()->transport()->running(); }, 20'000));
    EXPECT_TRUE(wait_until([&] { return jobs().isEmpty(); }, 30'000))
        << "job still queued: " << jobs().toStdString();
    qunsetenv("SLIPWAY_ENGINE");
    qunsetenv("SLIPWAY_KNOWN_HOSTS");
}

}  // namespace
}  // namespace slipway::app
