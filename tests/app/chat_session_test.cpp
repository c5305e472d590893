// The chat client without a model: its protocol lines, its command line and request lines, and a
// conversation against tests/app/fake_generator.sh, with the generator's faults (a crash mid-reply, a
// malformed line, an {"error"} answer, a model without a chat template), and the cluster transport over a
// FakeSession (srun's command, a connection dropped mid-reply, Stop).
#include <gtest/gtest.h>

#include <QFile>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>

#include "chat/chat_session.h"
#include "chat/chat_transport.h"
#include "chat/remote_chat_transport.h"
#include "chat/run_chat_target.h"
#include "clusters/cluster_session.h"
#include "remote/slurm/chat_srun.h"
#include "remote/ssh/fake_session.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

using testing_util::wait_until;

TEST(ChatProtocol, ParsesDeltaFinalErrorAndMalformedLines) {
    GeneratorLine d = parse_generator_line(R"({"delta": "Hi \u00e9"})");
    EXPECT_EQ(d.kind, GeneratorLine::Kind::kDelta);
    EXPECT_EQ(d.text, QString::fromUtf8("Hi é"));
    GeneratorLine f = parse_generator_line(
        R"({"ids": [5], "text": "Hi.", "finish_reason": "length", "prompt_tokens": 9, "new_tokens": 1,)"
        R"( "tokens_per_s": 3.5})");
    EXPECT_EQ(f.kind, GeneratorLine::Kind::kFinal);
    EXPECT_EQ(f.text, "Hi.");
    EXPECT_EQ(f.stats.finish_reason, "length");
    EXPECT_EQ(f.stats.prompt_tokens, 9);
    EXPECT_EQ(f.stats.new_tokens, 1);
    EXPECT_DOUBLE_EQ(f.stats.tokens_per_s, 3.5);
    EXPECT_EQ(parse_generator_line(R"({"error": "stdin:2: bad"})").kind, GeneratorLine::Kind::kError);
    for (const char* bad : {"not json", "[1, 2]", R"({"delta": 5})", R"({"text": "no reason"})", "{"}) {
        const GeneratorLine m = parse_generator_line(bad);
        EXPECT_EQ(m.kind, GeneratorLine::Kind::kMalformed) << bad;
        EXPECT_EQ(m.text, bad);
    }
}

TEST(ChatProtocol, CommandLineAndRequests) {
    ChatTarget t{"/m/base", "/r/output", "/r/tok.json", "run"};
    ChatSettings s;
    s.max_new_tokens = 64;
    s.temperature = 0;
    s.top_p = 0.5;
    EXPECT_EQ(generate_arguments(t, s, true),
              (QStringList{"generate", "--model", "/m/base", "--adapter", "/r/output", "--tokenizer",
                           "/r/tok.json", "--prompts", "-", "--stream", "--chat", "--max-new-tokens", "64",
                           "--temperature", "0", "--top-p", "0.5", "--top-k", "0"}));
    EXPECT_FALSE(generate_arguments(ChatTarget{"/m", {}, {}, {}}, s, false).contains("--chat"));
    EXPECT_FALSE(generate_arguments(ChatTarget{"/m", {}, {}, {}}, s, false).contains("--adapter"));

    const std::vector<ChatMessage> conversation = {
        {"user", "Hi \"you\"\n"}, {"assistant", "Hello."}, {"user", "Again"}};
    const QByteArray chat = request_line(conversation, "Be brief.", true);
    ASSERT_TRUE(chat.endsWith('\n'));
    EXPECT_EQ(chat.count('\n'), 1);  // one line, whatever the messages hold
    const nlohmann::json j = nlohmann::json::parse(chat.toStdString());
    ASSERT_EQ(j["messages"].size(), 4u);
    EXPECT_EQ(j["messages"][0], (nlohmann::json{{"role", "system"}, {"content", "Be brief."}}));
    EXPECT_EQ(j["messages"][1]["content"], "Hi \"you\"\n");
    EXPECT_EQ(j["messages"][3], (nlohmann::json{{"role", "user"}, {"content", "Again"}}));
    EXPECT_EQ(nlohmann::json::parse(request_line(conversation, "", false).toStdString()),
              (nlohmann::json{{"text", "Again"}}));
}

