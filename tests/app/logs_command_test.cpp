// In-process tests of `logs summary` (table layout, per-file errors).
#include "cli/logs_command.h"
#include "test_paths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

namespace slipway::app {
namespace {

LogSummary sample_summary() {
    LogSummary s;
    s.file = "run.log";
    s.lines = 12;
    s.mllog_lines = 7;
    s.bad_lines = 1;
    s.status = "aborted";
    s.run_start_ms = 1000;
    s.run_stop_ms = 91000;
    s.time_to_train_ms = 90000;
    s.eval_accuracy = {{64.0, 0.97}, {128.0, 0.925}};
    s.train_loss = {{8.0, 2.5}};
    return s;
}

TEST(LogsSummaryTable, AlignsColumnsAndMarksUnknownValues) {
    LogSummary unknown;
    unknown.file = "a-much-longer-name.out";
    unknown.lines = 3;
    EXPECT_EQ(format_summary_table({sample_summary(), unknown}),
              "file                    lines  mllog  bad  status   ttt_min  last_eval  evals  losses\n"
              "run.log                    12      7    1  aborted     1.50      0.925      2       1\n"
              "a-much-longer-name.out      3      0    0  -              -          -      0       0\n");
}

TEST(LogsSummaryRun, JsonLinesAndErrors) {
    LogsSummaryOptions options;
    options.json = true;
    options.files = {"/nonexistent/a.log",
                     std::string(test_paths::test_data_dir("/mlperf-logs/juniper-h100n1-result_0.txt"))};
    std::ostringstream out;
    std::ostringstream err;
    EXPECT_EQ(run_logs_summary(options, out, err), 1);
    EXPECT_NE(err.str().find("'/nonexistent/a.log'"), std::string::npos) << err.str();
    const std::string text = out.str();
    EXPECT_EQ(text.rfind("{\"file\":", 0), 0u);
    EXPECT_NE(text.find("\"time_to_train_ms\":6916764"), std::string::npos);
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);

    options.files.erase(options.files.begin());
    std::ostringstream out2;
    std::ostringstream err2;
    EXPECT_EQ(run_logs_summary(options, out2, err2), 0);
    EXPECT_EQ(err2.str(), "");
    EXPECT_EQ(out2.str(), out.str());
}

}  // namespace
}  // namespace slipway::app
