// Tokenizer: loads tokenizer.json into its components and runs HF's encode/decode pipeline.
#include "tokenizer/tokenizer.h"

#include <filesystem>
#include <functional>
#include <optional>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "contract/run_config.h"
#include "tokenizer/added_vocabulary.h"
#include "tokenizer/bpe.h"
#include "tokenizer/decoder.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/unicode.h"
#include "tokenizer/unigram.h"

namespace slipway::tokenizer {

struct Tokenizer::Impl {
    std::vector<AddedToken> added;
    std::unordered_map<int32_t, size_t> added_by_id;  // id -> index in `added`
    std::unordered_map<std::string, int32_t> added_by_content;
    std::unique_ptr<AddedTokenMatcher> raw_matcher;         // tokens with normalized = false
    std::unique_ptr<AddedTokenMatcher> normalized_matcher;  // tokens with normalized = true
    std::shared_ptr<const Normalizer> normalizer;
    std::shared_ptr<const PreTokenizer> pre_tokenizer;
    std::unique_ptr<Model> model;
    std::shared_ptr<const Decoder> decoder;
    // What encode(add_special_tokens) puts around a text, and why (special_tokens.h).
    SpecialTokens specials;

    // Runs the pipeline up to the model: each added token found goes to `on_added`, each piece the model
    // would see to `on_piece`.
    using AddedSink = std::function<void(int32_t id)>;
    using PieceSink = std::function<void(std::string_view piece)>;
    Status walk_text(std::string_view text, bool at_input_start, const AddedSink& on_added,
                     const PieceSink& on_piece) const;
    Status walk(std::string_view text, const AddedSink& on_added, const PieceSink& on_piece) const;
    Status encode(std::string_view text, bool add_special_tokens, std::vector<int32_t>& ids) const;
    // An added token's id first, then the model's.
    std::optional<int32_t> token_to_id(std::string_view token) const;
};

Result<Tokenizer> Tokenizer::from_file(const std::string& path) {
    Result<nlohmann::json> json = read_json_file(path);
    if (!json.ok()) return json.status();
    // HF's AutoTokenizer reads tokenizer_config.json beside it: its add_bos_token / add_eos_token decide.
    const std::filesystem::path config_path =
        std::filesystem::path(path).parent_path() / "tokenizer_config.json";
    std::optional<nlohmann::json> config;
    std::error_code error;
    if (std::filesystem::is_regular_file(config_path, error)) {
        Result<nlohmann::json> read = read_json_file(config_path.string());
        if (!read.ok()) return read.status();
        if (!read->is_object()) return Status::Error(config_path.string() + ": expected a JSON object");
        config = std::move(*read);
    }
    Result<Tokenizer> tokenizer = from_json(*json, config ? &*config : nullptr);
    if (!tokenizer.ok()) return Status::Error(path + ": " + tokenizer.error());
    return tokenizer;
}

Result<Tokenizer> Tokenizer::from_json(const nlohmann::json& document, const nlohmann::json* config) {
    auto impl = std::make_shared<Impl>();
    try {
        const nlohmann::json& model = document.at("model");
        const std::string model_type = model.value("type", "BPE");
        if (model_type == "BPE") {
            Result<BpeModel> bpe = BpeModel::from_json(model);
            if (!bpe.ok()) return bpe.status();
            impl->model = std::make_unique<BpeModel>(std::move(*bpe));
        } else if (model_type == "Unigram") {
            Result<UnigramModel> unigram = UnigramModel::from_json(model);
            if (!unigram.ok()) return unigram.status();
            impl->model = std::make_unique<UnigramModel>(std::move(*unigram));
        } else {
            return Status::Error("model \"" + model_type + "\" is not supported (only BPE and Unigram)");
        }

        Result<std::shared_ptr<const Normalizer>> normalizer =
            make_normalizer(document.value("normalizer", nlohmann::json()));
        if (!normalizer.ok()) return normalizer.status();
        impl->normalizer = *normalizer;
        Result<std::shared_ptr<const PreTokenizer>> pre =
            make_pre_tokenizer(document.value("pre_tokenizer", nlohmann::json()));
        if (!pre.ok()) return pre.status();
        impl->pre_tokenizer = *pre;
        Result<std::shared_ptr<const Decoder>> decoder =
            make_decoder(document.value("decoder", nlohmann::json()));
        if (!decoder.ok()) return decoder.status();
        impl->decoder = *decoder;
        for (const nlohmann::json& t : document.value("added_tokens", nlohmann::json::array())) {
            AddedToken token;
            Result<int32_t> id =
                parse_token_id(t.at("id"), "added_tokens[" + std::to_string(impl->added.size()) + "]");
            if (!id.ok()) return id.status();
            token.id = *id;
            token.content = t.at("content").get<std::string>();
            token.special = t.value("special", false);
            token.normalized = t.value("normalized", !token.special);
            token.lstrip = t.value("lstrip", false);
            token.rstrip = t.value("rstrip", false);
            token.single_word = t.value("single_word", false);
            impl->added.push_back(std::move(token));
        }
    } catch (const nlohmann::json::exception& e) {
        return Status::Error(std::string("tokenizer.json: ") + e.what());
    }
    std::vector<const AddedToken*> raw, normalized;
    for (size_t i = 0; i < impl->added.size(); ++i) {
        const AddedToken& t = impl->added[i];
        impl->added_by_id.emplace(t.id, i);
        impl->added_by_content.emplace(t.content, t.id);
        (t.normalized ? normalized : raw).push_back(&t);
    }
    const TokenIdLookup token_id = [&impl](std::string_view token) { return impl->token_to_id(token); };
    Result<SpecialTokens> specials = decide_special_tokens(document, config, token_id);
    if (!specials.ok()) return specials.status();
    impl->specials = std::move(*specials);
    // The template's ids are emitted as they are: each must be a token the tokenizer knows.
    for (const std::vector<int32_t>* ids : {&impl->specials.prefix, &impl->specials.suffix}) {
        for (int32_t id : *ids) {
            if (impl->added_by_id.count(id) == 0 && impl->model->id_to_token(id) == nullptr)
                return Status::Error("post_processor: special token id " + std::to_string(id) +
                                     " is in no vocab");
        }
    }
    impl->raw_matcher = std::make_unique<AddedTokenMatcher>(raw);
    impl->normalized_matcher = std::make_unique<AddedTokenMatcher>(normalized);
    Tokenizer tokenizer;
    tokenizer.impl_ = std::move(impl);
    return tokenizer;
}

Status Tokenizer::Impl::walk_text(std::string_view text, bool at_input_start, const AddedSink& on_added,
                                  const PieceSink& on_piece) const {
    std::string normalized_text(text);
    if (normalizer) {
        if (Status s = normalizer->normalize(normalized_text); !s.ok()) return s;
    }
    // Tokens with normalized = true are looked for in the normalized text.
    std::vector<Segment> segments;
    if (normalized_matcher->empty()) {
        segments.push_back({normalized_text, std::nullopt, 0});
    } else {
        segments = normalized_matcher->split(normalized_text);
    }
    std::vector<Piece> pieces;
    for (const Segment& segment : segments) {
        if (segment.id) {
            on_added(*segment.id);
            continue;
        }
        pieces.clear();
        pieces.push_back({std::string(segment.text), at_input_start && segment.offset == 0});
        if (pre_tokenizer) {
            if (Status s = pre_tokenizer->pre_tokenize(pieces); !s.ok()) return s;
        }
        for (const Piece& piece : pieces)
            on_piece(piece.text);
    }
    return Status::Ok();
}

Status Tokenizer::Impl::walk(std::string_view text, const AddedSink& on_added,
                             const PieceSink& on_piece) const {
    if (raw_matcher->empty()) return walk_text(text, true, on_added, on_piece);
    for (const Segment& segment : raw_matcher->split(text)) {
        if (segment.id) {
            on_added(*segment.id);
        } else if (Status s = walk_text(segment.text, segment.offset == 0, on_added, on_piece); !s.ok()) {
            return s;
        }
    }
    return Status::Ok();
}

Status Tokenizer::Impl::encode(std::string_view text, bool add_special_tokens,
                               std::vector<int32_t>& ids) const {
    if (add_special_tokens) ids = specials.prefix;
    const Status s = walk(
        text, [&ids](int32_t id) { ids.push_back(id); },
        [this, &ids](std::string_view piece) { model->tokenize(piece, ids); });
    if (!s.ok()) return s;
    if (add_special_tokens) ids.insert(ids.end(), specials.suffix.begin(), specials.suffix.end());
    return Status::Ok();
}

Status Tokenizer::pre_tokenize(std::string_view text, std::vector<std::string>& pieces) const {
    if (!is_valid_utf8(text)) return Status::Error("text is not valid UTF-8");
    return impl_->walk(
        text, [](int32_t) {}, [&pieces](std::string_view piece) { pieces.emplace_back(piece); });
}

void Tokenizer::tokenize_piece(std::string_view piece, std::vector<int32_t>& out) const {
    impl_->model->tokenize(piece, out);
}

bool Tokenizer::has_pre_tokenizer() const {
    return impl_->pre_tokenizer != nullptr;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
    std::vector<int32_t> ids;
    (void)impl_->encode(text, add_special_tokens, ids);  // the precondition: see tokenizer.h
    return ids;
}

Result<std::vector<int32_t>> Tokenizer::encode_checked(std::string_view text, bool add_special_tokens) const {
    if (!is_valid_utf8(text)) return Status::Error("text is not valid UTF-8");
    std::vector<int32_t> ids;
    if (Status s = impl_->encode(text, add_special_tokens, ids); !s.ok()) return s;
    return ids;
}

Result<std::string> Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (int32_t id : ids) {
        const auto added = impl_->added_by_id.find(id);
        if (added != impl_->added_by_id.end()) {
            const AddedToken& token = impl_->added[added->second];
            if (!(skip_special_tokens && token.special)) tokens.push_back(token.content);
            continue;
        }
        const std::string* token = impl_->model->id_to_token(id);
        if (token == nullptr || (token->empty() && id != 0))
            return Status::Error("unknown token id " + std::to_string(id));
        tokens.push_back(*token);
    }
    if (impl_->decoder) impl_->decoder->decode_chain(tokens);
    std::string text;
    for (const std::string& t : tokens)
        text += t;
    return text;
}