TEST(ChatTarget, ALoraRunTalksThroughItsBaseWithItsAdapterAFullRunThroughItsOutput) {
    RunConfig config;
    config.model.path = "/models/base";
    config.tokenizer.path = "/models/base/tokenizer.json";
    config.training.output_dir = "/runs/r1/output";
    config.adapter.method = "lora";
    StoredRun run;
    run.name = "r1";
    run.config_json = to_json(config).dump();
    Result<ChatTarget> lora = chat_target_of_run(run);
    ASSERT_TRUE(lora.ok()) << lora.error();
    EXPECT_EQ(lora->model_dir, "/models/base");
    EXPECT_EQ(lora->adapter_dir, "/runs/r1/output");
    EXPECT_EQ(lora->tokenizer, "/models/base/tokenizer.json");
    EXPECT_EQ(lora->label, "r1");
    for (const char* method : {"full", "embeddings"}) {
        config.adapter.method = method;
        run.config_json = to_json(config).dump();
        Result<ChatTarget> whole = chat_target_of_run(run);
        ASSERT_TRUE(whole.ok()) << whole.error();
        EXPECT_EQ(whole->model_dir, "/runs/r1/output") << method;
        EXPECT_TRUE(whole->adapter_dir.isEmpty()) << method;
    }
    run.config_json.clear();
    Result<ChatTarget> none = chat_target_of_run(run);
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.error().find("\"r1\""), std::string::npos) << none.error();
}

// A session on the fake generator, recording what it signals.
struct FakeChat {
    QTemporaryDir dir;
    QString log = dir.path() + "/generator.log";
    ChatSession session{new LocalChatTransport(test_paths::source_dir("/tests/app/fake_generator.sh"))};
    QStringList deltas, notices, failures;
    std::vector<ChatStats> finished;
    std::vector<std::pair<int, bool>> ended;

    explicit FakeChat(const char* mode) {
        qputenv("FAKE_GENERATOR_MODE", mode);
        qputenv("FAKE_GENERATOR_LOG", log.toUtf8());
        session.set_target(ChatTarget{"/models/tiny", {}, {}, "tiny"});
        QObject::connect(&session, &ChatSession::delta, [this](const QString& d) { deltas << d; });
        QObject::connect(&session, &ChatSession::notice, [this](const QString& n) { notices << n; });
        QObject::connect(&session, &ChatSession::reply_failed, [this](const QString& e) { failures << e; });
        QObject::connect(&session, &ChatSession::reply_finished,
                         [this](const ChatStats& s) { finished.push_back(s); });
        QObject::connect(&session, &ChatSession::process_ended,
                         [this](int code, bool expected) { ended.emplace_back(code, expected); });
    }
    ~FakeChat() { qunsetenv("FAKE_GENERATOR_MODE"); }
    QStringList log_lines() const {
        QFile f(log);
        if (!f.open(QIODevice::ReadOnly)) return {};
        return QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    }
    bool idle() const { return !session.busy(); }
};

