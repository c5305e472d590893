// slipway-engine: the headless trainer that sbatch starts on every rank, and its helper commands.
#include <malloc.h>

#include <iostream>
#include <new>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/adapt_commands.h"
#include "cli/bench_comm_command.h"
#include "cli/config_commands.h"
#include "cli/eval_command.h"
#include "cli/export_command.h"
#include "cli/generate_command.h"
#include "cli/launch_command.h"
#include "cli/model_commands.h"
#include "cli/plan_command.h"
#include "cli/prepare_command.h"
#include "cli/tokenize_command.h"
#include "cli/tokenizer_command.h"
#include "cli/train_command.h"
#include "contract/faulty_file_system.h"
#include "contract/version.h"

int main(int argc, char** argv) {
    // Training allocates and frees the same large activation buffers every step. glibc would serve each
    // one with a fresh mmap and give it back on free, paying page faults every step; keeping them on the
    // heap lets the next step reuse them.
    mallopt(M_MMAP_THRESHOLD, 128 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    if (const slipway::Status faults = slipway::install_file_system_faults_from_environment(); !faults.ok()) {
        std::cerr << faults.message() << "\n";
        return 2;
    }
    CLI::App app{"slipway-engine: LLM fine-tuning engine for Slurm clusters (LibTorch)", "slipway-engine"};
    app.set_version_flag("--version", std::string("slipway-engine ") + slipway::kVersion);
    app.require_subcommand(1);
    int exit_code = 0;
    slipway::engine::add_config_commands(app, &exit_code, std::cout, std::cerr);
    slipway::engine::add_prepare_command(app, &exit_code, std::cout, std::cerr);
    slipway::engine::add_tokenize_command(app, &exit_code, std::cin, std::cout, std::cerr);
    slipway::engine::add_tokenizer_command(app, &exit_code, std::cout, std::cerr);
    slipway::engine::add_model_commands(app, &exit_code, std::cout, std::cerr);
    slipway::engine::add_export_command(app, &exit_code, std::cout, std::cerr);
    slipway::engine::add_adapt_commands(app, &exit_code, std::cout, std::cerr);
    slipway::engine::add_eval_command(app, &exit_code, std::cout, std::cerr);
    slipway::engine::add_generate_command(app, &exit_code, std::cin, std::cout, std::cerr);
    slipway::engine::add_train_command(app, &exit_code, std::cout, std::cerr);
    slipway::engine::add_launch_command(app, &exit_code, std::cout, std::cerr);
    slipway::engine::add_bench_comm_command(app, &exit_code, std::cout, std::cerr);
    slipway::engine::add_plan_command(app, &exit_code, std::cout, std::cerr);
    // The commands run inside parse(). Their library calls return a Status; whatever escapes anyway (a bug,
    // out of memory) is an error message and exit 1, never std::terminate's abort.
    auto internal_error = [&app](const std::string& what) {
        std::string command;
        for (const CLI::App* sub : app.get_subcommands())
            command += " " + sub->get_name();
        std::cerr << "slipway-engine" << command << ": internal error: " << what << std::endl;
        return 1;
    };
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    } catch (const std::bad_alloc& e) {
        return internal_error(std::string("out of memory (") + e.what() + ")");
    } catch (const std::exception& e) {
        return internal_error(e.what());
    } catch (...) {
        return internal_error("an exception that is not a std::exception");
    }
    return exit_code;
}