std::optional<int32_t> Tokenizer::Impl::token_to_id(std::string_view token) const {
    const auto found = added_by_content.find(std::string(token));
    if (found != added_by_content.end()) return found->second;
    return model->token_to_id(token);
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
    return impl_->token_to_id(token);
}

std::optional<std::string> Tokenizer::id_to_token(int32_t id) const {
    const auto added = impl_->added_by_id.find(id);
    if (added != impl_->added_by_id.end()) return impl_->added[added->second].content;
    const std::string* token = impl_->model->id_to_token(id);
    if (token == nullptr) return std::nullopt;
    return *token;
}

size_t Tokenizer::vocab_size() const {
    size_t size = impl_->model->vocab_size();
    for (const AddedToken& t : impl_->added)
        size = std::max(size, static_cast<size_t>(t.id) + 1);
    return size;
}

const std::vector<AddedToken>& Tokenizer::added_tokens() const {
    return impl_->added;
}

std::optional<int32_t> Tokenizer::unk_id() const {
    return impl_->model->unk_id();
}

const SpecialTokens& Tokenizer::special_tokens() const {
    return impl_->specials;
}

bool Tokenizer::is_byte_fallback(int32_t id) const {
    return impl_->added_by_id.count(id) == 0 && impl_->model->is_byte_fallback_token(id);
}

}  // namespace slipway::tokenizer
