// The `config` subcommands of slipway-engine: check run configs, fill in defaults, convert seed-style
// flags, and print the field documentation.
#include "cli/config_commands.h"

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "contract/hf_flags.h"
#include "contract/run_config.h"
#include "contract/run_config_schema.h"

namespace slipway::engine {
namespace {

// Parse + validate one file, printing each problem prefixed by the file. Returns true when it has no errors.
bool check_file(const std::string& path, std::ostream& out, std::ostream& err) {
    Result<nlohmann::json> json = read_run_document(path);
    if (!json.ok()) {
        err << json.error() << "\n";
        return false;
    }
    ParsedRunConfig parsed = parse_run_config(*json);
    ConfigProblems problems = parsed.problems;
    const ConfigProblems checks = validate(parsed.config, validation_context_for(parsed.config));
    problems.insert(problems.end(), checks.begin(), checks.end());
    for (const ConfigProblem& p : problems)
        err << path << ": " << p.to_string() << "\n";
    const bool ok = !has_errors(problems);
    if (ok) {
        out << path << ": ok (world size " << parsed.config.world_size() << ", global batch "
            << parsed.config.global_batch_size() << " sequences = " << parsed.config.tokens_per_step()
            << " tokens per step)\n";
    }
    return ok;
}

}  // namespace

void add_config_commands(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err) {
    CLI::App* config = app.add_subcommand("config", "Check, print and convert run configs");
    config->require_subcommand(1);

    // Option storage lives as long as the callbacks that hold it.
    struct Options {
        std::vector<std::string> files;
        std::string print_file;
        std::vector<std::string> flags;
        std::string base_file;
    };
    auto options = std::make_shared<Options>();
    std::vector<std::string>* files = &options->files;
    CLI::App* validate_cmd = config->add_subcommand("validate", "Check run configs; list every problem");
    validate_cmd->add_option("files", *files, "Run config JSON files")->required()->check(CLI::ExistingFile);
    validate_cmd->callback([=, &out, &err, keep = options] {
        bool all_ok = true;
        for (const std::string& f : *files)
            all_ok = check_file(f, out, err) && all_ok;
        *exit_code = all_ok ? 0 : 1;
    });

    std::string* print_file = &options->print_file;
    CLI::App* print_cmd = config->add_subcommand("print", "Print a run config with every default filled in");
    print_cmd->add_option("file", *print_file, "Run config JSON file")->required()->check(CLI::ExistingFile);
    print_cmd->callback([=, &out, &err, keep = options] {
        Result<nlohmann::json> json = read_run_document(*print_file);
        if (!json.ok()) {
            err << json.error() << "\n";
            *exit_code = 1;
            return;
        }
        ParsedRunConfig parsed = parse_run_config(*json);
        ConfigProblems problems = parsed.problems;
        const ConfigProblems checks = validate(parsed.config, validation_context_for(parsed.config));
        problems.insert(problems.end(), checks.begin(), checks.end());
        for (const ConfigProblem& p : problems)
            err << *print_file << ": " << p.to_string() << "\n";
        if (!parsed.problems.empty()) {  // unknown keys or wrong types: the printout would lose them
            *exit_code = 1;
            return;
        }
        out << to_json(parsed.config).dump(2) << "\n";
        *exit_code = has_errors(problems) ? 1 : 0;
    });

    std::vector<std::string>* flags = &options->flags;
    std::string* base_file = &options->base_file;
    CLI::App* from_args = config->add_subcommand(
        "from-args",
        "Build a run config from seed-style training flags: config from-args -- --learning_rate 1e-4 ...");
    from_args->add_option("--base", *base_file, "Start from this run config instead of the defaults")
        ->check(CLI::ExistingFile);
    from_args->add_option("flags", *flags, "HF TrainingArguments-style flags (after --)");
    from_args->callback([=, &out, &err, keep = options] {
        RunConfig run;
        if (!base_file->empty()) {
            Result<nlohmann::json> json = read_run_document(*base_file);
            if (!json.ok()) {
                err << json.error() << "\n";
                *exit_code = 1;
                return;
            }
            ParsedRunConfig parsed = parse_run_config(*json);
            if (!parsed.problems.empty()) {
                err << *base_file << ":\n" << format_problems(parsed.problems);
                *exit_code = 1;
                return;
            }
            run = parsed.config;
        }
        Result<FlagReport> report = apply_hf_flags(run, *flags);
        if (!report.ok()) {
            err << report.error() << "\n";
            *exit_code = 1;
            return;
        }
        for (const std::string& note : report->notes)
            err << "note: " << note << "\n";
        const ConfigProblems problems = validate(run);
        if (has_errors(problems)) {
            err << "note: the result is not valid yet; fix these before training:\n"
                << format_problems(problems);
        }
        out << to_json(run).dump(2) << "\n";
        *exit_code = 0;
    });

    CLI::App* schema = config->add_subcommand("schema", "Document every run config field and training flag");
    schema->callback([=, &out] {
        out << run_config_schema_markdown()
            << "\n## Training-script flags (`train --flag value`, `config from-args`)\n\n"
            << "| flag | sets | meaning |\n|---|---|---|\n";
        for (const HfFlag& f : hf_flags())
            out << "| `--" << f.name << "` | `" << f.target << "` | " << f.help << " |\n";
        *exit_code = 0;
    });
}

}  // namespace slipway::engine