TEST(ChatSession, AConversationGoesOverOneProcessWithTheWholeHistory) {
    FakeChat chat("");
    ASSERT_TRUE(chat.session.send("First?"));
    EXPECT_FALSE(chat.session.send("not while a reply is coming"));
    ASSERT_TRUE(wait_until([&] { return chat.idle(); }));
    EXPECT_EQ(chat.deltas, (QStringList{"Reply ", "1"}));
    ASSERT_EQ(chat.finished.size(), 1u);
    EXPECT_EQ(chat.finished[0].finish_reason, "eos");
    EXPECT_DOUBLE_EQ(chat.finished[0].tokens_per_s, 12.5);
    ASSERT_TRUE(chat.session.send("Second?"));
    ASSERT_TRUE(wait_until([&] { return chat.idle(); }));
    // The final text wins over the deltas; the process (and the model) stayed.
    EXPECT_EQ(
        chat.session.messages(),
        (std::vector<ChatMessage>{
            {"user", "First?"}, {"assistant", "Reply 1."}, {"user", "Second?"}, {"assistant", "Reply 2."}}));
    const QStringList log = chat.log_lines();
    ASSERT_EQ(log.size(), 3) << log.join('\n').toStdString();
    EXPECT_TRUE(log[0].contains("--chat")) << log[0].toStdString();
    EXPECT_TRUE(log[0].contains("--prompts - --stream")) << log[0].toStdString();
    const nlohmann::json second = nlohmann::json::parse(log[2].mid(9).toStdString());
    ASSERT_EQ(second["messages"].size(), 3u);
    EXPECT_EQ(second["messages"][1], (nlohmann::json{{"role", "assistant"}, {"content", "Reply 1."}}));
    EXPECT_TRUE(chat.failures.isEmpty());
    EXPECT_TRUE(chat.ended.empty());
    // New settings end the process on purpose; the next message starts a new one with them.
    ChatSettings s;
    s.max_new_tokens = 7;
    chat.session.set_settings(s);
    ASSERT_TRUE(wait_until([&] { return !chat.ended.empty(); }));
    EXPECT_TRUE(chat.ended[0].second);
    ASSERT_TRUE(chat.session.send("Third?"));
    ASSERT_TRUE(wait_until([&] { return chat.idle(); }));
    EXPECT_TRUE(chat.log_lines()[3].contains("--max-new-tokens 7"));
    EXPECT_EQ(chat.session.messages().size(), 6u);
}

TEST(ChatSession, AGeneratorThatDiesMidReplyFailsTheReplyAndTakesTheQuestionBack) {
    FakeChat chat("die");
    ASSERT_TRUE(chat.session.send("Hello?"));
    ASSERT_TRUE(wait_until([&] { return !chat.failures.isEmpty(); }));
    EXPECT_EQ(chat.deltas, QStringList{"Half"});
    EXPECT_TRUE(chat.failures[0].contains("exit code 3")) << chat.failures[0].toStdString();
    EXPECT_TRUE(chat.failures[0].contains("killed mid-reply")) << chat.failures[0].toStdString();
    EXPECT_TRUE(chat.session.messages().empty());
    EXPECT_FALSE(chat.session.busy());
    ASSERT_EQ(chat.ended.size(), 1u);
    EXPECT_EQ(chat.ended[0], std::make_pair(3, false));
    // The next message starts a new process.
    ASSERT_TRUE(chat.session.send("Hello again?"));
    ASSERT_TRUE(wait_until([&] { return chat.failures.size() == 2; }));
}

TEST(ChatSession, AMalformedLineIsSkippedAndSaidAndAnErrorLineFailsOnlyItsRequest) {
    {
        FakeChat chat("malformed");
        ASSERT_TRUE(chat.session.send("Hi"));
        ASSERT_TRUE(wait_until([&] { return chat.idle(); }));
        ASSERT_EQ(chat.finished.size(), 1u);
        EXPECT_TRUE(chat.notices.filter("Segmentation fault? {not json").size() == 1)
            << chat.notices.join('\n').toStdString();
        EXPECT_EQ(chat.session.messages().back().content, "Reply 1.");
    }
    FakeChat chat("error");
    ASSERT_TRUE(chat.session.send("bad"));
    ASSERT_TRUE(wait_until([&] { return chat.idle(); }));
    ASSERT_EQ(chat.failures.size(), 1);
    EXPECT_TRUE(chat.failures[0].contains("needs a string")) << chat.failures[0].toStdString();
    EXPECT_TRUE(chat.session.messages().empty());
    ASSERT_TRUE(chat.session.send("good"));  // the same process goes on
    ASSERT_TRUE(wait_until([&] { return chat.idle(); }));
    EXPECT_EQ(chat.session.messages().back().content, "Reply 2.");
    EXPECT_TRUE(chat.ended.empty());
}

