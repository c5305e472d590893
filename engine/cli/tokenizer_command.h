// `slipway-engine tokenizer train / extend / stats`: learn (BPE, Unigram) or extend a tokenizer.json from a
// JSONL corpus, and compare tokenizers on one.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace slipway::engine {

// `tokenizer train --type unigram`, as the command line asked for it.
struct UnigramTrainRequest {
    std::vector<std::string> corpus;
    std::string field = "text";
    size_t vocab_size = 8192;
    double character_coverage = 0.9995;
    std::string normalization = "nfkc";
    std::string out_path;
};
using UnigramTrainRunner =
    std::function<int(const UnigramTrainRequest&, std::ostream& out, std::ostream& err)>;

// `unigram` runs SentencePiece's trainer. LibTorch's libprotobuf and the protobuf copy inside
// libsentencepiece crash when loaded into one process, so slipway-engine never links SentencePiece: by
// default (empty) the request goes to the torch-free slipway-tokenizer binary beside this executable,
// which passes run_unigram_training (unigram_train_command.h) here.
void add_tokenizer_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err,
                           UnigramTrainRunner unigram = {});

}  // namespace slipway::engine
