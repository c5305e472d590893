// RunsModel over a real run store: the store's rows; a reload merges changes in as row
// insertions, removals and changed cells (never a model reset), so a view's selection (persistent indexes)
// survives a store that changes under it; the train_loss curve is sampled data of its column.
#include <gtest/gtest.h>

#include <QTemporaryDir>

#include "core/run_state_display.h"
#include "history/run_history.h"
#include "runs/runs_model.h"

namespace slipway::app {
namespace {

class RunsModelTest : public ::testing::Test {
protected:
    void SetUp() override {
        Result<std::unique_ptr<RunHistory>> store =
            RunHistory::open(dir_.filePath("history.sqlite").toStdString());
        ASSERT_TRUE(store.ok()) << store.error();
        store_ = std::move(*store);
    }
    int64_t add(const QString& name, RunState state = RunState::kRunning) {
        StoredRun r;
        r.name = name.toStdString();
        r.cluster = "hpc";
        r.job_id = std::to_string(100 + ++added_);
        r.state = state;
        r.started_ms = now_ms();
        const Result<int64_t> id = store_->add_run(r);
        EXPECT_TRUE(id.ok()) << id.error();
        return id.ok() ? *id : 0;
    }
    static QString cell(const RunsModel& model, int row, int column) {
        return model.index(row, column).data().toString();
    }

    QTemporaryDir dir_;
    std::unique_ptr<RunHistory> store_;
    int added_ = 0;
};

TEST_F(RunsModelTest, StoreChangesAreMergedInAndPersistentIndexesFollowTheirRuns) {
    const int64_t first = add("first"), second = add("second");
    RunsModel model(store_.get(), nullptr);
    ASSERT_EQ(model.rowCount(), 2);
    ASSERT_GE(model.row_of(second), 0);
    const int first_at = model.row_of(first);
    ASSERT_GE(first_at, 0);
    EXPECT_EQ(cell(model, first_at, RunsModel::kNameColumn), "first");
    EXPECT_EQ(cell(model, first_at, RunsModel::kStateColumn), display_text(RunState::kRunning));
    EXPECT_EQ(model.headerData(RunsModel::kPointsColumn, Qt::Horizontal).toString(), "Points");
    const QPersistentModelIndex first_row = model.index(first_at, RunsModel::kNameColumn);

    int resets = 0;
    std::vector<int> inserted, removed, changed;  // the first row of each report
    QObject::connect(&model, &QAbstractItemModel::modelReset, [&] { ++resets; });
    QObject::connect(&model, &QAbstractItemModel::rowsInserted,
                     [&](const QModelIndex&, int first, int) { inserted.push_back(first); });
    QObject::connect(&model, &QAbstractItemModel::rowsRemoved,
                     [&](const QModelIndex&, int first, int) { removed.push_back(first); });
    QObject::connect(
        &model, &QAbstractItemModel::dataChanged,
        [&](const QModelIndex& top_left, const QModelIndex&) { changed.push_back(top_left.row()); });

    model.reload();  // nothing changed: nothing reported
    EXPECT_EQ(inserted.size() + removed.size() + changed.size(), 0u);

    const int64_t third = add("third");  // another process submitted it
    ASSERT_TRUE(store_->set_state(first, RunState::kCompleted, "exit 0").ok());
    model.reload();
    ASSERT_EQ(model.rowCount(), 3);
    EXPECT_EQ(inserted, std::vector<int>{model.row_of(third)});
    EXPECT_EQ(changed, std::vector<int>{model.row_of(first)});  // only the run whose state changed
    EXPECT_EQ(cell(model, model.row_of(first), RunsModel::kStateColumn),
              QStringLiteral("%1 (exit 0)").arg(display_text(RunState::kCompleted)));
    ASSERT_TRUE(first_row.isValid());  // a selected row stays on its run
    EXPECT_EQ(first_row.data().toString(), "first");

    ASSERT_TRUE(store_->remove_run(second).ok());
    model.reload();
    ASSERT_EQ(model.rowCount(), 2);
    EXPECT_EQ(removed.size(), 1u);
    EXPECT_EQ(model.row_of(second), -1);
    ASSERT_TRUE(first_row.isValid());
    EXPECT_EQ(first_row.row(), model.row_of(first));
    EXPECT_EQ(first_row.data().toString(), "first");
    EXPECT_EQ(resets, 0);
}

TEST_F(RunsModelTest, TheLossColumnCarriesTheSampledCurveAndSortsByItsLastValue) {
    const int64_t id = add("curve");
    std::vector<MetricPointRow> points;
    for (int step = 1; step <= 300; ++step) {
        MetricSample sample;
        sample.samples = step * 8;
        sample.step = step;
        sample.value = 5.0 - step * 0.01;
        points.emplace_back(Metric::kTrainLoss, sample);
    }
    ASSERT_TRUE(store_->append(id, points, RunMetrics(), 1000).ok());
    RunsModel model(store_.get(), nullptr);
    ASSERT_EQ(model.rowCount(), 1);
    const QModelIndex loss = model.index(0, RunsModel::kLossColumn);
    const QList<double> curve = loss.data(RunsModel::kCurveRole).value<QList<double>>();
    ASSERT_GE(curve.size(), 2);
    EXPECT_LE(curve.size(), RunsModel::kCurvePoints + 1);  // sampled by the store, not read whole
    EXPECT_DOUBLE_EQ(curve.front(), 4.99);
    EXPECT_DOUBLE_EQ(curve.back(), 2.0);
    EXPECT_DOUBLE_EQ(loss.data(RunsModel::kSortRole).toDouble(), 2.0);
    EXPECT_EQ(model.index(0, RunsModel::kPointsColumn).data().toString(), "300");
    EXPECT_EQ(model.index(0, RunsModel::kIdColumn).data(RunsModel::kSortRole).toLongLong(), id);
}

TEST_F(RunsModelTest, WithoutAStoreTheModelIsEmpty) {
    RunsModel model(nullptr, nullptr);
    model.reload();
    EXPECT_EQ(model.rowCount(), 0);
    EXPECT_EQ(model.run_id(0), 0);
    EXPECT_EQ(model.record(-1), nullptr);
}

}  // namespace
}  // namespace slipway::app