TEST(ChatSession, AModelWithoutAChatTemplateFallsBackToPlainTextAndSaysSo) {
    FakeChat chat("no_template");
    ASSERT_TRUE(chat.session.send("Complete this"));
    ASSERT_TRUE(wait_until([&] { return chat.idle(); }));
    ASSERT_EQ(chat.finished.size(), 1u) << chat.failures.join('\n').toStdString();
    EXPECT_FALSE(chat.session.chat_mode());
    EXPECT_EQ(chat.notices.filter("has no chat template").size(), 1) << chat.notices.join('\n').toStdString();
    const QStringList log = chat.log_lines();
    ASSERT_EQ(log.size(), 3) << log.join('\n').toStdString();
    EXPECT_TRUE(log[0].contains("--chat"));
    EXPECT_FALSE(log[1].contains("--chat"));
    EXPECT_EQ(log[2], R"(request: {"text":"Complete this"})");
    EXPECT_TRUE(chat.failures.isEmpty());
}

TEST(ChatSession, StopKeepsWhatArrivedAndAMissingEngineFails) {
    FakeChat chat("");
    ChatSession missing(new LocalChatTransport("/nonexistent/slipway-engine"));
    missing.set_target(ChatTarget{"/m", {}, {}, "m"});
    QString failure;
    QObject::connect(&missing, &ChatSession::reply_failed, [&](const QString& e) { failure = e; });
    ASSERT_TRUE(missing.send("anyone?"));
    ASSERT_TRUE(wait_until([&] { return !failure.isEmpty(); }));
    EXPECT_TRUE(failure.contains("/nonexistent/slipway-engine")) << failure.toStdString();
    EXPECT_TRUE(missing.messages().empty());

    ASSERT_TRUE(chat.session.send("One"));
    ASSERT_TRUE(wait_until([&] { return chat.idle(); }));
    chat.session.stop();  // between replies: the process ends, the conversation stays
    ASSERT_TRUE(wait_until([&] { return !chat.ended.empty(); }));
    EXPECT_TRUE(chat.ended[0].second);
    EXPECT_EQ(chat.session.messages().size(), 2u);
    chat.session.clear();
    EXPECT_TRUE(chat.session.messages().empty());

    FakeChat slow("slow");
    ASSERT_TRUE(slow.session.send("Tell me everything"));
    ASSERT_TRUE(wait_until([&] { return !slow.deltas.isEmpty(); }));
    slow.session.stop();
    EXPECT_FALSE(slow.session.busy());
    ASSERT_EQ(slow.finished.size(), 1u);
    EXPECT_EQ(slow.finished[0].finish_reason, "stopped");
    EXPECT_EQ(slow.session.messages().back(), (ChatMessage{"assistant", "Partial"}));
    // Sent at once, while the stopped process is still ending: the new request goes to a new process, and
    // the old one's last words never reach its reply.
    ASSERT_TRUE(slow.session.send("And now?"));
    ASSERT_TRUE(wait_until([&] { return slow.deltas.size() == 2; }));
    EXPECT_EQ(slow.deltas, (QStringList{"Partial", "Partial"}));
    ASSERT_GE(slow.ended.size(), 1u);
    EXPECT_TRUE(slow.ended[0].second);
    EXPECT_TRUE(slow.failures.isEmpty());
    EXPECT_EQ(slow.log_lines().filter("args:").size(), 2);
}

// The generator's side on a FakeSession: each request line gets two deltas and the final line, except a
// request holding "slowly", which gets one delta and nothing more.
void answer_requests(remote::FakeProcessState& state) {
    state.on_stdin = [answered = 0](remote::FakeProcessState& s) mutable {
        const auto lines = std::count(s.stdin_bytes.begin(), s.stdin_bytes.end(), '\n');
        for (; answered < lines; ++answered) {
            if (s.stdin_bytes.find("slowly") != std::string::npos) {
                s.out += "{\"delta\": \"Slow\"}\n";
                continue;
            }
            s.out += "{\"delta\": \"Far \"}\n{\"delta\": \"away\"}\n";
            s.out +=
                R"({"text": "Far away", "finish_reason": "eos", "prompt_tokens": 3, "new_tokens": 2, "tokens_per_s": 4})";
            s.out += "\n";
        }
    };
    state.err = "srun: job 17 queued and waiting for resources\n";
}

