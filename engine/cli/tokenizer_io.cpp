// The shared corpus and output helpers of tokenizer_io.h.
#include "cli/tokenizer_io.h"

#include <ostream>

#include <CLI/CLI.hpp>

#include "contract/file_system.h"
#include "data/jsonl_reader.h"

namespace slipway::engine {

void add_corpus_options(CLI::App* command, CorpusOptions& o) {
    command->add_option("--corpus", o.corpus, "JSONL file(s)")->required()->check(CLI::ExistingFile);
    command->add_option("--field", o.field, "JSON field holding the text")->capture_default_str();
}

Result<size_t> for_each_text(const CorpusOptions& o, const std::function<Status(const std::string&)>& use) {
    size_t documents = 0;
    for (const std::string& path : o.corpus) {
        Result<data::JsonlReader> reader = data::JsonlReader::open(path, o.field);
        if (!reader.ok()) return reader.status();
        data::JsonlRecord record;
        std::string error;
        while (reader->next(record, error)) {
            if (!error.empty()) return Status::Error(error);
            if (const Status used = use(record.text); !used.ok())
                return Status::Error(path + ":" + std::to_string(record.line_number) + ": " + used.message());
            ++documents;
        }
    }
    return documents;
}

int write_tokenizer(const std::string& path, const std::string& text, std::ostream& err) {
    if (const Status written = write_file_atomically(path, text); !written.ok()) {
        err << written.message() << "\n";
        return 1;
    }
    return 0;
}

}  // namespace slipway::engine
