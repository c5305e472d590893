// `slipway logs summary [--json] FILE...`: the summary of each training log, as JSON lines or a table.
// `slipway logs tensorboard FILE... --out DIR`: each log's numbers as TensorBoard events in DIR/<its name>/;
// `slipway logs mlflow FILE... --out DIR`: each log as a run in the MLflow file store DIR.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "contract/log_summary.h"
#include "track/log_export.h"

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

struct LogsExportOptions {
    std::vector<std::string> files;
    std::string out;
};

// Adds `logs tensorboard` or `logs mlflow` under the `logs` command add_logs_command made; returns it, as
// above.
CLI::App* add_logs_export_command(CLI::App& cli, track::ExportFormat format, LogsExportOptions& options);

// Writes each file's points as a run named <name>, the file's name without its extension (its folder's for an
// mllog.txt): TensorBoard events in options.out/<name>/, or an MLflow run in the file store options.out. One
// line per file on `out`; a file that fails is named on `err` and the others are still written (exit code 1
// then).
int run_logs_export(track::ExportFormat format, const LogsExportOptions& options, std::ostream& out,
                    std::ostream& err);

// The table printed without --json: file, lines, mllog, bad, status, time to train (minutes), the last
// eval_accuracy and the number of eval_accuracy and train_loss points; "-" where unknown.
std::string format_summary_table(const std::vector<LogSummary>& summaries);

}  // namespace slipway::app
