// Helpers shared by the app tests: unique temp folders, fixture paths, MLLOG lines, waiting on the event
// loop.
#pragma once

#include <gtest/gtest.h>

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>

#include <signal.h>

#include <functional>
#include <map>
#include <string>

#include "contract/run_config.h"
#include "remote/runlog/log_follower.h"
#include "remote/slurm/cluster_profile.h"
#include "test_paths.h"

namespace slipway::app::testing_util {

inline QString fixture_log(const QString& name) {
    return QString::fromUtf8(test_paths::test_data_dir("/mlperf-logs/")) + name;
}

// tests/app/fake_engine.sh: a stand-in for slipway-engine (FAKE_ENGINE_MODE complete / fail / hang).
inline QString fake_engine() {
    return QString::fromUtf8(test_paths::source_dir("/tests/app/fake_engine.sh"));
}

// The shipped demo preset, as the editor loads it.
inline RunConfig demo_config() {
    const Result<RunConfig> config =
        load_run_config(test_paths::source_dir("/resources/presets/demo-tiny.json"));
    return config.ok() ? *config : RunConfig();
}

inline const QStringList& fixture_logs() {
    static const QStringList logs = {fixture_log("dell-xe9680-result_0.txt"),
                                     fixture_log("fujitsu-gx2560m7-result_0.txt"),
                                     fixture_log("juniper-h100n1-result_0.txt")};
    return logs;
}

// An MLLOG line as the engine writes it (with '\n').
inline std::string mllog_line(const std::string& key, double value, long step, long samples,
                              long time_ms = 1000) {
    return ":::MLLOG {\"namespace\": \"\", \"time_ms\": " + std::to_string(time_ms) +
           ", \"event_type\": \"POINT_IN_TIME\", \"key\": \"" + key +
           "\", \"value\": " + std::to_string(value) +
           ", \"metadata\": {\"samples_count\": " + std::to_string(samples) +
           ", \"step_num\": " + std::to_string(step) + "}}\n";
}

// A script at `path` that anyone may run (a stand-in engine: slow, deaf to SIGTERM, one that cannot start;
// a stand-in tool the local cluster's user runs).
inline bool write_script(const QString& path, const char* text) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return false;
    f.write(text);
    f.close();
    return f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner |
                            QFileDevice::ReadGroup | QFileDevice::ExeGroup | QFileDevice::ReadOther |
                            QFileDevice::ExeOther);
}

inline void append_file(const QString& path, const std::string& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::Append)) return;
    f.write(bytes.data(), static_cast<qint64>(bytes.size()));
}

// KEY=VALUE lines of a file (the local cluster's cluster.env); empty when it cannot be read.
inline std::map<QString, QString> read_env_file(const QString& path) {
    std::map<QString, QString> env;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return env;
    for (const QByteArray& line : f.readAll().split('\n')) {
        const int eq = line.indexOf('=');
        if (eq > 0) env[QString::fromUtf8(line.left(eq))] = QString::fromUtf8(line.mid(eq + 1));
    }
    return env;
}

// A tiny random LLaMA with the demo tokenizer in `dir`; with a chat template unless `chat` is false.
inline bool make_tiny_model(const QString& engine, const QString& dir, bool chat) {
    QProcess init;
    init.start(engine, {"init-model", "--config", test_paths::source_dir("/resources/demo/model/config.json"),
                        "--out", dir});
    if (!init.waitForFinished(60000) || init.exitCode() != 0) return false;
    if (!QFile::copy(test_paths::source_dir("/resources/demo/tokenizer.json"), dir + "/tokenizer.json"))
        return false;
    if (!chat) return true;
    QFile config(dir + "/tokenizer_config.json");
    if (!config.open(QIODevice::WriteOnly)) return false;
    config.write(R"({"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>", "chat_template": )"
                 R"("{{ bos_token }}{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %})"
                 R"({% if add_generation_prompt %}assistant:{% endif %}"})");
    return true;
}

// A follower of a local file with each poll's lines collected, as FollowService uses it.
struct LocalFollow {
    explicit LocalFollow(const QString& path, uint64_t offset = 0)
        : follower(
              std::make_unique<remote::LocalFileSource>(QFile::encodeName(path).toStdString()),
              [this](MllogStreamItem&& item) { items.push_back(std::move(item)); }, offset) {}
    // The lines of one poll in `items`.
    Result<remote::PollResult> poll() {
        items.clear();
        return follower.poll();
    }
    std::vector<MllogStreamItem> items;  // before `follower`: its sink fills this
    remote::LogFollower follower;
};

// Every line of a whole log file.
inline std::vector<MllogStreamItem> read_log(const QString& path) {
    LocalFollow follow(path);
    const Result<remote::PollResult> read = follow.follower.read_to_end();
    EXPECT_TRUE(read.ok()) << read.error();
    return std::move(follow.items);
}

