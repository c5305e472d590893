// Tests of LogFollower and RunHistory together: a follower that stops (a dropped connection, an app
// restart) and resumes from the offset stored with the points loses and repeats nothing, also when the
// log grows meanwhile, a line is cut in half, or the log is rewritten.
#include "remote/runlog/log_follower.h"

#include <gtest/gtest.h>

#include <QTemporaryDir>

#include "core/follow_service.h"
#include "history/run_history.h"
#include "test_util.h"

namespace slipway::app {
namespace {

using testing_util::append_file;
using testing_util::LocalFollow;
using testing_util::mllog_line;

// Polls `follower` and stores what it read, as the monitor does: points and offset in one transaction.
void poll_into(LocalFollow& follow, RunHistory& history, int64_t run_id, RunMetrics& metrics) {
    Result<remote::PollResult> polled = follow.poll();
    ASSERT_TRUE(polled.ok()) << polled.error();
    if (polled->restarted) {
        ASSERT_TRUE(history.reset_points(run_id).ok());
        metrics = RunMetrics();
    }
    std::vector<MetricPointRow> rows;
    for (const MllogStreamItem& item : follow.items) {
        if (item.kind != MllogLineKind::kEvent) continue;
        if (const std::optional<Metric> m = metrics.add(item.event))
            rows.emplace_back(*m, metrics.points(*m).back());
    }
    ASSERT_TRUE(history.append(run_id, rows, metrics, follow.follower.offset()).ok());
}

std::vector<double> loss_steps(const RunMetrics& m) {
    std::vector<double> steps;
    for (const MetricSample& s : m.points(Metric::kTrainLoss))
        steps.push_back(s.step);
    return steps;
}

TEST(LocalLogFollower, ReadsOnlyNewCompleteLines) {
    QTemporaryDir dir;
    const QString log = dir.filePath("slurm-1.out");
    LocalFollow follow(log);
    Result<remote::PollResult> c = follow.poll();
    ASSERT_TRUE(c.ok());
    EXPECT_FALSE(c->file_exists);
    const std::string line1 = mllog_line("train_loss", 3.0, 1, 8);
    const std::string line2 = mllog_line("train_loss", 2.0, 2, 16);
    append_file(log, "0: plain text\n" + line1 + line2.substr(0, 30));
    c = follow.poll();
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(c->file_exists);
    ASSERT_EQ(follow.items.size(), 2u);
    EXPECT_EQ(follow.items[0].text, "0: plain text");
    EXPECT_EQ(follow.items[1].kind, MllogLineKind::kEvent);
    EXPECT_EQ(follow.follower.offset(), 14 + line1.size());  // the half line is not consumed
    append_file(log, line2.substr(30));
    c = follow.poll();
    ASSERT_EQ(follow.items.size(), 1u);
    EXPECT_EQ(follow.items[0].event.step_num(), 2.0);
    EXPECT_EQ(follow.follower.offset(), 14 + line1.size() + line2.size());
}

TEST(LocalLogFollower, AnUnreadableFileIsAnErrorNamingIt) {
    QTemporaryDir dir;
    const QString folder = dir.filePath("slurm-2.out");
    ASSERT_TRUE(QDir().mkpath(folder));  // a folder where the log should be
    LocalFollow follow(folder);
    const Result<remote::PollResult> c = follow.poll();
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find(folder.toStdString()), std::string::npos) << c.error();
}

TEST(LocalLogFollower, ALargeFileComesInBoundedPolls) {
    QTemporaryDir dir;
    const QString log = dir.filePath("big.out");
    std::string text;
    for (int step = 1; step <= 2000; ++step)
        text += mllog_line("train_loss", 1.0, step, step * 8);
    append_file(log, text);
    remote::FollowerOptions options;
    options.chunk_bytes = 4096;
    options.max_bytes_per_poll = 16384;
    std::vector<MllogStreamItem> items;
    remote::LogFollower follower(
        std::make_unique<remote::LocalFileSource>(log.toStdString()),
        [&items](MllogStreamItem&& item) { items.push_back(std::move(item)); }, 0, options);
    int polls = 0;
    for (bool behind = true; behind; ++polls) {
        const size_t before = items.size();
        Result<remote::PollResult> c = follower.poll();
        ASSERT_TRUE(c.ok()) << c.error();
        EXPECT_LE(c->bytes_read, options.max_bytes_per_poll);
        EXPECT_EQ(static_cast<size_t>(c->lines), items.size() - before);
        behind = c->behind;
    }
    EXPECT_GE(polls, static_cast<int>(text.size() / options.max_bytes_per_poll));
    ASSERT_EQ(items.size(), 2000u);
    EXPECT_EQ(items.back().event.step_num(), 2000.0);
    EXPECT_EQ(follower.offset(), text.size());
}

TEST(FollowerResume, DisconnectMidLineThenRestartFromTheStoredOffset) {
    testing_util::IsolatedHome home;
    QTemporaryDir dir;
    const QString log = dir.filePath("mllog.txt");
    const QString db = dir.filePath("history.sqlite");
    int64_t run_id = 0;
    {
        Result<std::unique_ptr<RunHistory>> history = RunHistory::open(db.toStdString());
        ASSERT_TRUE(history.ok()) << history.error();
        StoredRun run;
        run.name = "resume";
        run.log_path = log.toStdString();
        run.state = RunState::kRunning;
        run_id = *(*history)->add_run(run);
        RunMetrics metrics;
        LocalFollow follower(log);
        for (int step = 1; step <= 3; ++step)
            append_file(log, mllog_line("train_loss", 4.0 - step * 0.1, step, step * 8));
        const std::string line4 = mllog_line("train_loss", 3.6, 4, 32);
        append_file(log, line4.substr(0, 40));  // the connection drops in the middle of a line
        poll_into(follower, **history, run_id, metrics);
        EXPECT_EQ(metrics.points(Metric::kTrainLoss).size(), 3u);
        append_file(log, line4.substr(40));
        // ... and the app is closed before it polls again.
    }
    for (int step = 5; step <= 6; ++step)
        append_file(log, mllog_line("train_loss", 4.0 - step * 0.1, step, step * 8));
    {
        Result<std::unique_ptr<RunHistory>> history = RunHistory::open(db.toStdString());
        ASSERT_TRUE(history.ok());
        const StoredRun run = *(*history)->run(run_id);
        Result<RunMetrics> metrics = (*history)->load_metrics(run_id);
        ASSERT_TRUE(metrics.ok());
        EXPECT_EQ(loss_steps(*metrics), (std::vector<double>{1, 2, 3}));
        LocalFollow follower(log, run.log_offset);
        poll_into(follower, **history, run_id, *metrics);
        EXPECT_EQ(loss_steps(*metrics), (std::vector<double>{1, 2, 3, 4, 5, 6}));
        EXPECT_EQ(*(*history)->point_count(run_id), 6);
        // The job is restarted and its log rewritten: the follower starts over, the history too.
        QFile::resize(log, 0);
        append_file(log, mllog_line("train_loss", 9.0, 1, 8));
        poll_into(follower, **history, run_id, *metrics);
        EXPECT_EQ(loss_steps(*metrics), (std::vector<double>{1}));
        EXPECT_EQ(*(*history)->point_count(run_id), 1);
    }
}

TEST(RunHistory, RunsAndPointsSurviveARestart) {
    QTemporaryDir dir;
    const QString db = dir.filePath("nested/history.sqlite");
    RunMetrics metrics = [] {
        RunMetrics m;
        for (const MllogStreamItem& item :
             testing_util::read_log(testing_util::fixture_log("juniper-h100n1-result_0.txt"))) {
            if (item.kind == MllogLineKind::kEvent) m.add(item.event);
        }
        return m;
    }();
    int64_t id = 0;
    {
        auto history = RunHistory::open(db.toStdString());
        ASSERT_TRUE(history.ok()) << history.error();
        StoredRun run;
        run.name = "juniper";
        run.cluster = "This computer";
        run.job_id = "4242";
        run.state = RunState::kRunning;
        run.started_ms = 1715151007632;
        run.config_json = R"({"name": "juniper"})";
        id = *(*history)->add_run(run);
        std::vector<MetricPointRow> rows;
        for (Metric m : kAllMetrics)
            for (const MetricSample& s : metrics.points(m))
                rows.emplace_back(m, s);
        ASSERT_TRUE((*history)->append(id, rows, metrics, 12345).ok());
        ASSERT_TRUE((*history)->set_state(id, RunState::kCompleted, {}, {}, 1715157924000).ok());
    }
    auto history = RunHistory::open(db.toStdString());
    ASSERT_TRUE(history.ok());
    const auto runs = (*history)->runs();
    ASSERT_TRUE(runs.ok());
    ASSERT_EQ(runs->size(), 1u);
    const StoredRun& run = runs->front();
    EXPECT_EQ(run.id, id);
    EXPECT_EQ(run.name, "juniper");
    EXPECT_EQ(run.cluster, "This computer");
    EXPECT_EQ(run.job_id, "4242");
    EXPECT_EQ(run.state, RunState::kCompleted);
    EXPECT_EQ(run.started_ms, 1715151007632);
    EXPECT_EQ(run.finished_ms, 1715157924000);
    EXPECT_EQ(run.config_json, R"({"name": "juniper"})");
    EXPECT_EQ(run.log_offset, 12345u);
    const Result<RunMetrics> loaded = (*history)->load_metrics(id);
    ASSERT_TRUE(loaded.ok());
    ASSERT_EQ(loaded->points(Metric::kTrainLoss).size(), 46u);
    ASSERT_EQ(loaded->points(Metric::kEvalAccuracy).size(), 7u);
    EXPECT_EQ(loaded->points(Metric::kTrainLoss)[45].samples, 3760.0);
    EXPECT_EQ(loaded->points(Metric::kTrainLoss)[45].value, 1.2826);
    EXPECT_TRUE(std::isnan(loaded->points(Metric::kTrainLoss)[45].step));
    EXPECT_EQ(loaded->target, 0.925);
    EXPECT_EQ(loaded->run_start_ms, metrics.run_start_ms);
    EXPECT_EQ(loaded->status, "success");
    ASSERT_TRUE((*history)->remove_run(id).ok());
    EXPECT_TRUE((*history)->runs()->empty());
    EXPECT_EQ(*(*history)->point_count(id), 0);
}

TEST(FollowService, DeliversBatchesOffTheGuiThreadAndDropsStoppedFollows) {
    QTemporaryDir dir;
    const QString log = dir.filePath("live.txt");
    FollowService service(50);
    std::vector<FollowBatch> got;
    QObject::connect(&service, &FollowService::batch, [&got](const FollowBatch& b) { got.push_back(b); });
    const int id = service.follow(log);
    ASSERT_TRUE(testing_util::wait_until([&] { return !got.empty(); }));
    EXPECT_TRUE(got[0].missing);
    append_file(log, mllog_line("train_loss", 3.0, 1, 8) + "text\n");
    ASSERT_TRUE(testing_util::wait_until([&] { return got.size() >= 2; }));
    EXPECT_EQ(got[1].events.size(), 1u);
    EXPECT_EQ(got[1].lines, (QStringList{got[1].lines[0], "text"}));
    service.stop(id);
    append_file(log, mllog_line("train_loss", 2.0, 2, 16));
    testing_util::wait_until([] { return false; }, 300);
    EXPECT_EQ(got.size(), 2u);
    EXPECT_FALSE(service.active(id));
}

}  // namespace
}  // namespace slipway::app