TEST(RemoteChat, RepliesStreamOverTheClustersSessionAndADroppedConnectionFailsTheReply) {
    remote::ClusterProfile profile;
    profile.name = "fake";
    profile.host = "fake-host";
    profile.default_partition = "debug";
    std::atomic<remote::FakeSession*> fake{nullptr};
    ClusterSession cluster(profile, {}, [&](const remote::ClusterProfile&, const remote::SessionCallbacks&) {
        auto f = std::make_unique<remote::FakeSession>();
        f->set_process_starter(answer_requests);
        fake = f.get();
        return Result<std::unique_ptr<remote::Session>>(std::unique_ptr<remote::Session>(std::move(f)));
    });
    RunConfig config;
    config.name = "tiny";
    config.slurm.gpus_per_node = 0;
    auto* transport = new RemoteChatTransport(&cluster, [&](const QStringList& args) {
        std::vector<std::string> a;
        for (const QString& arg : args)
            a.push_back(arg.toStdString());
        return remote::render_chat_srun(config, profile, "/w/runs/tiny-1", a);
    });
    ChatSession session(transport);
    session.set_target(ChatTarget{"/w/runs/tiny-1/output", {}, {}, "tiny"});
    QStringList deltas, notices, failures;
    int finished = 0;
    QObject::connect(&session, &ChatSession::delta, [&](const QString& d) { deltas << d; });
    QObject::connect(&session, &ChatSession::notice, [&](const QString& n) { notices << n; });
    QObject::connect(&session, &ChatSession::reply_failed, [&](const QString& e) { failures << e; });
    QObject::connect(&session, &ChatSession::reply_finished, [&] { ++finished; });

    ASSERT_TRUE(session.send("Where?"));
    ASSERT_TRUE(wait_until([&] { return finished == 1 || !failures.isEmpty(); })) << "no reply";
    ASSERT_EQ(finished, 1) << failures.join('\n').toStdString();
    EXPECT_EQ(deltas, (QStringList{"Far ", "away"}));
    EXPECT_EQ(session.messages().back().content, "Far away");
    EXPECT_TRUE(notices.contains("srun: job 17 queued and waiting for resources"))
        << notices.join('\n').toStdString();
    ASSERT_EQ(fake.load()->processes().size(), 1u);
    const std::string command = fake.load()->processes()[0]->command;
    EXPECT_EQ(command.rfind("srun '--nodes=1' '--ntasks=1' '--job-name=tiny-chat' '--partition=debug'", 0),
              0u)
        << command;
    EXPECT_NE(command.find("/w/runs/tiny-1/slipway-engine generate --model /w/runs/tiny-1/output --prompts - "
                           "--stream --chat"),
              std::string::npos)
        << command;
    EXPECT_EQ(transport->command().toStdString(), command);

    // The connection drops in the middle of the next reply: the reply fails, saying so.
    ASSERT_TRUE(session.send("And then, slowly?"));
    ASSERT_TRUE(wait_until([&] { return deltas.size() == 3; }));
    fake.load()->drop_connection();
    ASSERT_TRUE(wait_until([&] { return !failures.isEmpty(); }));
    EXPECT_TRUE(failures[0].contains("connection lost")) << failures[0].toStdString();
    EXPECT_EQ(session.messages().size(), 2u);
    EXPECT_FALSE(transport->running());

    // The next message starts a new srun over a new connection; Stop ends it (TERM over the channel).
    ASSERT_TRUE(session.send("Once more, slowly"));
    ASSERT_TRUE(wait_until([&] { return deltas.size() == 4; }));
    EXPECT_EQ(fake.load()->reconnect_count(), 1);
    ASSERT_EQ(fake.load()->processes().size(), 2u);
    session.stop();
    ASSERT_TRUE(wait_until([&] { return !transport->running(); }));
    EXPECT_TRUE(fake.load()->processes()[1]->terminated);
    EXPECT_EQ(session.messages().back(), (ChatMessage{"assistant", "Slow"}));
}

}  // namespace
}  // namespace slipway::app
