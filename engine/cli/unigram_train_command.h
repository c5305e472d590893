// In-process `tokenizer train --type unigram`: SentencePiece's trainer on a JSONL corpus. Only the
// torch-free slipway-tokenizer binary links it (see tokenizer_command.h for why).
#pragma once

#include <iosfwd>

#include "cli/tokenizer_command.h"

namespace slipway::engine {

int run_unigram_training(const UnigramTrainRequest& request, std::ostream& out, std::ostream& err);

}  // namespace slipway::engine
