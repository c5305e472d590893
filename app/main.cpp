// slipway: with a subcommand it runs headless on a QCoreApplication (no display needed); without one it
// opens the desktop window.
#include <CLI/CLI.hpp>
#include <QApplication>
#include <QCoreApplication>

#include <clocale>
#include <iostream>

#include "cli/logs_command.h"
#include "cli/remote_cli.h"
#include "i18n/ui_language.h"
#include "main_window.h"
#include "screenshot.h"

int main(int argc, char** argv) {
    CLI::App cli(
        "Slipway: fine-tune LLMs on Slurm GPU clusters. Without a subcommand, opens the desktop app.",
        "slipway");
    cli.set_version_flag("--version", "slipway " SLIPWAY_VERSION);
    cli.require_subcommand(0, 1);
    std::string open_path;
    bool follow = false;
    std::string screenshot_dir;
    std::string run_path;
    cli.add_option("--open", open_path, "Open this log file in the window");
    cli.add_flag("--follow", follow, "With --open: re-plot the log as it grows (a running job)");
    cli.add_option("--run", run_path,
                   "Open this run config in the editor and run it on This computer, plotted live (the demo)");
    cli.add_option("--screenshot", screenshot_dir,
                   "Write a PNG of every page (demo run, fixture logs) into this folder and exit");
    std::string language;
    cli.add_option("--lang", language,
                   "Interface language for this start (en, ru); by default the one chosen in View > "
                   "Language, else the system's")
        ->check(
            [](const std::string& code) {
                return slipway::app::is_ui_language(QString::fromStdString(code))
                           ? std::string()
                           : "unknown language " + code;
            },
            "LANGUAGE");
    slipway::app::LogsSummaryOptions logs_summary;
    const CLI::App* logs_summary_command = slipway::app::add_logs_command(cli, logs_summary);
    using slipway::track::ExportFormat;
    slipway::app::LogsExportOptions logs_tensorboard, logs_mlflow;
    const CLI::App* logs_tensorboard_command =
        slipway::app::add_logs_export_command(cli, ExportFormat::kTensorBoard, logs_tensorboard);
    const CLI::App* logs_mlflow_command =
        slipway::app::add_logs_export_command(cli, ExportFormat::kMlflow, logs_mlflow);
    slipway::app::RemoteCommands remote_commands;
    slipway::app::add_remote_commands(cli, remote_commands);
    CLI11_PARSE(cli, argc, argv);

    QCoreApplication::setApplicationName(QStringLiteral("slipway"));
    QCoreApplication::setApplicationVersion(QStringLiteral(SLIPWAY_VERSION));
    if (!cli.get_subcommands().empty()) {
        // Headless. Qt's SQLite driver (the run history) is a plugin, loaded only with an application
        // object; Qt sets the C locale from the environment, so numbers are put back to "C" (parsing and
        // printing must not change with LANG).
        QCoreApplication app(argc, argv);
        std::setlocale(LC_NUMERIC, "C");
        if (const std::optional<int> code =
                slipway::app::run_remote_commands(remote_commands, std::cout, std::cerr)) {
            return *code;
        }
        if (logs_summary_command->parsed())
            return slipway::app::run_logs_summary(logs_summary, std::cout, std::cerr);
        if (logs_tensorboard_command->parsed())
            return slipway::app::run_logs_export(ExportFormat::kTensorBoard, logs_tensorboard, std::cout,
                                                 std::cerr);
        if (logs_mlflow_command->parsed())
            return slipway::app::run_logs_export(ExportFormat::kMlflow, logs_mlflow, std::cout, std::cerr);
    }

    QApplication app(argc, argv);
    // Qt took the environment's locale: numbers typed, imported or exported (a training script's
    // --learning_rate 0.0002, CSV) are read and written the C way; Qt's own widgets use QLocale.
    std::setlocale(LC_NUMERIC, "C");
    // Before the first widget: widgets translate their texts when they are built.
    const QString ui_language = slipway::app::effective_ui_language(QString::fromStdString(language));
    if (!slipway::app::install_translators(app, ui_language))
        std::cerr << "slipway: no translation for " << ui_language.toStdString() << "; using English\n";
    if (!screenshot_dir.empty()) {
        slipway::app::MainWindow window;
        const auto written = slipway::app::take_screenshots(window, QString::fromStdString(screenshot_dir));
        if (!written.ok()) {
            std::cerr << written.error() << "\n";
            return 1;
        }
        for (const QString& path : *written)
            std::cout << path.toStdString() << "\n";
        return 0;
    }
    slipway::app::MainWindow window;
    if (!open_path.empty()) {
        const QString path = QString::fromStdString(open_path);
        if (follow) {
            window.follow_log(path);
        } else if (const slipway::Status status = window.open_log(path); !status.ok()) {
            std::cerr << status.message() << "\n";
            return 1;
        }
    }
    if (!run_path.empty()) {
        if (const slipway::Status status = window.open_run_config(QString::fromStdString(run_path));
            !status.ok()) {
            std::cerr << status.message() << "\n";
            return 1;
        }
        if (const auto key = window.submit_local(); !key.ok()) {
            std::cerr << key.error() << "\n";
            return 1;
        }
    }
    window.show();
    return app.exec();
}
