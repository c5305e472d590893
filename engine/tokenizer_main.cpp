// slipway-tokenizer: the tokenizer commands without LibTorch. slipway-engine runs it for `tokenizer train
// --type unigram`, because SentencePiece's bundled protobuf cannot share a process with LibTorch's.
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/tokenizer_command.h"
#include "cli/unigram_train_command.h"
#include "contract/version.h"

int main(int argc, char** argv) {
    CLI::App app{"slipway-tokenizer: train, extend and compare tokenizer.json files", "slipway-tokenizer"};
    app.set_version_flag("--version", std::string("slipway-tokenizer ") + slipway::kVersion);
    app.require_subcommand(1);
    int exit_code = 0;
    slipway::engine::add_tokenizer_command(app, &exit_code, std::cout, std::cerr,
                                           slipway::engine::run_unigram_training);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    } catch (const std::exception& e) {
        std::cerr << "slipway-tokenizer: internal error: " << e.what() << std::endl;
        return 1;
    }
    return exit_code;
}
