// `slipway logs summary [--json] FILE...`: the summary of each training log, as JSON lines or a table.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "contract/log_summary.h"

namespace CLI {
class App;
}

namespace slipway::app {

struct LogsSummaryOptions {
    bool json = false;
    std::vector<std::string> files;
};

// Adds `logs summary` under `cli`; parsing fills `options`. Returns the `summary` subcommand so the caller
// can tell whether it was given.
CLI::App* add_logs_command(CLI::App& cli, LogsSummaryOptions& options);

// Summarizes every file. One that cannot be read is named on `err` and the others are still printed;
// the result is the exit code: 1 if any file failed, else 0.
int run_logs_summary(const LogsSummaryOptions& options, std::ostream& out, std::ostream& err);

// The table printed without --json: file, lines, mllog, bad, status, time to train (minutes), the last
// eval_accuracy and the number of eval_accuracy and train_loss points; "-" where unknown.
std::string format_summary_table(const std::vector<LogSummary>& summaries);

}  // namespace slipway::app
