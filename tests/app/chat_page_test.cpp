// The Chat page against the real slipway-engine on a tiny random model (init-model, the demo tokenizer and
// a small chat template), offscreen: a reply streams into the transcript delta by delta, the conversation
// goes on over the same process, Stop ends a long reply, a model without a chat template falls back to
// plain text, and the Runs page's Chat button opens a stored run. With SLIPWAY_SCREENSHOT_DIR set, the page
// is saved mid-reply as chat-this-computer.png. Skipped when no engine binary was built.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTextBrowser>

#include "chat/chat_page.h"
#include "chat/chat_transport.h"
#include "chat/gguf_export.h"
#include "history/run_history.h"
#include "main_window.h"
#include "runs_page.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

using testing_util::wait_until;

struct ChatWindow {
    QString engine = QString::fromUtf8(test_paths::engine_bin());
    testing_util::IsolatedHome home;
    QTemporaryDir models;
    std::unique_ptr<MainWindow> window;
    ChatPage* page = nullptr;
    QStringList deltas;
    int finished = 0;
    QStringList failures;

    ChatWindow() {
        qputenv("SLIPWAY_ENGINE", engine.toUtf8());
        window = std::make_unique<MainWindow>(home.path() + "/history.sqlite");
        window->resize(1100, 760);
        window->show();
        window->show_page(MainWindow::kChatPage);
        page = window->chat_page();
    }
    void watch() {
        QObject::connect(page->session(), &ChatSession::delta, [this](const QString& d) { deltas << d; });
        QObject::connect(page->session(), &ChatSession::reply_finished, [this] { ++finished; });
        QObject::connect(page->session(), &ChatSession::reply_failed,
                         [this](const QString& e) { failures << e; });
    }
    bool say(const QString& text) {
        page->input()->setPlainText(text);
        page->send_button()->click();
        return page->input()->toPlainText().isEmpty();
    }
};

TEST(ChatPage, ARealEngineStreamsTheReplyIntoTheTranscriptAndTheConversationGoesOn) {
    ChatWindow w;
    if (!QFileInfo(w.engine).isExecutable())
        GTEST_SKIP() << "no slipway-engine at " << w.engine.toStdString();
    const QString model = w.models.path() + "/tiny-chat";
    ASSERT_TRUE(testing_util::make_tiny_model(w.engine, model, true));
    ASSERT_TRUE(w.page->choose_model_folder(model).ok());
    w.watch();
    w.page->max_tokens_box()->setValue(48);
    ASSERT_TRUE(w.say("Hello, model! Tell me about fortunes."));
    EXPECT_FALSE(w.page->send_button()->isEnabled());
    // Mid-reply: some deltas are in the transcript and more are coming.
    ASSERT_TRUE(wait_until([&] { return w.deltas.size() >= 6 || w.finished > 0; }, 120000))
        << w.failures.join('\n').toStdString();
    ASSERT_EQ(w.finished, 0) << "the reply ended before it could be seen growing";
    const QString partial = w.deltas.join(QString());
    EXPECT_TRUE(w.page->transcript()->toPlainText().contains(partial.trimmed()))
        << w.page->transcript()->toPlainText().toStdString();
    EXPECT_TRUE(w.page->stop_button()->isEnabled());
    ASSERT_TRUE(wait_until([&] { return w.finished == 1; }, 120000)) << w.failures.join('\n').toStdString();
    const std::vector<ChatMessage>& messages = w.page->session()->messages();
    ASSERT_EQ(messages.size(), 2u);
    EXPECT_EQ(messages[0].content, "Hello, model! Tell me about fortunes.");
    EXPECT_FALSE(messages[1].content.isEmpty());
    EXPECT_TRUE(w.page->transcript()->toPlainText().contains(messages[1].content.trimmed()));
    EXPECT_TRUE(w.page->status_label()->text().contains("tokens/s"))
        << w.page->status_label()->text().toStdString();
    EXPECT_TRUE(w.page->session()->chat_mode());

    // The second turn goes over the same process with the whole conversation.
    int seen = w.deltas.size();
    ASSERT_TRUE(w.say("And another one?"));
    ASSERT_TRUE(wait_until([&] { return w.deltas.size() >= seen + 6 || w.finished == 2; }, 120000));
    if (const QString dir = qEnvironmentVariable("SLIPWAY_SCREENSHOT_DIR");
        !dir.isEmpty() && w.finished == 1) {
        QDir().mkpath(dir);
        EXPECT_TRUE(w.window->grab().save(dir + "/chat-this-computer.png"));
    }
    ASSERT_TRUE(wait_until([&] { return w.finished == 2; }, 120000)) << w.failures.join('\n').toStdString();
    EXPECT_EQ(w.page->session()->messages().size(), 4u);
    EXPECT_TRUE(w.failures.isEmpty()) << w.failures.join('\n').toStdString();

    // Stop ends a long reply: what arrived stays, and the process ends.
    w.page->max_tokens_box()->setValue(4000);
    const int before = w.deltas.size();
    ASSERT_TRUE(w.say("Now talk for a long time."));
    ASSERT_TRUE(wait_until([&] { return w.deltas.size() >= before + 3; }, 120000));
    w.page->stop_button()->click();
    EXPECT_EQ(w.finished, 3);
    EXPECT_EQ(w.page->session()->messages().size(), 6u);
    EXPECT_TRUE(w.page->status_label()->text().contains("Stopped"));
    ASSERT_TRUE(wait_until([&] { return !w.page->session()->transport()->running(); }, 10000));
    EXPECT_TRUE(w.page->send_button()->isEnabled());
}