// Runs the event loop until `done` or `timeout_ms`; returns done().
inline bool wait_until(const std::function<bool()>& done, int timeout_ms = 5000) {
    QElapsedTimer t;
    t.start();
    while (!done() && t.elapsed() < timeout_ms)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    return done();
}

// Points XDG_CONFIG_HOME and XDG_DATA_HOME at a fresh temp folder for the lifetime of the object, so
// tests running in parallel never share settings or a history database.
class IsolatedHome {
public:
    IsolatedHome() {
        old_config_ = qgetenv("XDG_CONFIG_HOME");
        old_data_ = qgetenv("XDG_DATA_HOME");
        qputenv("XDG_CONFIG_HOME", (dir_.path() + "/config").toUtf8());
        qputenv("XDG_DATA_HOME", (dir_.path() + "/data").toUtf8());
    }
    ~IsolatedHome() {
        qputenv("XDG_CONFIG_HOME", old_config_);
        qputenv("XDG_DATA_HOME", old_data_);
    }
    QString path() const { return dir_.path(); }

private:
    QTemporaryDir dir_;
    QByteArray old_config_;
    QByteArray old_data_;
};

// The local test cluster (tests/cluster; SLIPWAY_CLUSTER_ENV names its cluster.env): its variables, with the
// app told to trust its host key and to deploy `engine`; empty when there is no cluster.
inline std::map<QString, QString> use_local_cluster(const QString& engine) {
    const QString env_file = qEnvironmentVariable("SLIPWAY_CLUSTER_ENV");
    if (env_file.isEmpty() || !QFileInfo::exists(env_file)) return {};
    std::map<QString, QString> env = read_env_file(env_file);
    qputenv("SLIPWAY_ENGINE", engine.toUtf8());
    qputenv("SLIPWAY_KNOWN_HOSTS", env["SLIPWAY_SSH_KNOWN_HOSTS"].toUtf8());
    return env;
}

// A bare-metal profile that reaches that cluster over SSH as its test user, runs in `workdir` there.
inline remote::ClusterProfile local_cluster_profile(std::map<QString, QString>& env, const QString& workdir) {
    remote::ClusterProfile p;
    p.name = "local-slurm";
    p.host = env["SLIPWAY_SSH_HOST"].toStdString();
    p.port = env["SLIPWAY_SSH_PORT"].toInt();
    p.user = env["SLIPWAY_SSH_USER"].toStdString();
    p.identity_file = env["SLIPWAY_SSH_KEY"].toStdString();
    p.remote_workdir = workdir.toStdString();
    p.default_partition = env["SLIPWAY_SLURM_PARTITION"].toStdString();
    return p;
}

// A program's exit code and output (killed after timeout_ms: exit code -1).
struct Cli {
    int exit_code = -1;
    QString out, err;
};

inline Cli run_program(const QString& program, const QStringList& args, int timeout_ms = 120'000) {
    QProcess p;
    p.start(program, args);
    Cli r;
    if (!p.waitForFinished(timeout_ms)) {
        p.kill();
        p.waitForFinished();
    }
    r.exit_code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// Starts `program` as a terminal does: SIGINT at its default (a test run in the background inherits it
// ignored, which a program keeps), so a test can press Ctrl-C (SIGINT) at it.
inline bool start_as_from_terminal(QProcess& process, const QString& program, const QStringList& args) {
    process.setChildProcessModifier([] { ::signal(SIGINT, SIG_DFL); });
    process.start(program, args);
    return process.waitForStarted(10000);
}

// Reads `process`'s output into `out` until it holds `text` or `timeout_ms` has passed; whether it does.
inline bool read_until(QProcess& process, QByteArray& out, const char* text, int timeout_ms = 20000) {
    QElapsedTimer waited;
    waited.start();
    while (!out.contains(text) && waited.elapsed() < timeout_ms) {
        process.waitForReadyRead(200);
        out += process.readAllStandardOutput();
    }
    return out.contains(text);
}

// `slipway <args>` as a user in the same home would run it, trusting the cluster's host key.
inline Cli slipway(const QStringList& args, const std::map<QString, QString>& env, int timeout_ms = 120'000) {
    QStringList all = args;  // the SSH options go right after the subcommand (before a `--`)
    all.insert(1, QStringLiteral("--batch"));
    all.insert(2, QStringLiteral("--known-hosts"));
    all.insert(3, env.at("SLIPWAY_SSH_KNOWN_HOSTS"));
    all.insert(4, QStringLiteral("--ssh-config"));
    all.insert(5, QStringLiteral("none"));
    return run_program(QString::fromUtf8(test_paths::slipway_bin()), all, timeout_ms);
}

}  // namespace slipway::app::testing_util
