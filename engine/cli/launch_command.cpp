// The launch command (launch_command.h): options to dist::launch, its exit code to the shell.
#include "cli/launch_command.h"

#include <unistd.h>

#include <climits>
#include <memory>
#include <ostream>

#include <CLI/CLI.hpp>

#include "dist/launcher.h"

namespace slipway::engine {
namespace {

std::string self_executable() {
    char path[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string("slipway-engine");
}

}  // namespace

void add_launch_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err) {
    auto options = std::make_shared<dist::LaunchOptions>();
    auto no_label = std::make_shared<bool>(false);
    CLI::App* cmd = app.add_subcommand(
        "launch",
        "Run N local ranks of a command, like torchrun: launch --nproc 2 -- train RUN.json [--flag value]");
    cmd->add_option("--nproc", options->nproc, "Number of ranks")->required()->check(CLI::Range(1, 1024));
    cmd->add_option("--threads-per-rank", options->threads_per_rank,
                    "OMP_NUM_THREADS of each rank (0 = this machine's cores / nproc)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--master-addr", options->master_addr, "Rendezvous address")->capture_default_str();
    cmd->add_option("--master-port", options->master_port,
                    "Rendezvous port (0 = a free one that rank 0 binds and publishes to the others)")
        ->check(CLI::Range(0, 65535));
    cmd->add_option("--grace-s", options->grace_s,
                    "After a rank fails, seconds the others get to exit on their own before SIGTERM")
        ->capture_default_str();
    cmd->add_option(
           "--stop-timeout-s", options->stop_timeout_s,
           "After SIGTERM/SIGINT to the launcher, seconds the ranks get to checkpoint before SIGKILL")
        ->capture_default_str();
    cmd->add_flag("--no-label", *no_label, "Do not prefix output lines with the rank");
    cmd->add_option("command", options->command,
                    "After --: an engine subcommand and its arguments, or a program path and its arguments")
        ->required()
        ->expected(-1);
    cmd->callback([options, no_label, exit_code, &out, &err] {
        options->label = !*no_label;
        options->self_exe = self_executable();
        Result<dist::LaunchResult> result = dist::launch(*options, out, err);
        if (!result.ok()) {
            err << result.error() << "\n";
            *exit_code = 1;
            return;
        }
        err << result->summary << "\n";
        *exit_code = result->exit_code;
    });
}

}  // namespace slipway::engine
