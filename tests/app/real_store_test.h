// The fixture of the run service's tests over the real run history: history.sqlite in a temporary folder,
// its RunStore (`real_`, to read rows back), and a RecordingStore over it (`store_`, which the code under
// test writes, every write written down).
#pragma once

#include <gtest/gtest.h>

#include <QTemporaryDir>

#include <memory>

#include "history/history_run_store.h"
#include "history/run_history.h"
#include "recording_store.h"

namespace slipway::app {

class RealStoreTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(dir_.isValid());
        Result<std::unique_ptr<RunHistory>> history =
            RunHistory::open(dir_.filePath("history.sqlite").toStdString());
        ASSERT_TRUE(history.ok()) << history.error();
        history_ = std::move(*history);
        real_ = std::make_unique<HistoryRunStore>(*history_);
        store_ = std::make_unique<RecordingStore>(*real_);
    }

    QTemporaryDir dir_;
    std::unique_ptr<RunHistory> history_;
    std::unique_ptr<HistoryRunStore> real_;
    std::unique_ptr<RecordingStore> store_;
};

}  // namespace slipway::app
