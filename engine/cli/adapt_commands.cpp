// adapt-vocab and lep (adapt_commands.h).
#include <torch/torch.h>

#include "cli/adapt_commands.h"

#include <filesystem>
#include <memory>
#include <ostream>

#include <CLI/CLI.hpp>

#include "adapt/embeddings.h"
#include "adapt/hf_folder.h"
#include "adapt/vocab_map.h"

namespace slipway::engine {
namespace {

struct AdaptVocabOptions {
    std::string model_dir, old_tokenizer, new_tokenizer, out_dir;
};

// A tokenizer whose ids reach past the model's rows cannot go with it.
Status check_fits(const adapt::TokenizerFile& t, const adapt::ModelFolder& m) {
    const auto size = static_cast<int64_t>(t.tokenizer.vocab_size());
    if (size > m.vocab_size)
        return Status::Error(t.path + ": the tokenizer has " + std::to_string(size) + " ids but " + m.dir +
                             "/config.json's vocab_size is " + std::to_string(m.vocab_size) +
                             " (not this model's tokenizer)");
    return Status::Ok();
}

int fail(std::ostream& err, const std::string& message) {
    err << message << "\n";
    return 1;
}

int run_adapt_vocab(const AdaptVocabOptions& o, std::ostream& out, std::ostream& err) {
    Result<adapt::ModelFolder> model = adapt::open_model_folder(o.model_dir);
    if (!model.ok()) return fail(err, model.error());
    Result<adapt::TokenizerFile> old_tok = adapt::load_tokenizer_file(o.old_tokenizer);
    if (!old_tok.ok()) return fail(err, old_tok.error());
    Result<adapt::TokenizerFile> new_tok = adapt::load_tokenizer_file(o.new_tokenizer);
    if (!new_tok.ok()) return fail(err, new_tok.error());
    if (Status s = check_fits(*old_tok, *model); !s.ok()) return fail(err, s.message());
    Result<adapt::VocabMap> map = adapt::map_vocabularies(*old_tok, *new_tok);
    if (!map.ok()) return fail(err, map.error());
    torch::NoGradGuard no_grad;
    Result<torch::Tensor> embed = adapt::convert_rows(model->embed, *map);  // (V_new, H)
    if (!embed.ok()) return fail(err, o.model_dir + ": embed_tokens: " + embed.error());
    std::optional<torch::Tensor> head;
    if (model->head) {
        Result<torch::Tensor> converted = adapt::convert_rows(*model->head, *map);  // (V_new, H)
        if (!converted.ok()) return fail(err, o.model_dir + ": lm_head: " + converted.error());
        head = *converted;
    }
    Result<std::string> tokenizer_text = read_file(o.new_tokenizer);
    if (!tokenizer_text.ok()) return fail(err, tokenizer_text.error());
    // A token id of the old vocabulary -> the new one: by token string.
    const adapt::TokenIdMap new_id = [&](int64_t id) -> std::optional<int64_t> {
        const std::optional<std::string> token = old_tok->tokenizer.id_to_token(static_cast<int32_t>(id));
        if (!token) return std::nullopt;
        const std::optional<int32_t> found = new_tok->tokenizer.token_to_id(*token);
        return found ? std::optional<int64_t>(*found) : std::nullopt;
    };
    if (Status s =
            adapt::write_model_folder(*model, *embed, head, o.out_dir, *tokenizer_text, o.model_dir, new_id);
        !s.ok())
        return fail(err, s.message());
    out << o.out_dir << ": vocabulary " << model->vocab_size << " -> " << map->new_vocab_size << " ("
        << (model->head ? "embed_tokens and lm_head" : "tied embed_tokens") << ", "
        << c10::toString(model->embed.scalar_type()) << "): " << map->same << " rows kept, " << map->split
        << " means of old sub-tokens, " << map->all_mean << " means of all rows\n";
    return 0;
}

struct LepOptions {
    std::string base_dir, instruct_dir, adapted_dir, method = "conversion", out_dir;
};

// (new id, instruct id) of the adapted tokenizer's added tokens that the instruct tokenizer also has.
std::vector<std::pair<int32_t, int32_t>> shared_added_tokens(const adapt::TokenizerFile& instruct,
                                                             const adapt::TokenizerFile& adapted) {
    std::vector<std::pair<int32_t, int32_t>> pairs;
    for (const tokenizer::AddedToken& token : adapted.tokenizer.added_tokens())
        if (std::optional<int32_t> id = instruct.tokenizer.token_to_id(token.content))
            pairs.emplace_back(token.id, *id);
    return pairs;
}

int run_lep(const LepOptions& o, std::ostream& out, std::ostream& err) {
    Result<adapt::LepMethod> method = adapt::lep_method_named(o.method);
    if (!method.ok()) return fail(err, method.error());
    Result<adapt::ModelFolder> base = adapt::open_model_folder(o.base_dir);
    if (!base.ok()) return fail(err, base.error());
    Result<adapt::ModelFolder> instruct = adapt::open_model_folder(o.instruct_dir);
    if (!instruct.ok()) return fail(err, instruct.error());
    Result<adapt::ModelFolder> adapted = adapt::open_model_folder(o.adapted_dir);
    if (!adapted.ok()) return fail(err, adapted.error());
    for (const adapt::ModelFolder* m : {&*base, &*adapted}) {
        if (m->embed.size(1) != instruct->embed.size(1))
            return fail(err, m->dir + ": hidden size " + std::to_string(m->embed.size(1)) + " but " +
                                 o.instruct_dir + "'s is " + std::to_string(instruct->embed.size(1)));
        if (m->tied != instruct->tied)
            return fail(err,
                        m->dir + "/config.json: tie_word_embeddings differs from " + o.instruct_dir + "'s");
        if (!instruct->tied && !m->head)
            return fail(err, m->dir + ": no lm_head.weight, but " + o.instruct_dir + " has an untied head");
    }
    Result<adapt::TokenizerFile> instruct_tok =
        adapt::load_tokenizer_file(o.instruct_dir + "/tokenizer.json");
    if (!instruct_tok.ok()) return fail(err, instruct_tok.error());
    Result<adapt::TokenizerFile> adapted_tok = adapt::load_tokenizer_file(o.adapted_dir + "/tokenizer.json");
    if (!adapted_tok.ok()) return fail(err, adapted_tok.error());
    if (Status s = check_fits(*instruct_tok, *instruct); !s.ok()) return fail(err, s.message());
    if (Status s = check_fits(*adapted_tok, *adapted); !s.ok()) return fail(err, s.message());
    Result<adapt::VocabMap> map = adapt::map_vocabularies(*instruct_tok, *adapted_tok);
    if (!map.ok()) return fail(err, map.error());
    const auto copies = shared_added_tokens(*instruct_tok, *adapted_tok);
    // The instruct tokenizer's added tokens (chat tokens) that the adapted one lacks are appended, after
    // the adapted model's rows, with the instruct model's rows.
    std::vector<tokenizer::AddedToken> extra;
    std::vector<int64_t> extra_rows;
    for (const tokenizer::AddedToken& token : instruct_tok->tokenizer.added_tokens()) {
        if (adapted_tok->tokenizer.token_to_id(token.content)) continue;
        extra.push_back(token);
        extra_rows.push_back(token.id);
    }
    Result<std::string> tokenizer_text =
        adapt::append_added_tokens(adapted_tok->path, extra, adapted->vocab_size);
    if (!tokenizer_text.ok()) return fail(err, tokenizer_text.error());

    torch::NoGradGuard no_grad;
    const torch::Tensor extra_ids = torch::tensor(extra_rows, torch::kInt64);
    // One matrix: its projection P (H, H) from base -> instruct, applied to the adapted matrix, then the
    // appended tokens' instruct rows.
    auto one = [&](const torch::Tensor& b, const torch::Tensor& i, const torch::Tensor& a,
                   const char* name) -> Result<torch::Tensor> {
        Result<torch::Tensor> p = adapt::lep_projection(*method, b, i, *map);
        if (!p.ok()) return Result<torch::Tensor>::Error(std::string(name) + ": " + p.error());
        Result<torch::Tensor> e = adapt::propagate(a, *p, i, copies);  // (V_A, H)
        if (!e.ok()) return Result<torch::Tensor>::Error(std::string(name) + ": " + e.error());
        return torch::cat({*e, i.index_select(0, extra_ids)});  // (V_A + extra, H)
    };
    Result<torch::Tensor> embed = one(base->embed, instruct->embed, adapted->embed, "embed_tokens");
    if (!embed.ok()) return fail(err, embed.error());
    std::optional<torch::Tensor> head;
    if (instruct->head) {
        if (!base->head || !adapted->head)
            return fail(err, "lep: " + o.instruct_dir +
                                 " stores lm_head.weight, but the base or adapted model does not");
        Result<torch::Tensor> h = one(*base->head, *instruct->head, *adapted->head, "lm_head");
        if (!h.ok()) return fail(err, h.error());
        head = *h;
    }
    // An instruct token id -> the output's: the adapted tokenizer's id, or the appended one's.
    const adapt::TokenIdMap new_id = [&](int64_t id) -> std::optional<int64_t> {
        const std::optional<std::string> token =
            instruct_tok->tokenizer.id_to_token(static_cast<int32_t>(id));
        if (!token) return std::nullopt;
        if (const std::optional<int32_t> found = adapted_tok->tokenizer.token_to_id(*token)) return *found;
        for (size_t k = 0; k < extra.size(); ++k)
            if (extra[k].content == *token) return adapted->vocab_size + static_cast<int64_t>(k);
        return std::nullopt;
    };
    if (Status s = adapt::write_model_folder(*instruct, *embed, head, o.out_dir, *tokenizer_text,
                                             o.instruct_dir, new_id);
        !s.ok())
        return fail(err, s.message());
    out << o.out_dir << ": " << adapt::lep_method_name(*method) << " propagation onto " << o.instruct_dir
        << ", vocabulary " << instruct->vocab_size << " -> " << embed->size(0) << " ("
        << (head ? "embed_tokens and lm_head" : "tied embed_tokens") << "), " << map->same
        << " shared tokens, " << copies.size() << " added tokens with the instruct model's rows, "
        << extra.size() << " appended from its tokenizer\n";
    return 0;
}

}  // namespace

void add_adapt_commands(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err) {
    auto adapt_vocab = std::make_shared<AdaptVocabOptions>();
    CLI::App* av = app.add_subcommand(
        "adapt-vocab",
        "Move an HF model onto a new tokenizer: rows of shared tokens kept, new rows the mean of "
        "their old sub-tokens (embed_tokens and lm_head)");
    av->add_option("--model", adapt_vocab->model_dir, "HF model folder")
        ->required()
        ->check(CLI::ExistingDirectory);
    av->add_option("--old-tokenizer", adapt_vocab->old_tokenizer, "The model's tokenizer.json")
        ->required()
        ->check(CLI::ExistingFile);
    av->add_option("--new-tokenizer", adapt_vocab->new_tokenizer, "The new tokenizer.json")
        ->required()
        ->check(CLI::ExistingFile);
    av->add_option("--out", adapt_vocab->out_dir, "Output HF folder")->required();
    av->callback(
        [adapt_vocab, exit_code, &out, &err] { *exit_code = run_adapt_vocab(*adapt_vocab, out, err); });

    auto lep = std::make_shared<LepOptions>();
    CLI::App* lc = app.add_subcommand(
        "lep",
        "Learned Embedding Propagation (arXiv 2412.21140): an adapted base model's embeddings onto the "
        "instruct model of the same base");
    lc->add_option("--base", lep->base_dir, "The base (foundation) HF model folder")
        ->required()
        ->check(CLI::ExistingDirectory);
    lc->add_option("--instruct", lep->instruct_dir,
                   "The instruct-tuned HF model folder (tokenizer.json, chat template)")
        ->required()
        ->check(CLI::ExistingDirectory);
    lc->add_option("--adapted", lep->adapted_dir,
                   "The base model with the new vocabulary and trained embeddings (its tokenizer.json)")
        ->required()
        ->check(CLI::ExistingDirectory);
    lc->add_option("--method", lep->method, "swap | overlap | conversion")
        ->capture_default_str()
        ->check(CLI::IsMember({"swap", "overlap", "conversion"}));
    lc->add_option("--out", lep->out_dir, "Output HF folder")->required();
    lc->callback([lep, exit_code, &out, &err] { *exit_code = run_lep(*lep, out, err); });
}

}  // namespace slipway::engine
