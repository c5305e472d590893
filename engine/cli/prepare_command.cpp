// The prepare command: loads and validates a run config, builds (or reuses) its token cache, shows
// progress on stderr and prints one summary line on stdout.
#include "cli/prepare_command.h"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "contract/run_config.h"
#include "contract/version.h"
#include "data/prepare.h"

namespace slipway::engine {
namespace {

struct PrepareCommandOptions {
    std::string run_file;
    int64_t threads = 0;
    bool skip_bad = false;
};

std::string megabytes(double bytes) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.1f", bytes / 1e6);
    return text;
}

std::string split_summary(const char* name, const data::SplitCounts& c) {
    return std::string(name) + " " + std::to_string(c.documents) + " docs " + std::to_string(c.tokens) +
           " tokens " + std::to_string(c.blocks) + " blocks (dropped " + std::to_string(c.tokens_dropped) +
           ", repeated " + std::to_string(c.tokens_repeated) + ")";
}

int run_prepare(const PrepareCommandOptions& o, std::ostream& out, std::ostream& err) {
    Result<RunConfig> config = load_run_config(o.run_file);
    if (!config.ok()) {
        err << config.error() << "\n";
        return 1;
    }
    const bool tty = isatty(STDERR_FILENO) != 0;
    data::PrepareOptions options;
    options.threads = o.threads;
    options.skip_bad = o.skip_bad;
    options.engine_version = kVersion;
    options.progress_interval_s = tty ? 0.25 : 2.0;  // a log file gets a line every 2 s
    options.progress = [&err, tty](const data::PrepareProgress& p) {
        const double percent =
            p.bytes_total > 0 ? 100.0 * static_cast<double>(p.bytes_done) / p.bytes_total : 100.0;
        char line[256];
        std::snprintf(line, sizeof(line), "prepare: %.0f%% %llu docs, %llu tokens, %.1f MB/s", percent,
                      static_cast<unsigned long long>(p.documents), static_cast<unsigned long long>(p.tokens),
                      p.seconds > 0 ? static_cast<double>(p.bytes_done) / 1e6 / p.seconds : 0.0);
        err << line << (tty ? "\r" : "\n") << std::flush;
    };
    Result<data::PrepareReport> report = data::prepare_token_cache(*config, options);
    if (tty) err << "\33[2K" << std::flush;  // clear the progress line
    if (!report.ok()) {
        err << report.error() << "\n";
        return 1;
    }
    if (!report->format_found.empty())
        err << "data format: " << report->meta.data_format
            << " (/data/format auto: the train file's first line has " << report->format_found << ")\n";
    if (report->cache_hit) {
        out << "cache hit: " << report->cache_path << "\n";
        return 0;
    }
    for (const std::string& s : report->skipped)
        err << s << " (skipped)\n";
    if (report->meta.bad_lines_skipped > report->skipped.size()) {
        err << "... and " << report->meta.bad_lines_skipped - report->skipped.size()
            << " more bad line(s) skipped\n";
    }
    for (const std::string& w : report->warnings)
        err << "warning: " << w << "\n";
    const data::CacheMeta& m = report->meta;
    if (report->stale_temporaries_removed > 0) {
        err << "removed " << report->stale_temporaries_removed
            << " unfinished cache folder(s) of killed runs\n";
    }
    out << "prepared " << report->cache_path << ": " << m.documents_read << " documents ("
        << m.duplicates_removed << " duplicates removed, " << m.bad_lines_skipped << " bad lines skipped), "
        << split_summary("train", m.train) << ", " << split_summary("validation", m.validation)
        << ", block_size " << m.block_size << ", eos " << m.eos_token_id << "; "
        << megabytes(static_cast<double>(report->bytes_read)) << " MB in " << megabytes(report->seconds * 1e6)
        << " s ("
        << megabytes(report->seconds > 0 ? static_cast<double>(report->bytes_read) / report->seconds : 0.0)
        << " MB/s, " << report->threads << " threads)\n";
    if (m.conversations()) {
        out << data::describe_conversations(m) << "\n";
    } else if (m.document_prefix_ids.empty()) {
        out << "documents start with no BOS: " << m.document_prefix_source << "\n";
    } else {
        out << "documents start with BOS " << m.document_prefix_ids.front() << ": "
            << m.document_prefix_source << "\n";
    }
    return 0;
}

}  // namespace

void add_prepare_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err) {
    auto options = std::make_shared<PrepareCommandOptions>();
    CLI::App* cmd =
        app.add_subcommand("prepare", "Tokenize a run's data into its token cache (reused when unchanged)");
    cmd->add_option("run", options->run_file, "Run config JSON")->required()->check(CLI::ExistingFile);
    cmd->add_option("--threads", options->threads,
                    "Tokenizer threads (overrides data.preprocessing_num_workers)")
        ->check(CLI::Range(int64_t{0}, int64_t{4096}));
    cmd->add_flag("--skip-bad", options->skip_bad,
                  "Skip bad lines (counted and reported) instead of failing");
    cmd->callback([options, exit_code, &out, &err] { *exit_code = run_prepare(*options, out, err); });
}

}  // namespace slipway::engine
