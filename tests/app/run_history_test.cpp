// Tests of the history file itself: its schema version (a file from before versions were recorded is
// migrated with its rows, version 1's free-form states typed, a newer one refused and left as it was), its
// mode (0600, folders 0700, a file open to others tightened), and set_state's rule for pollers.
#include "history/run_history.h"

#include <gtest/gtest.h>

#include <QCryptographicHash>
#include <QFile>
#include <QTemporaryDir>
#include <algorithm>
#include <iterator>

#include <sys/stat.h>

#include "raw_sqlite.h"

namespace slipway::app {
namespace {

using testing_util::RawSqlite;

mode_t mode_of(const QString& path) {
    struct stat st {};
    if (::stat(QFile::encodeName(path).constData(), &st) != 0) return 0;
    return st.st_mode & 0777;
}

QByteArray file_hash(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

// The tables of schema 1, as Slipway wrote them before and at version 1.
void create_schema1_tables(RawSqlite& db) {
    for (const char* sql : {
             "CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, "
             "cluster TEXT, job_id TEXT, state TEXT, created_ms INTEGER, started_ms INTEGER, "
             "finished_ms INTEGER, config_json TEXT, log_path TEXT, log_offset INTEGER NOT NULL DEFAULT 0, "
             "meta_json TEXT)",
             "CREATE TABLE IF NOT EXISTS points (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE "
             "CASCADE, "
             "metric INTEGER NOT NULL, samples REAL, step REAL, time_ms INTEGER, value REAL NOT NULL)",
             "CREATE INDEX IF NOT EXISTS points_by_run ON points(run_id, metric)",
         }) {
        ASSERT_EQ(db.exec(QString::fromLatin1(sql)), QString()) << sql;
    }
}

TEST(RunHistorySchema, AFileWithoutAVersionIsMigratedAndKeepsItsRows) {
    QTemporaryDir dir;
    const QString db = dir.filePath("history.sqlite");
    {
        // The file as Slipway wrote it before the schema had a version (user_version 0).
        RawSqlite old(db);
        create_schema1_tables(old);
        for (const char* sql : {
                 "PRAGMA journal_mode=WAL",
                 "INSERT INTO runs (name, cluster, job_id, state, created_ms, log_path, log_offset, "
                 "meta_json) "
                 "VALUES ('old run', 'This computer', '77', 'completed', 1700000000000, '/tmp/old.log', "
                 "4321, "
                 "'{\"target\": 0.925, \"status\": \"success\"}')",
                 "INSERT INTO points VALUES (1, 0, 8, 1, 1000, 3.5)",
                 "INSERT INTO points VALUES (1, 0, 16, 2, 2000, 3.25)",
                 "INSERT INTO points VALUES (1, 1, 16, 2, 2100, 0.5)",
             }) {
            ASSERT_EQ(old.exec(QString::fromLatin1(sql)), QString()) << sql;
        }
        ASSERT_EQ(old.value("PRAGMA user_version").toInt(), 0);
    }
    {
        Result<std::unique_ptr<RunHistory>> history = RunHistory::open(db.toStdString());
        ASSERT_TRUE(history.ok()) << history.error();
        const Result<std::vector<StoredRun>> runs = (*history)->runs();
        ASSERT_TRUE(runs.ok());
        ASSERT_EQ(runs->size(), 1u);
        EXPECT_EQ(runs->front().name, "old run");
        EXPECT_EQ(runs->front().job_id, "77");
        EXPECT_EQ(runs->front().log_offset, 4321u);
        const Result<RunMetrics> metrics = (*history)->load_metrics(runs->front().id);
        ASSERT_TRUE(metrics.ok());
        ASSERT_EQ(metrics->points(Metric::kTrainLoss).size(), 2u);
        EXPECT_EQ(metrics->points(Metric::kTrainLoss)[1].value, 3.25);
        EXPECT_EQ(metrics->points(Metric::kEvalAccuracy).size(), 1u);
        EXPECT_EQ(metrics->target, 0.925);
        EXPECT_EQ(metrics->status, "success");
        // And it is written as before.
        const std::vector<MetricPointRow> more = {{Metric::kTrainLoss, MetricSample{24, 3, 3000, 3.0}}};
        ASSERT_TRUE((*history)->append(runs->front().id, more, *metrics, 5000).ok());
        EXPECT_EQ(*(*history)->point_count(runs->front().id), 4);
    }
    RawSqlite after(db);
    EXPECT_EQ(after.value("PRAGMA user_version").toInt(), RunHistory::schema_version());
    EXPECT_GE(RunHistory::schema_version(), 1);
}

TEST(RunHistorySchema, ANewFileHasTheCurrentVersion) {
    QTemporaryDir dir;
    const QString db = dir.filePath("history.sqlite");
    ASSERT_TRUE(RunHistory::open(db.toStdString()).ok());
    RawSqlite raw(db);
    EXPECT_EQ(raw.value("PRAGMA user_version").toInt(), RunHistory::schema_version());
    // Opened again: nothing to migrate.
    Result<std::unique_ptr<RunHistory>> again = RunHistory::open(db.toStdString());
    ASSERT_TRUE(again.ok()) << again.error();
    EXPECT_EQ(raw.value("PRAGMA user_version").toInt(), RunHistory::schema_version());
}

TEST(RunHistorySchema, AFileFromANewerSlipwayIsRefusedAndLeftAsItWas) {
    QTemporaryDir dir;
    const QString db = dir.filePath("history.sqlite");
    const int newer = RunHistory::schema_version() + 3;
    {
        RawSqlite raw(db);
        ASSERT_EQ(raw.exec("CREATE TABLE runs (id INTEGER PRIMARY KEY, name TEXT, future_column TEXT)"),
                  QString());
        ASSERT_EQ(raw.exec("INSERT INTO runs VALUES (1, 'from the future', 'x')"), QString());
        ASSERT_EQ(raw.exec(QStringLiteral("PRAGMA user_version = %1").arg(newer)), QString());
    }
    ::chmod(QFile::encodeName(db).constData(), 0600);  // so open() has nothing to tighten
    const QByteArray before = file_hash(db);
    Result<std::unique_ptr<RunHistory>> history = RunHistory::open(db.toStdString());
    ASSERT_FALSE(history.ok());
    const std::string& error = history.error();
    EXPECT_NE(error.find(db.toStdString()), std::string::npos) << error;
    EXPECT_NE(error.find("version " + std::to_string(newer)), std::string::npos) << error;
    EXPECT_NE(error.find("this Slipway's " + std::to_string(RunHistory::schema_version())), std::string::npos)
        << error;
    EXPECT_EQ(file_hash(db), before);
    RawSqlite raw(db);
    EXPECT_EQ(raw.value("PRAGMA user_version").toInt(), newer);
    EXPECT_EQ(raw.value("SELECT future_column FROM runs").toString(), "x");
}

TEST(RunHistorySchema, Version1StatesAreTypedAndSlurmWordsKept) {
    QTemporaryDir dir;
    const QString db = dir.filePath("history.sqlite");
    const struct {
        const char* old_state;
        RunState state;
        const char* slurm_state;
        const char* detail;
    } kRows[] = {
        {"PENDING", RunState::kPending, "PENDING", ""},
        {"RUNNING", RunState::kRunning, "RUNNING", ""},
        {"NODE_FAIL", RunState::kFailed, "NODE_FAIL", ""},
        {"submitting", RunState::kSubmitting, "", ""},
        {"following", RunState::kFollowing, "", ""},
        {"interrupted", RunState::kInterrupted, "", ""},
        {"stopped", RunState::kUnknown, "", ""},
        {"aborted", RunState::kFailed, "", "run_stop status aborted"},
        {"success", RunState::kCompleted, "", ""},  // a success says nothing beside "completed"
    };
    {
        RawSqlite old(db);
        create_schema1_tables(old);
        for (const auto& row : kRows) {
            ASSERT_EQ(old.exec(QStringLiteral("INSERT INTO runs (name, state) VALUES ('%1', '%1')")
                                   .arg(QString::fromLatin1(row.old_state))),
                      QString());
        }
        ASSERT_EQ(old.exec(QStringLiteral("PRAGMA user_version = 1")), QString());
    }
    Result<std::unique_ptr<RunHistory>> history = RunHistory::open(db.toStdString());
    ASSERT_TRUE(history.ok()) << history.error();
    const Result<std::vector<StoredRun>> runs = (*history)->runs();
    ASSERT_TRUE(runs.ok());
    ASSERT_EQ(runs->size(), std::size(kRows));
    for (const StoredRun& run : *runs) {
        const auto row = std::find_if(std::begin(kRows), std::end(kRows),
                                      [&](const auto& r) { return run.name == r.old_state; });
        ASSERT_NE(row, std::end(kRows)) << run.name;
        EXPECT_EQ(run.state, row->state) << row->old_state;
        EXPECT_EQ(run.slurm_state, row->slurm_state) << row->old_state;
        EXPECT_EQ(run.state_detail, row->detail) << row->old_state;
    }
    // The column holds RunState's words only.
    RawSqlite after(db);
    EXPECT_EQ(after
                  .value("SELECT COUNT(*) FROM runs WHERE state NOT IN ('pending', 'running', 'failed', "
                         "'submitting', 'following', 'interrupted', 'unknown', 'completed')")
                  .toInt(),
              0);
}

TEST(RunHistoryState, PollerNeverReopensAnEndedRun) {
    QTemporaryDir dir;
    Result<std::unique_ptr<RunHistory>> history =
        RunHistory::open(dir.filePath("history.sqlite").toStdString());
    ASSERT_TRUE(history.ok()) << history.error();
    RunHistory& store = **history;
    StoredRun record;
    record.name = "job";
    record.state = RunState::kPending;
    const Result<int64_t> id = store.add_run(record);
    ASSERT_TRUE(id.ok()) << id.error();

    ASSERT_TRUE(
        store.set_state(*id, RunState::kRunning, "on node01", "RUNNING", {}, StateWrite::kIfNotEnded).ok());
    EXPECT_EQ(store.run(*id)->state, RunState::kRunning);
    EXPECT_EQ(store.run(*id)->state_detail, "on node01");
    // A stall (RunWatch) is not undone by Slurm saying RUNNING again.
    ASSERT_TRUE(store.set_state(*id, RunState::kStalled).ok());
    ASSERT_TRUE(store.set_state(*id, RunState::kRunning, {}, "RUNNING", {}, StateWrite::kIfNotEnded).ok());
    EXPECT_EQ(store.run(*id)->state, RunState::kStalled);

    const int64_t end = 1715157924000;
    ASSERT_TRUE(
        store.set_state(*id, RunState::kCompleted, {}, "COMPLETED", end, StateWrite::kIfNotEnded).ok());
    // A late poll answer from before the end changes nothing.
    ASSERT_TRUE(store.set_state(*id, RunState::kRunning, {}, "RUNNING", {}, StateWrite::kIfNotEnded).ok());
    Result<StoredRun> stored = store.run(*id);
    ASSERT_TRUE(stored.ok());
    EXPECT_EQ(stored->state, RunState::kCompleted);
    EXPECT_EQ(stored->slurm_state, "COMPLETED");
    EXPECT_EQ(stored->finished_ms, end);
    // A user's own decision (kAlways) still may.
    ASSERT_TRUE(store.set_state(*id, RunState::kRunning).ok());
    EXPECT_EQ(store.run(*id)->state, RunState::kRunning);
    EXPECT_EQ(store.run(*id)->slurm_state, "COMPLETED");  // no new word: the last one kept
}

TEST(RunHistoryFile, IsCreatedPrivateInPrivateFolders) {
    QTemporaryDir dir;
    ::chmod(QFile::encodeName(dir.path()).constData(), 0755);
    const QString db = dir.filePath("data/slipway/history.sqlite");
    Result<std::unique_ptr<RunHistory>> history = RunHistory::open(db.toStdString());
    ASSERT_TRUE(history.ok()) << history.error();
    StoredRun run;
    run.name = "private";
    const Result<int64_t> id = (*history)->add_run(run);
    ASSERT_TRUE(id.ok());
    const std::vector<MetricPointRow> rows = {{Metric::kTrainLoss, MetricSample{8, 1, 1000, 3.0}}};
    ASSERT_TRUE((*history)->append(*id, rows, RunMetrics(), 100).ok());
    EXPECT_EQ(mode_of(db), 0600u);
    ASSERT_TRUE(QFile::exists(db + "-wal"));  // WAL mode: the points are in here until a checkpoint
    EXPECT_EQ(mode_of(db + "-wal"), 0600u);
    EXPECT_EQ(mode_of(db + "-shm"), 0600u);
    EXPECT_EQ(mode_of(dir.filePath("data/slipway")), 0700u);
    EXPECT_EQ(mode_of(dir.filePath("data")), 0700u);
    EXPECT_EQ(mode_of(dir.path()), 0755u);  // not ours to change
    EXPECT_TRUE((*history)->open_notes().empty());
}

TEST(RunHistoryFile, AFileOthersCanReadIsTightenedAndSaysSo) {
    QTemporaryDir dir;
    const QString db = dir.filePath("history.sqlite");
    {
        Result<std::unique_ptr<RunHistory>> history = RunHistory::open(db.toStdString());
        ASSERT_TRUE(history.ok());
        StoredRun run;
        run.name = "kept";
        ASSERT_TRUE((*history)->add_run(run).ok());
    }
    ASSERT_EQ(::chmod(QFile::encodeName(db).constData(), 0644), 0);
    Result<std::unique_ptr<RunHistory>> history = RunHistory::open(db.toStdString());
    ASSERT_TRUE(history.ok()) << history.error();
    EXPECT_EQ(mode_of(db), 0600u);
    ASSERT_EQ((*history)->open_notes().size(), 1);
    const QString note = QString::fromStdString((*history)->open_notes()[0]);
    EXPECT_TRUE(note.contains(db)) << note.toStdString();
    EXPECT_TRUE(note.contains("0644")) << note.toStdString();
    EXPECT_EQ((*history)->runs()->size(), 1u);
}

}  // namespace
}  // namespace slipway::app
