// Tests of HistoryWriter with real SQLite faults, no root needed: a full disk (PRAGMA max_page_count on
// the history's own connection: SQLite then answers SQLITE_FULL) and a lock (another connection holds
// BEGIN EXCLUSIVE). While a fault lasts every point stays queued and the stored offset does not move;
// afterwards every point is stored exactly once, in order, with the last batch's offset. Retries wait on
// Qt's event loop, as in the app.
#include "history/history_writer.h"

#include <gtest/gtest.h>

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTimer>

#include <iostream>

#include "raw_sqlite.h"
#include "runs/run_tracker.h"
#include "test_util.h"

namespace slipway::app {
namespace {

using testing_util::RawSqlite;
using testing_util::wait_until;

// Fast retries: the tests wait for them.
constexpr HistoryWriter::RetryPolicy kQuickRetries{
    .first_delay_ms = 20, .max_delay_ms = 80, .busy_timeout_ms = 50};

// train_loss points at steps first .. first + n - 1.
std::vector<MetricPointRow> batch(int first, int n) {
    std::vector<MetricPointRow> rows;
    for (int step = first; step < first + n; ++step)
        rows.emplace_back(Metric::kTrainLoss,
                          MetricSample{step * 8.0, double(step), step * 100, 4.0 - step * 1e-3});
    return rows;
}

std::vector<double> stored_steps(RunHistory& history, int64_t run_id) {
    std::vector<double> steps;
    const Result<RunMetrics> m = history.load_metrics(run_id);
    if (!m.ok()) return steps;
    for (const MetricSample& s : m->points(Metric::kTrainLoss))
        steps.push_back(s.step);
    return steps;
}

std::vector<double> steps_up_to(int last) {
    std::vector<double> steps;
    for (int step = 1; step <= last; ++step)
        steps.push_back(step);
    return steps;
}

uint64_t stored_offset(RunHistory& history, int64_t run_id) {
    const Result<StoredRun> r = history.run(run_id);
    return r.ok() ? r->log_offset : ~uint64_t{0};
}

// The writer's retry timer on this thread's event loop, as RunTracker gives it.
class QtLater : public BoardTimer {
public:
    void later(int ms, std::function<void()> fn) override {
        QTimer::singleShot(ms, &context_, std::move(fn));
    }

private:
    QObject context_;
};

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

class HistoryWriterTest : public ::testing::Test {
protected:
    void SetUp() override {
        db_ = dir_.filePath("history.sqlite");
        Result<std::unique_ptr<RunHistory>> opened = RunHistory::open(db_.toStdString());
        ASSERT_TRUE(opened.ok()) << opened.error();
        history_ = std::move(*opened);
        StoredRun run;
        run.name = "live";
        run.state = RunState::kRunning;
        run_id_ = *history_->add_run(run);
        writer().set_retry_policy(kQuickRetries);
        writer().set_retry_timer(&later_);
        writer().set_listener([this](const HistoryWriter::Change& change) {
            (change.failing ? failed_ : recovered_).push_back(change);
        });
    }
    HistoryWriter& writer() { return history_->writer(); }

