// `slipway-engine adapt-vocab` (a model moved onto a new tokenizer, new embedding rows as the mean of
// their old sub-tokens) and `lep` (Learned Embedding Propagation of an adapted base model's embeddings
// onto the instruct model of the same base): the vocabulary steps of the ruadapt workflow (seed 001).
#pragma once

#include <iosfwd>

namespace CLI {
class App;
}

namespace slipway::engine {

void add_adapt_commands(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err);

}  // namespace slipway::engine
