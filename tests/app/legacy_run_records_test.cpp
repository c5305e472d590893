// The one run store: the CLI's old JSON run records imported once when a history reaches schema 3 (typed
// states, a corrupt record named and skipped, an app row of the same job merged, never imported twice,
// the file still private), and the store calls the CLI and the app share (record_submission, find_run,
// cluster_runs, data_version across connections).
#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <sys/stat.h>

#include <chrono>
#include <thread>

#include "history/history_run_store.h"
#include "history/run_history.h"
#include "raw_sqlite.h"
#include "remote/deploy/run_record.h"

namespace slipway::app {
namespace {

using testing_util::RawSqlite;

std::string joined(const std::vector<std::string>& lines) {
    std::string all;
    for (const std::string& line : lines)
        all += line + "\n";
    return all;
}

remote::RunRecord json_record(const std::string& id, const std::string& job, const std::string& state) {
    return remote::RunRecord{id + "-20261120-100000-00a" + job.substr(job.size() - 1),
                             id,
                             "hpc",
                             job,
                             "",
                             "/home/u/slipway/runs/" + id,
                             "2026-11-20T10:00:0" + job.substr(job.size() - 1) + "Z",
                             state};
}

class LegacyRunRecords : public ::testing::Test {
protected:
    void SetUp() override {
        legacy_ = dir_.filePath("runs");
        options_.legacy_records_dir = legacy_.toStdString();
        const remote::RunRecordStore store(legacy_.toStdString());
        for (const remote::RunRecord& r :
             {json_record("queued", "11", "SUBMITTED"), json_record("done", "12", "COMPLETED"),
              json_record("lost", "13", "NODE_FAIL")}) {
            ASSERT_TRUE(store.save(r).ok());
        }
        QFile bad(legacy_ + "/torn-20261120-100000-0000.json");
        ASSERT_TRUE(bad.open(QIODevice::WriteOnly));
        bad.write("{\"run_id\": ");
    }
    QString db() const { return dir_.filePath("history.sqlite"); }
    const StoredRun* by_name(const std::vector<StoredRun>& runs, const char* name) {
        for (const StoredRun& r : runs) {
            if (r.name == name) return &r;
        }
        return nullptr;
    }