    QtLater later_;
    QTemporaryDir dir_;
    QString db_;
    std::unique_ptr<RunHistory> history_;
    int64_t run_id_ = 0;
    std::vector<HistoryWriter::Change> failed_;
    std::vector<HistoryWriter::Change> recovered_;
};

TEST_F(HistoryWriterTest, AFullDiskKeepsEveryPointUntilThereIsRoom) {
    const int64_t pages = *history_->pragma("PRAGMA page_count");
    ASSERT_EQ(*history_->pragma("PRAGMA max_page_count = " + std::to_string(pages)), pages);
    writer().append(run_id_, batch(1, 300), RunMetrics(), 1000);
    ASSERT_TRUE(writer().failing());
    ASSERT_EQ(failed_.size(), 1);
    EXPECT_EQ(failed_[0].path, db_.toStdString());
    EXPECT_TRUE(has(failed_[0].reason, "full")) << failed_[0].reason;  // SQLite's reason
    EXPECT_TRUE(has(writer().problem(), db_.toStdString())) << writer().problem();
    // What the app shows: the file and the reason, and that nothing is lost.
    const QString shown = RunTracker::words(failed_[0]);
    EXPECT_TRUE(shown.contains(db_) && shown.contains("full") && shown.contains("Points are kept"))
        << shown.toStdString();
    writer().append(run_id_, batch(301, 300), RunMetrics(), 2000);
    writer().append(run_id_, {}, RunMetrics(), 2500);  // an offset alone must not pass the queued points
    EXPECT_EQ(writer().pending_points(run_id_), 600u);
    EXPECT_EQ(*history_->point_count(run_id_), 0);
    EXPECT_EQ(stored_offset(*history_, run_id_), 0u);
    wait_until([] { return false; }, 300);  // several retries, all failing
    EXPECT_TRUE(writer().failing());
    EXPECT_EQ(failed_.size(), 1);  // one message, not one per try
    EXPECT_EQ(stored_offset(*history_, run_id_), 0u);

    ASSERT_TRUE(history_->pragma("PRAGMA max_page_count = 1073741823").ok());
    ASSERT_TRUE(wait_until([&] { return !writer().failing(); }));  // the retry timer, no new batch
    EXPECT_EQ(recovered_.size(), 1);
    EXPECT_EQ(recovered_[0].points_waiting, 600u);
    EXPECT_TRUE(RunTracker::words(recovered_[0]).contains("600 points"))
        << RunTracker::words(recovered_[0]).toStdString();
    EXPECT_EQ(stored_steps(*history_, run_id_), steps_up_to(600));
    EXPECT_EQ(stored_offset(*history_, run_id_), 2500u);
    EXPECT_EQ(writer().pending_points(), 0u);
    writer().append(run_id_, batch(601, 50), RunMetrics(), 3000);  // written at once again
    EXPECT_EQ(*history_->point_count(run_id_), 650);
    EXPECT_EQ(stored_offset(*history_, run_id_), 3000u);
}

TEST_F(HistoryWriterTest, ALockedFileIsWrittenOnceTheLockIsReleased) {
    writer().append(run_id_, batch(1, 10), RunMetrics(), 100);
    ASSERT_EQ(*history_->point_count(run_id_), 10);
    RawSqlite other(db_);
    ASSERT_EQ(other.exec("BEGIN EXCLUSIVE"), QString());
    QElapsedTimer t;
    t.start();
    writer().append(run_id_, batch(11, 10), RunMetrics(), 200);
    const qint64 blocked_ms = t.elapsed();
    std::cout << "[ figures  ] an append against a locked file returned after " << blocked_ms << " ms\n";
    EXPECT_LT(blocked_ms, 3000);  // the short busy timeout, not RunHistory's 5 s (slack for a loaded machine)
    ASSERT_TRUE(writer().failing());
    ASSERT_EQ(failed_.size(), 1);
    EXPECT_TRUE(has(failed_[0].reason, "locked")) << failed_[0].reason;
    for (int b = 2; b <= 5; ++b) {
        writer().append(run_id_, batch(b * 10 + 1, 10), RunMetrics(), (b + 1) * 100);
        wait_until([] { return false; }, 30);
    }
    EXPECT_EQ(stored_offset(*history_, run_id_), 100u);
    EXPECT_EQ(writer().pending_points(run_id_), 50u);
    EXPECT_EQ(failed_.size(), 1);

    ASSERT_EQ(other.exec("COMMIT"), QString());
    ASSERT_TRUE(wait_until([&] { return !writer().failing(); }));
    EXPECT_EQ(recovered_.size(), 1);
    EXPECT_EQ(stored_steps(*history_, run_id_), steps_up_to(60));
    EXPECT_EQ(stored_offset(*history_, run_id_), 600u);
}

// The CLI has no event loop: without a retry timer a failed write waits for the next append once the delay
// has passed, and a retry that was waiting on a timer that is taken away does nothing.
TEST_F(HistoryWriterTest, WithoutATimerTheNextAppendTriesAgain) {
    RawSqlite other(db_);
    ASSERT_EQ(other.exec("BEGIN EXCLUSIVE"), QString());
    writer().append(run_id_, batch(1, 10), RunMetrics(), 100);  // a retry now waits on later_
    ASSERT_TRUE(writer().failing());
    writer().set_retry_timer(nullptr);
    ASSERT_EQ(other.exec("COMMIT"), QString());
    wait_until([] { return false; }, 150);  // the waiting retry's time passes: it must not write
    EXPECT_TRUE(writer().failing());
    EXPECT_EQ(*history_->point_count(run_id_), 0);
    writer().append(run_id_, batch(11, 10), RunMetrics(), 200);  // past the delay: written with it
    EXPECT_FALSE(writer().failing());
    EXPECT_EQ(stored_steps(*history_, run_id_), steps_up_to(20));
    EXPECT_EQ(stored_offset(*history_, run_id_), 200u);
    ASSERT_EQ(recovered_.size(), 1u);
    EXPECT_EQ(recovered_[0].points_waiting, 20u);
}

TEST_F(HistoryWriterTest, AResetDropsWhatWasQueuedBeforeIt) {
    writer().append(run_id_, batch(1, 5), RunMetrics(), 50);
    RawSqlite other(db_);
    ASSERT_EQ(other.exec("BEGIN EXCLUSIVE"), QString());
    writer().append(run_id_, batch(6, 5), RunMetrics(), 100);
    writer().reset(run_id_);  // the log was rewritten: steps 1.. again
    writer().append(run_id_, batch(1, 3), RunMetrics(), 30);
    EXPECT_EQ(writer().pending_points(run_id_), 3u);
    EXPECT_EQ(stored_steps(*history_, run_id_), steps_up_to(5));
    ASSERT_EQ(other.exec("COMMIT"), QString());
    ASSERT_TRUE(wait_until([&] { return !writer().failing(); }));
    EXPECT_EQ(stored_steps(*history_, run_id_), steps_up_to(3));
    EXPECT_EQ(stored_offset(*history_, run_id_), 30u);
}

TEST_F(HistoryWriterTest, ClosingARunThatCannotBeWrittenSaysHowManyPointsAndWhy) {
    writer().append(run_id_, batch(1, 5), RunMetrics(), 50);
    RawSqlite other(db_);
    ASSERT_EQ(other.exec("BEGIN EXCLUSIVE"), QString());
    writer().append(run_id_, batch(6, 7), RunMetrics(), 120);
    const Status closed = writer().close_run(run_id_);
    ASSERT_FALSE(closed.ok());
    EXPECT_NE(closed.message().find("7 points"), std::string::npos) << closed.message();
    EXPECT_NE(closed.message().find(db_.toStdString()), std::string::npos) << closed.message();
    EXPECT_NE(closed.message().find("locked"), std::string::npos) << closed.message();
    EXPECT_EQ(writer().pending_points(), 0u);
    ASSERT_EQ(other.exec("COMMIT"), QString());
    wait_until([&] { return !writer().failing(); });
    // Nothing of the dropped queue arrives later: the stored offset still says where to read again.
    EXPECT_EQ(stored_steps(*history_, run_id_), steps_up_to(5));
    EXPECT_EQ(stored_offset(*history_, run_id_), 50u);
    EXPECT_TRUE(recovered_.empty()) << "no 'written again' about a queue that was dropped";
}

// A rewritten log whose reset could not be stored: closing says the stored offset is stale, not "before
// the points".
TEST_F(HistoryWriterTest, ClosingARunWhoseResetWasNotStoredSaysTheOffsetIsStale) {
    writer().append(run_id_, batch(1, 5), RunMetrics(), 50);
    RawSqlite other(db_);
    ASSERT_EQ(other.exec("BEGIN EXCLUSIVE"), QString());
    writer().reset(run_id_);
    writer().append(run_id_, batch(1, 2), RunMetrics(), 20);
    const Status closed = writer().close_run(run_id_);
    ASSERT_FALSE(closed.ok());
    EXPECT_NE(closed.message().find("was rewritten"), std::string::npos) << closed.message();
    EXPECT_NE(closed.message().find("stale offset"), std::string::npos) << closed.message();
    ASSERT_EQ(other.exec("COMMIT"), QString());
}

TEST_F(HistoryWriterTest, ClosingTheHistoryWritesWhatWaits) {
    writer().set_retry_policy({.first_delay_ms = 60'000, .max_delay_ms = 60'000, .busy_timeout_ms = 50});
    {
        RawSqlite other(db_);
        ASSERT_EQ(other.exec("BEGIN EXCLUSIVE"), QString());
        writer().append(run_id_, batch(1, 20), RunMetrics(), 200);
        ASSERT_TRUE(writer().failing());
        ASSERT_EQ(other.exec("COMMIT"), QString());
    }
    history_.reset();  // the app quits before the next try
    Result<std::unique_ptr<RunHistory>> reopened = RunHistory::open(db_.toStdString());
    ASSERT_TRUE(reopened.ok()) << reopened.error();
    EXPECT_EQ(stored_steps(**reopened, run_id_), steps_up_to(20));
    EXPECT_EQ(stored_offset(**reopened, run_id_), 200u);
}

TEST_F(HistoryWriterTest, ClosingTheHistoryWhileItCannotBeWrittenSaysSo) {
    RawSqlite other(db_);
    ASSERT_EQ(other.exec("BEGIN EXCLUSIVE"), QString());
    writer().append(run_id_, batch(1, 20), RunMetrics(), 200);
    ::testing::internal::CaptureStderr();
    history_.reset();
    const std::string said = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(has(said, "20 points")) << said;
    EXPECT_TRUE(has(said, db_.toStdString())) << said;
    ASSERT_EQ(other.exec("COMMIT"), QString());
    Result<std::unique_ptr<RunHistory>> reopened = RunHistory::open(db_.toStdString());
    ASSERT_TRUE(reopened.ok()) << reopened.error();
    EXPECT_EQ(*(*reopened)->point_count(run_id_), 0);
    EXPECT_EQ(stored_offset(**reopened, run_id_), 0u);
}

}  // namespace
}  // namespace slipway::app
