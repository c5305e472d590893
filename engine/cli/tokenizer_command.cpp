// The `tokenizer train` command: corpus -> BpeTrainer -> tokenizer.json (written atomically and durably).
#include "cli/tokenizer_command.h"

#include <memory>
#include <ostream>

#include <CLI/CLI.hpp>

#include "contract/file_system.h"
#include "data/jsonl_reader.h"
#include "tokenizer/bpe_trainer.h"

namespace slipway::engine {
namespace {

struct TrainOptions {
    std::vector<std::string> corpus;
    std::string field = "text";
    size_t vocab_size = 8192;
    int64_t min_frequency = 2;
    std::string out_path;
};

int run_train(const TrainOptions& o, std::ostream& out, std::ostream& err) {
    tokenizer::BpeTrainerOptions options;
    options.vocab_size = o.vocab_size;
    options.min_frequency = o.min_frequency;
    tokenizer::BpeTrainer trainer(options);
    size_t documents = 0;
    for (const std::string& path : o.corpus) {
        Result<data::JsonlReader> reader = data::JsonlReader::open(path, o.field);
        if (!reader.ok()) {
            err << reader.error() << "\n";
            return 1;
        }
        data::JsonlRecord record;
        std::string error;
        while (reader->next(record, error)) {
            if (!error.empty()) {
                err << error << "\n";
                return 1;
            }
            const Status added = trainer.add_text(record.text);
            if (!added.ok()) {
                err << path << ":" << record.line_number << ": " << added.message() << "\n";
                return 1;
            }
            ++documents;
        }
    }
    err << "tokenizer train: " << documents << " documents, " << trainer.distinct_words()
        << " distinct words\n";
    Result<nlohmann::ordered_json> json = trainer.train([&err](size_t tokens, size_t target) {
        err << "tokenizer train: " << tokens << " / " << target << " tokens\r" << std::flush;
    });
    err << "\n";
    if (!json.ok()) {
        err << json.error() << "\n";
        return 1;
    }
    if (const Status written = write_file_atomically(o.out_path, json->dump(2) + "\n"); !written.ok()) {
        err << written.message() << "\n";
        return 1;
    }
    out << o.out_path << ": " << (*json)["model"]["vocab"].size() + (*json)["added_tokens"].size()
        << " tokens, " << (*json)["model"]["merges"].size() << " merges\n";
    return 0;
}

}  // namespace

void add_tokenizer_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err) {
    auto options = std::make_shared<TrainOptions>();
    CLI::App* tokenizer = app.add_subcommand("tokenizer", "Tokenizer tools");
    tokenizer->require_subcommand(1);
    CLI::App* train = tokenizer->add_subcommand(
        "train", "Train a byte-level BPE tokenizer.json (Llama-3-style pre-tokenizer)");
    train->add_option("--corpus", options->corpus, "JSONL file(s)")->required()->check(CLI::ExistingFile);
    train->add_option("--field", options->field, "JSON field holding the text")->capture_default_str();
    train
        ->add_option("--vocab-size", options->vocab_size, "Tokens in the vocabulary, special tokens included")
        ->capture_default_str()
        ->check(CLI::Range(259, 1 << 20));
    train->add_option("--min-frequency", options->min_frequency, "Least count of a pair to merge")
        ->capture_default_str();
    train->add_option("--out", options->out_path, "Output tokenizer.json")->required();
    train->callback([options, exit_code, &out, &err] { *exit_code = run_train(*options, out, err); });
}

}  // namespace slipway::engine