    QTemporaryDir dir_;
    QString legacy_;
    OpenOptions options_;
};

TEST_F(LegacyRunRecords, EveryReadableRecordIsImportedOnceWithTypedStates) {
    {
        Result<std::unique_ptr<RunHistory>> store = RunHistory::open(db().toStdString(), options_);
        ASSERT_TRUE(store.ok()) << store.error();
        const std::vector<StoredRun> runs = *(*store)->cluster_runs();
        ASSERT_EQ(runs.size(), 3u);
        const StoredRun* queued = by_name(runs, "queued");
        ASSERT_NE(queued, nullptr);
        EXPECT_EQ(queued->state, RunState::kPending);
        EXPECT_EQ(queued->slurm_state, "");  // SUBMITTED was ours, not Slurm's
        EXPECT_EQ(queued->log_path, "/home/u/slipway/runs/queued/slurm-11.out");
        EXPECT_EQ(queued->remote_dir, "/home/u/slipway/runs/queued");
        EXPECT_EQ(queued->run_id, "queued-20261120-100000-00a1");
        EXPECT_EQ(QDateTime::fromMSecsSinceEpoch(queued->created_ms).toUTC().toString(Qt::ISODate),
                  "2026-11-20T10:00:01Z");
        EXPECT_EQ(by_name(runs, "done")->state, RunState::kCompleted);
        EXPECT_EQ(by_name(runs, "lost")->state, RunState::kFailed);
        EXPECT_EQ(by_name(runs, "lost")->slurm_state, "NODE_FAIL");
        const QString notes = QString::fromStdString(joined((*store)->open_notes()));
        EXPECT_TRUE(notes.contains("torn-20261120-100000-0000.json")) << notes.toStdString();
        EXPECT_TRUE(notes.contains("imported 3 run record(s)")) << notes.toStdString();
        EXPECT_TRUE(notes.contains("runs.imported")) << notes.toStdString();
    }
    EXPECT_FALSE(QFileInfo::exists(legacy_));
    EXPECT_TRUE(QFileInfo::exists(legacy_ + ".imported/done-20261120-100000-00a2.json"));  // nothing deleted
    // Put back by hand: still not imported twice (the store is at schema 3 already).
    ASSERT_TRUE(QDir().rename(legacy_ + ".imported", legacy_));
    Result<std::unique_ptr<RunHistory>> again = RunHistory::open(db().toStdString(), options_);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ((*again)->cluster_runs()->size(), 3u);
    EXPECT_TRUE((*again)->open_notes().empty());
    struct stat st {};
    ASSERT_EQ(::stat(QFile::encodeName(db()).constData(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(LegacyRunRecords, AnAppRowOfTheSameJobIsMergedNotDuplicated) {
    {
        // A schema-2 history in which the app recorded job 12 itself (it wrote the JSON record too).
        Result<std::unique_ptr<RunHistory>> fresh = RunHistory::open(db().toStdString());
        ASSERT_TRUE(fresh.ok());
        StoredRun app;
        app.name = "done";
        app.cluster = "hpc";
        app.job_id = "12";
        app.state = RunState::kCompleted;
        app.log_path = "/home/u/slipway/runs/done/slurm-12.out";
        ASSERT_TRUE((*fresh)->add_run(app).ok());
    }
    {
        RawSqlite raw(db());  // back to schema 2: the run id columns did not exist yet
        for (const char* sql :
             {"DROP INDEX runs_by_run_id", "DROP INDEX runs_by_job", "ALTER TABLE runs DROP COLUMN run_id",
              "ALTER TABLE runs DROP COLUMN remote_dir", "ALTER TABLE runs DROP COLUMN slurm_cluster",
              "PRAGMA user_version = 2"})
            ASSERT_EQ(raw.exec(QString::fromLatin1(sql)), QString()) << sql;
    }
    Result<std::unique_ptr<RunHistory>> store = RunHistory::open(db().toStdString(), options_);
    ASSERT_TRUE(store.ok()) << store.error();
    const std::vector<StoredRun> runs = *(*store)->cluster_runs();
    ASSERT_EQ(runs.size(), 3u);  // done once
    EXPECT_EQ(by_name(runs, "done")->run_id, "done-20261120-100000-00a2");
    EXPECT_EQ(by_name(runs, "done")->state, RunState::kCompleted);
}

// The row a window makes before it uploads a run, waiting for sbatch's answer.
StoredRun submitting_row() {
    StoredRun row;
    row.name = "demo";
    row.cluster = "hpc";
    row.state = RunState::kSubmitting;
    row.run_id = "demo-20261123-100000-abcd";
    return row;
}

// sbatch's answer while another connection writes (the app's points, a second window): the submission
// waits for the lock (the busy timeout) rather than failing, and its row gets the job. A look-up still
// reading when the write starts would fail at once instead: SQLite does not wait for a read to become a
// write.
TEST(OneRunStore, ASubmissionWaitsForAnotherConnectionsWrite) {
    QTemporaryDir dir;
    const QString db = dir.filePath("h.sqlite");
    Result<std::unique_ptr<RunHistory>> cli = RunHistory::open(db.toStdString());
    ASSERT_TRUE(cli.ok()) << cli.error();
    const StoredRun row = submitting_row();
    const int64_t id = *(*cli)->add_run(row);
    RawSqlite other(db);
    ASSERT_EQ(other.exec("BEGIN IMMEDIATE"), QString());
    ASSERT_EQ(other.exec("UPDATE runs SET name = 'renamed' WHERE id = " + QString::number(id)), QString());
    std::thread committer([&other] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        (void)other.exec("COMMIT");
    });
    const remote::RunRecord submitted{row.run_id, "demo", "hpc", "41", "", "/r/demo", "2026-11-23T10:00:00Z",
                                      "SUBMITTED"};
    const Result<int64_t> recorded = (*cli)->record_submission(submitted);
    committer.join();
    ASSERT_TRUE(recorded.ok()) << recorded.error();
    EXPECT_EQ(*recorded, id);
    const StoredRun stored = *(*cli)->run(id);
    EXPECT_EQ(stored.job_id, "41");
    EXPECT_EQ(stored.name, "renamed");  // the other write is kept too
}

TEST(OneRunStore, ASubmissionIsRecordedOnItsRowOrANewOneAndFoundByRunId) {
    QTemporaryDir dir;
    Result<std::unique_ptr<RunHistory>> app = RunHistory::open(dir.filePath("h.sqlite").toStdString());
    Result<std::unique_ptr<RunHistory>> cli = RunHistory::open(dir.filePath("h.sqlite").toStdString());
    ASSERT_TRUE(app.ok() && cli.ok());
    const int64_t version = *(*app)->data_version();
    // The app's row, made before the upload, gets the job when sbatch answers (the worker's connection).
    const StoredRun row = submitting_row();
    const int64_t id = *(*app)->add_run(row);
    remote::RunRecord submitted{row.run_id, "demo", "hpc", "41", "", "/r/demo", "2026-11-23T10:00:00Z",
                                "SUBMITTED"};
    HistoryRunStore cli_store(**cli);
    const StoreRunSink sink(cli_store);
    ASSERT_TRUE(sink.save(submitted, R"({"name": "demo as it runs there"})").ok());
    EXPECT_EQ(sink.problem(), "");
    EXPECT_NE(*(*app)->data_version(), version);  // the app sees the other connection's commit
    const StoredRun stored = *(*app)->run(id);
    EXPECT_EQ(stored.job_id, "41");
    EXPECT_EQ(stored.state, RunState::kPending);
    EXPECT_EQ(stored.log_path, "/r/demo/slurm-41.out");
    EXPECT_EQ(stored.remote_dir, "/r/demo");
    EXPECT_EQ(stored.config_json, R"({"name": "demo as it runs there"})");  // in the same write
    // A CLI submission without a row gets one.
    remote::RunRecord other = submitted;
    other.run_id = "other-20261123-100001-abce";
    other.job_id = "42";
    const Result<int64_t> new_row = (*cli)->record_submission(other);
    ASSERT_TRUE(new_row.ok());
    EXPECT_NE(*new_row, id);
    EXPECT_EQ(*(*app)->find_run("other-20261123-100001-abce"), *new_row);
    // A row number names only rows without a run id (a Slurm job id typed by habit picks nothing else).
    EXPECT_FALSE((*app)->find_run(std::to_string(id)).ok());
    StoredRun opened;
    opened.name = "an app row from before run ids";
    opened.cluster = "hpc";
    opened.job_id = "7";
    const int64_t plain = *(*app)->add_run(opened);
    EXPECT_EQ(*(*app)->find_run(std::to_string(plain)), plain);
    EXPECT_FALSE((*app)->find_run(std::to_string(plain) + "x").ok());
    EXPECT_EQ((*app)->find_run("nope-20261123-100001-0000").code(), StatusCode::kNotFound);
    EXPECT_NE((*app)->find_run("nope").error().find("h.sqlite"), std::string::npos);
    EXPECT_EQ((*app)->cluster_runs()->size(), 3u);
    // Run ids are unique.
    StoredRun twin = row;
    EXPECT_FALSE((*app)->add_run(twin).ok());
}

}  // namespace
}  // namespace slipway::app