// Export GGUF... of the Chat page: the model talked to becomes one GGUF file (the real engine's export, its
// summary in the status bar); a model that is not on this computer is refused by name before anything runs.
TEST(ChatPage, ExportGgufWritesTheModelTalkedTo) {
    ChatWindow w;
    if (!QFileInfo(w.engine).isExecutable())
        GTEST_SKIP() << "no slipway-engine at " << w.engine.toStdString();
    EXPECT_FALSE(w.page->export_gguf_button()->isEnabled()) << "nothing chosen yet";
    const QString model = w.models.path() + "/tiny-chat";
    ASSERT_TRUE(testing_util::make_tiny_model(w.engine, model, true));
    ASSERT_TRUE(w.page->choose_model_folder(model).ok());
    EXPECT_TRUE(w.page->export_gguf_button()->isEnabled());
    ChatTarget target = w.page->session()->target();
    const QString out = w.models.path() + "/tiny-chat.gguf";
    bool done = false, ok = false;
    QString message;
    QObject::connect(w.window->gguf_export(), &GgufExport::finished, [&](bool success, const QString& m) {
        done = true;
        ok = success;
        message = m;
    });
    ASSERT_TRUE(w.window->gguf_export()->start(target, out, QStringLiteral("q8_0")).ok());
    ASSERT_TRUE(wait_until([&] { return done; }, 120000));
    EXPECT_TRUE(ok) << message.toStdString();
    EXPECT_TRUE(message.contains(QStringLiteral("q8_0"))) << message.toStdString();
    QFile file(out);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    EXPECT_EQ(file.read(4), QByteArray("GGUF"));

    target.model_dir = QStringLiteral("/cluster/scratch/runs/r1/output");
    const Status refused = w.window->export_gguf(target, QStringLiteral("r1"));
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.message().find("/cluster/scratch/runs/r1/output: no model folder on this computer"),
              std::string::npos)
        << refused.message();
}

TEST(ChatPage, AModelWithoutAChatTemplateIsSentPlainTextAndTheStatusSaysSo) {
    ChatWindow w;
    if (!QFileInfo(w.engine).isExecutable())
        GTEST_SKIP() << "no slipway-engine at " << w.engine.toStdString();
    const QString model = w.models.path() + "/tiny-plain";
    ASSERT_TRUE(testing_util::make_tiny_model(w.engine, model, false));
    ASSERT_TRUE(w.page->choose_model_folder(model).ok());
    w.watch();
    w.page->max_tokens_box()->setValue(8);
    ASSERT_TRUE(w.say("Once upon a time"));
    ASSERT_TRUE(wait_until([&] { return w.finished == 1 || !w.failures.isEmpty(); }, 120000));
    ASSERT_EQ(w.finished, 1) << w.failures.join('\n').toStdString();
    EXPECT_FALSE(w.page->session()->chat_mode());
    EXPECT_TRUE(w.page->status_label()->text().contains("no chat template"))
        << w.page->status_label()->text().toStdString();
}

TEST(ChatPage, TheRunsPagesChatButtonOpensAStoredRunsModel) {
    ChatWindow w;
    if (!QFileInfo(w.engine).isExecutable())
        GTEST_SKIP() << "no slipway-engine at " << w.engine.toStdString();
    const QString model = w.models.path() + "/output";
    ASSERT_TRUE(testing_util::make_tiny_model(w.engine, model, true));
    RunConfig config = testing_util::demo_config();
    config.adapter.method = "full";
    config.training.output_dir = model.toStdString();
    config.tokenizer.path.clear();
    StoredRun record;
    record.name = "finished-demo";
    record.cluster = kLocalCluster;
    record.state = RunState::kCompleted;
    record.config_json = to_json(config).dump();
    const Result<int64_t> id = w.window->history()->add_run(record);
    ASSERT_TRUE(id.ok()) << id.error();
    w.window->runs_page()->reload();
    w.page->reload();
    EXPECT_GE(w.page->run_box()->findData(qint64(*id)), 1);  // completed runs are offered
    w.window->show_page(MainWindow::kRunsPage);
    ASSERT_TRUE(w.window->runs_page()->select_run(*id));
    ASSERT_EQ(w.window->runs_page()->selected_run(), *id);
    QPushButton* chat = nullptr;
    for (QPushButton* b : w.window->runs_page()->findChildren<QPushButton*>())
        if (b->text() == "Chat") chat = b;
    ASSERT_NE(chat, nullptr);
    chat->click();
    EXPECT_EQ(w.window->current_page(), MainWindow::kChatPage);
    ASSERT_NE(w.page->session(), nullptr);
    EXPECT_EQ(w.page->session()->target().model_dir, model);
    EXPECT_TRUE(w.page->session()->target().adapter_dir.isEmpty());
    w.watch();
    w.page->max_tokens_box()->setValue(6);
    ASSERT_TRUE(w.say("Hi"));
    ASSERT_TRUE(wait_until([&] { return w.finished == 1 || !w.failures.isEmpty(); }, 120000));
    EXPECT_EQ(w.finished, 1) << w.failures.join('\n').toStdString();
}

}  // namespace
}  // namespace slipway::app
