// The `tokenizer` commands: train (BPE or SentencePiece Unigram), extend (new BPE merges on a base
// tokenizer.json) and stats (corpus measures side by side). Outputs are written atomically and durably.
#include "cli/tokenizer_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <utility>

#include <CLI/CLI.hpp>

#include "cli/tokenizer_io.h"
#include "contract/run_config.h"
#include "tokenizer/bpe_extender.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/tokenizer_stats.h"

namespace slipway::engine {
namespace {

struct TrainOptions {
    CorpusOptions corpus;
    std::string type = "bpe";
    size_t vocab_size = 8192;
    int64_t min_frequency = 2;
    double character_coverage = 0.9995;
    std::string normalization = "nfkc";
    std::string out_path;
};

struct ExtendOptions {
    CorpusOptions corpus;
    std::string base_path;
    size_t add = 1000;
    int64_t min_frequency = 2;
    std::string out_path;
};

struct StatsOptions {
    CorpusOptions corpus;
    std::vector<std::string> tokenizers;
    bool json = false;
};

int run_train_bpe(const TrainOptions& o, std::ostream& out, std::ostream& err) {
    tokenizer::BpeTrainerOptions options;
    options.vocab_size = o.vocab_size;
    options.min_frequency = o.min_frequency;
    tokenizer::BpeTrainer trainer(options);
    Result<size_t> documents =
        for_each_text(o.corpus, [&](const std::string& text) { return trainer.add_text(text); });
    if (!documents.ok()) {
        err << documents.error() << "\n";
        return 1;
    }
    err << "tokenizer train: " << *documents << " documents, " << trainer.distinct_words()
        << " distinct words\n";
    Result<nlohmann::ordered_json> json = trainer.train([&err](size_t tokens, size_t target) {
        err << "tokenizer train: " << tokens << " / " << target << " tokens\r" << std::flush;
    });
    err << "\n";
    if (!json.ok()) {
        err << json.error() << "\n";
        return 1;
    }
    if (write_tokenizer(o.out_path, json->dump(2) + "\n", err) != 0) return 1;
    out << o.out_path << ": " << (*json)["model"]["vocab"].size() + (*json)["added_tokens"].size()
        << " tokens, " << (*json)["model"]["merges"].size() << " merges\n";
    return 0;
}

// Runs `slipway-tokenizer tokenizer train --type unigram ...` from this executable's folder.
int run_unigram_in_helper(const UnigramTrainRequest& r, std::ostream& out, std::ostream& err) {
    char self[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    const std::string dir =
        n > 0 ? std::filesystem::path(std::string(self, static_cast<size_t>(n))).parent_path().string()
              : std::string(".");
    const std::string helper = dir + "/slipway-tokenizer";
    char coverage[32];
    std::snprintf(coverage, sizeof(coverage), "%.17g", r.character_coverage);
    std::vector<std::string> args = {helper, "tokenizer", "train", "--type", "unigram"};
    for (const auto& [flag, value] : {std::pair<const char*, std::string>{"--field", r.field},
                                      {"--vocab-size", std::to_string(r.vocab_size)},
                                      {"--character-coverage", coverage},
                                      {"--normalization", r.normalization},
                                      {"--out", r.out_path}}) {
        args.push_back(flag);
        args.push_back(value);
    }
    for (const std::string& c : r.corpus) {
        args.push_back("--corpus");
        args.push_back(c);
    }
    std::vector<char*> argv;
    for (std::string& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    out << std::flush;
    err << std::flush;
    const pid_t pid = fork();
    if (pid < 0) {
        err << "tokenizer train: fork failed\n";
        return 1;
    }
    if (pid == 0) {
        execv(helper.c_str(), argv.data());
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            err << "tokenizer train: waitpid failed\n";
            return 1;
        }
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        err << "tokenizer train --type unigram: cannot run " << helper
            << " (SentencePiece runs there, apart from LibTorch)\n";
        return 1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int run_extend(const ExtendOptions& o, std::ostream& out, std::ostream& err) {
    Result<nlohmann::json> base = read_json_file(o.base_path);
    if (!base.ok()) {
        err << base.error() << "\n";
        return 1;
    }
    Result<tokenizer::BpeExtender> extender =
        tokenizer::BpeExtender::create(std::move(*base), {o.add, o.min_frequency});
    if (!extender.ok()) {
        err << o.base_path << ": " << extender.error() << "\n";
        return 1;
    }
    Result<size_t> documents =
        for_each_text(o.corpus, [&](const std::string& text) { return extender->add_text(text); });
    if (!documents.ok()) {
        err << documents.error() << "\n";
        return 1;
    }
    err << "tokenizer extend: " << *documents << " documents, " << extender->distinct_words()
        << " distinct words\n";
    Result<tokenizer::BpeExtension> extension = extender->extend([&err](size_t tokens, size_t target) {
        err << "tokenizer extend: " << tokens << " / " << target << " new tokens\r" << std::flush;
    });
    err << "\n";
    if (!extension.ok()) {
        err << extension.error() << "\n";
        return 1;
    }
    if (write_tokenizer(o.out_path, extension->document.dump(2) + "\n", err) != 0) return 1;
    out << o.out_path << ": " << extension->new_tokens << " new tokens (ids " << extension->first_new_id
        << ".." << extension->first_new_id + static_cast<int64_t>(extension->new_tokens) - 1 << "), "
        << extension->new_merges << " new merges\n";
    return 0;
}

int run_stats(const StatsOptions& o, std::ostream& out, std::ostream& err) {
    std::vector<tokenizer::Tokenizer> tokenizers;
    std::vector<tokenizer::TokenizerStats> stats;
    for (const std::string& path : o.tokenizers) {
        Result<tokenizer::Tokenizer> t = tokenizer::Tokenizer::from_file(path);
        if (!t.ok()) {
            err << t.error() << "\n";
            return 1;
        }
        tokenizer::TokenizerStats s;
        s.name = path;
        s.vocab_size = t->vocab_size();
        stats.push_back(std::move(s));
        tokenizers.push_back(std::move(*t));
    }
    Result<size_t> documents = for_each_text(o.corpus, [&](const std::string& text) {
        for (size_t i = 0; i < tokenizers.size(); ++i) {
            if (Status s = tokenizer::add_to_stats(tokenizers[i], text, stats[i]); !s.ok())
                return Status::Error(o.tokenizers[i] + ": " + s.message());
        }
        return Status::Ok();
    });
    if (!documents.ok()) {
        err << documents.error() << "\n";
        return 1;
    }
    if (o.json) {
        out << tokenizer::stats_json(stats).dump(2) << "\n";
    } else {
        out << tokenizer::format_stats_table(stats);
    }
    return 0;
}

}  // namespace

void add_tokenizer_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err,
                           UnigramTrainRunner unigram) {
    if (!unigram) unigram = run_unigram_in_helper;
    CLI::App* tokenizer = app.add_subcommand("tokenizer", "Tokenizer tools");
    tokenizer->require_subcommand(1);

    auto train_options = std::make_shared<TrainOptions>();
    CLI::App* train = tokenizer->add_subcommand(
        "train",
        "Train a tokenizer.json: byte-level BPE (Llama-3-style pre-tokenizer) or SentencePiece Unigram");
    add_corpus_options(train, train_options->corpus);
    train->add_option("--type", train_options->type, "bpe, or unigram (SentencePiece's trainer)")
        ->capture_default_str()
        ->check(CLI::IsMember({"bpe", "unigram"}));
    train
        ->add_option("--vocab-size", train_options->vocab_size,
                     "Tokens in the vocabulary, special (and for unigram the 256 byte) tokens included")
        ->capture_default_str()
        ->check(CLI::Range(259, 1 << 20));
    train->add_option("--min-frequency", train_options->min_frequency, "bpe: least count of a pair to merge")
        ->capture_default_str();
    train
        ->add_option("--character-coverage", train_options->character_coverage,
                     "unigram: share of characters that get their own piece (the rest fall back to bytes)")
        ->capture_default_str()
        ->check(CLI::Range(0.9, 1.0));
    train->add_option("--normalization", train_options->normalization, "unigram: nfkc or identity")
        ->capture_default_str()
        ->check(CLI::IsMember({"nfkc", "identity"}));
    train->add_option("--out", train_options->out_path, "Output tokenizer.json")->required();
    train->callback([train_options, unigram, exit_code, &out, &err] {
        const TrainOptions& o = *train_options;
        *exit_code = o.type == "unigram" ? unigram({o.corpus.corpus, o.corpus.field, o.vocab_size,
                                                    o.character_coverage, o.normalization, o.out_path},
                                                   out, err)
                                         : run_train_bpe(o, out, err);
    });

    auto extend_options = std::make_shared<ExtendOptions>();
    CLI::App* extend = tokenizer->add_subcommand(
        "extend",
        "Add new BPE tokens and merges learned on a corpus to a tokenizer.json; every old id is kept");
    extend->add_option("--base", extend_options->base_path, "The BPE tokenizer.json to extend")
        ->required()
        ->check(CLI::ExistingFile);
    add_corpus_options(extend, extend_options->corpus);
    extend->add_option("--add", extend_options->add, "New tokens to learn")
        ->required()
        ->check(CLI::Range(1, 1 << 20));
    extend->add_option("--min-frequency", extend_options->min_frequency, "Least count of a pair to merge")
        ->capture_default_str();
    extend->add_option("--out", extend_options->out_path, "Output tokenizer.json")->required();
    extend->callback(
        [extend_options, exit_code, &out, &err] { *exit_code = run_extend(*extend_options, out, err); });

    auto stats_options = std::make_shared<StatsOptions>();
    CLI::App* stats = tokenizer->add_subcommand(
        "stats", "Characters and words per token, unknown and byte-fallback rates of tokenizers on a corpus");
    stats->add_option("--tokenizer", stats_options->tokenizers, "tokenizer.json (repeat to compare)")
        ->required()
        ->check(CLI::ExistingFile);
    add_corpus_options(stats, stats_options->corpus);
    stats->add_flag("--json", stats_options->json, "Print JSON instead of the table");
    stats->callback(
        [stats_options, exit_code, &out, &err] { *exit_code = run_stats(*stats_options, out, err); });
}

}  // namespace slipway::engine
