// `slipway logs summary`, `logs tensorboard` and `logs mlflow`: option wiring, per-file error handling and
// the table layout.
#include "cli/logs_command.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <iomanip>
#include <locale>
#include <sstream>

#include "track/log_export.h"

namespace slipway::app {
namespace {

constexpr size_t kColumns = 9;
using Row = std::array<std::string, kColumns>;
// Text columns are left-aligned, numbers right-aligned.
constexpr std::array<bool, kColumns> kLeftAligned = {true,  false, false, false, true,
                                                     false, false, false, false};

std::string minutes(int64_t ms) {
    std::ostringstream out;
    out.imbue(std::locale::classic());  // QCoreApplication sets the C locale from the environment
    out << std::fixed << std::setprecision(2) << static_cast<double>(ms) / 60000.0;
    return out.str();
}

Row table_row(const LogSummary& s) {
    return {s.file,
            std::to_string(s.lines),
            std::to_string(s.mllog_lines),
            std::to_string(s.bad_lines),
            s.status.value_or("-"),
            s.time_to_train_ms ? minutes(*s.time_to_train_ms) : "-",
            s.eval_accuracy.empty() ? "-" : format_python_json(s.eval_accuracy.back().value),
            std::to_string(s.eval_accuracy.size()),
            std::to_string(s.train_loss.size())};
}

}  // namespace

CLI::App* add_logs_command(CLI::App& cli, LogsSummaryOptions& options) {
    CLI::App* logs = cli.add_subcommand("logs", "Read training logs (MLPerf MLLOG lines)");
    logs->require_subcommand(1);
    CLI::App* summary = logs->add_subcommand(
        "summary", "Line counts, run status, time to train and eval_accuracy/train_loss points of each log");
    summary->add_flag("--json", options.json, "One JSON object per file per line instead of a table");
    summary->add_option("FILE", options.files, "Log files (e.g. slurm-1234.out)")->required();
    return summary;
}

CLI::App* add_logs_export_command(CLI::App& cli, track::ExportFormat format, LogsExportOptions& options) {
    const bool tensorboard = format == track::ExportFormat::kTensorBoard;
    CLI::App* command = cli.get_subcommand("logs")->add_subcommand(
        tensorboard ? "tensorboard" : "mlflow",
        tensorboard ? "Write each log's metrics as TensorBoard events (train/loss, eval/accuracy, ...)"
                    : "Write each log's metrics as a run in an MLflow file store (mlflow ui "
                      "--backend-store-uri DIR)");
    command->add_option("FILE", options.files, "Log files (mllog.txt, slurm-1234.out, MLPerf logs)")
        ->required();
    command
        ->add_option("--out", options.out,
                     tensorboard ? "TensorBoard's log folder; each file gets a run in it"
                                 : "The MLflow file store (an mlruns folder); each file gets a run in it")
        ->required();
    return command;
}

int run_logs_export(track::ExportFormat format, const LogsExportOptions& options, std::ostream& out,
                    std::ostream& err) {
    bool failed = false;
    for (const std::string& file : options.files) {
        const std::filesystem::path path(file);
        const std::filesystem::path named = path.filename() == "mllog.txt" ? path.parent_path() : path;
        std::string name = std::filesystem::absolute(named).lexically_normal().stem().string();
        if (name.empty()) name = "run";
        Result<track::LogExport> written = track::export_log(file, format, options.out, name);
        if (!written.ok()) {
            err << "slipway: " << file << ": " << written.error() << '\n';
            failed = true;
            continue;
        }
        out << file << " -> " << written->written << " (" << written->points << " points";
        if (written->bad_lines > 0) out << ", " << written->bad_lines << " bad MLLOG lines skipped";
        out << ")\n";
    }
    return failed ? 1 : 0;
}

int run_logs_summary(const LogsSummaryOptions& options, std::ostream& out, std::ostream& err) {
    bool failed = false;
    std::vector<LogSummary> summaries;
    for (const std::string& file : options.files) {
        Result<LogSummary> summary = summarize_log_file(file);
        if (!summary.ok()) {
            err << "slipway: " << summary.error() << '\n';
            failed = true;
            continue;
        }
        if (options.json) {
            // `replace`: a file name that is not UTF-8 must not abort the output.
            out << to_json(*summary).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
                << '\n';
            out.flush();
        } else {
            summaries.push_back(std::move(summary).value());
        }
    }
    if (!options.json && !summaries.empty()) out << format_summary_table(summaries);
    return failed ? 1 : 0;
}

std::string format_summary_table(const std::vector<LogSummary>& summaries) {
    std::vector<Row> rows = {
        {"file", "lines", "mllog", "bad", "status", "ttt_min", "last_eval", "evals", "losses"}};
    for (const LogSummary& s : summaries)
        rows.push_back(table_row(s));

    std::array<size_t, kColumns> widths{};
    for (const Row& row : rows) {
        for (size_t c = 0; c < kColumns; ++c)
            widths[c] = std::max(widths[c], row[c].size());
    }
    std::ostringstream out;
    for (const Row& row : rows) {
        std::string line;
        for (size_t c = 0; c < kColumns; ++c) {
            if (c > 0) line += "  ";
            const std::string padding(widths[c] - row[c].size(), ' ');
            line += kLeftAligned[c] ? row[c] + padding : padding + row[c];
        }
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out << line << '\n';
    }
    return out.str();
}

}  // namespace slipway::app
