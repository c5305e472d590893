// run_unigram_training (unigram_train_command.h): corpus -> UnigramTrainer -> tokenizer.json.
#include "cli/unigram_train_command.h"

#include <ostream>

#include "cli/tokenizer_io.h"
#include "tokenizer/unigram_trainer.h"

namespace slipway::engine {

int run_unigram_training(const UnigramTrainRequest& r, std::ostream& out, std::ostream& err) {
    tokenizer::UnigramTrainerOptions options;
    options.vocab_size = r.vocab_size;
    options.character_coverage = r.character_coverage;
    options.normalization = r.normalization;
    Result<tokenizer::UnigramTrainer> trainer = tokenizer::UnigramTrainer::create(options);
    if (!trainer.ok()) {
        err << trainer.error() << "\n";
        return 1;
    }
    Result<size_t> documents =
        for_each_text({r.corpus, r.field}, [&](const std::string& text) { return trainer->add_text(text); });
    if (!documents.ok()) {
        err << documents.error() << "\n";
        return 1;
    }
    err << "tokenizer train: " << *documents << " documents, " << trainer->sentences()
        << " texts for SentencePiece's Unigram trainer\n";
    Result<nlohmann::ordered_json> json = trainer->train();
    if (!json.ok()) {
        err << json.error() << "\n";
        return 1;
    }
    if (write_tokenizer(r.out_path, json->dump(2) + "\n", err) != 0) return 1;
    out << r.out_path << ": Unigram, " << (*json)["model"]["vocab"].size() << " pieces\n";
    return 0;
}

}  // namespace slipway::engine
