// What the tokenizer commands share: the --corpus/--field options, walking a JSONL corpus with FILE:LINE
// errors, and writing a tokenizer.json atomically.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "contract/status.h"

namespace CLI {
class App;
}

namespace slipway::engine {

struct CorpusOptions {
    std::vector<std::string> corpus;  // JSONL files
    std::string field = "text";
};

void add_corpus_options(CLI::App* command, CorpusOptions& o);

// Calls `use` with every text of the corpus; the first error ("FILE:LINE: ...") stops the walk. Returns
// the number of texts.
Result<size_t> for_each_text(const CorpusOptions& o, const std::function<Status(const std::string&)>& use);

// 0, or 1 after printing why the file could not be written.
int write_tokenizer(const std::string& path, const std::string& text, std::ostream& err);

}  // namespace slipway::engine
