// decide_special_tokens (special_tokens.h): tokenizer_config.json's flags, then the post-processor, then the
// convention of the tokenizer's kind; BOS and EOS each decided on their own, as gguf-py's SpecialVocab does.
#include "tokenizer/special_tokens.h"

#include <functional>

#include <nlohmann/json.hpp>

#include "tokenizer/model.h"

namespace slipway::tokenizer {
namespace {

using json = nlohmann::json;

// What a TemplateProcessing puts around a single sequence.
struct SingleTemplate {
    std::vector<int32_t> before, after;
};

Status read_template_processing(const json& spec, SingleTemplate& out) {
    const json& single = spec.at("single");
    if (!single.is_array()) return Status::Error("post_processor.single must be a list");
    bool seen_sequence = false;
    for (const json& item : single) {
        if (item.contains("Sequence")) {
            seen_sequence = true;
            continue;
        }
        const std::string name = item.at("SpecialToken").at("id").get<std::string>();
        const json& special = spec.at("special_tokens").at(name);
        for (const json& id : special.at("ids")) {
            Result<int32_t> checked = parse_token_id(id, "post_processor.special_tokens[\"" + name + "\"]");
            if (!checked.ok()) return checked.status();
            (seen_sequence ? out.after : out.before).push_back(*checked);
        }
    }
    return Status::Ok();
}

// The post-processor's template, if it has one (none, or ByteLevel alone, say nothing).
Status read_post_processor(const json& spec, std::optional<SingleTemplate>& out) {
    if (spec.is_null()) return Status::Ok();
    const std::string type = spec.at("type").get<std::string>();
    if (type == "ByteLevel") return Status::Ok();
    if (type == "Sequence") {
        for (const json& part : spec.at("processors")) {
            if (Status s = read_post_processor(part, out); !s.ok()) return s;
        }
        return Status::Ok();
    }
    if (type != "TemplateProcessing") {
        return Status::Error("post_processor \"" + type +
                             "\" is not supported (TemplateProcessing, ByteLevel, or a Sequence of them)");
    }
    if (out) return Status::Error("post_processor: a Sequence with two TemplateProcessing");
    SingleTemplate single;
    if (Status s = read_template_processing(spec, single); !s.ok()) return s;
    out = std::move(single);
    return Status::Ok();
}

// A component of `type` in `spec` or in its Sequence (`list_key`: "pretokenizers" / "normalizers"), matching.
bool has_component(const json& spec, const char* list_key, const std::function<bool(const json&)>& matches) {
    if (!spec.is_object()) return false;
    if (matches(spec)) return true;
    const auto it = spec.find(list_key);
    if (it == spec.end() || !it->is_array()) return false;
    for (const json& part : *it) {
        if (has_component(part, list_key, matches)) return true;
    }
    return false;
}

// SentencePiece-style: a Unigram model, a BPE with byte fallback, a Metaspace pre-tokenizer, or a normalizer
// that prepends "▁" (Llama 2's layout).
bool sentencepiece_style(const json& tokenizer) {
    const json& model = tokenizer.at("model");
    if (model.value("type", "BPE") == "Unigram" || model.value("byte_fallback", false)) return true;
    const auto metaspace = [](const json& p) { return p.value("type", "") == "Metaspace"; };
    const auto prepends = [](const json& n) {
        return n.value("type", "") == "Prepend" && n.value("prepend", "") == "\xe2\x96\x81";
    };
    return has_component(tokenizer.value("pre_tokenizer", json()), "pretokenizers", metaspace) ||
           has_component(tokenizer.value("normalizer", json()), "normalizers", prepends);
}

struct Side {
    std::string kind;                           // "bos" or "eos"
    const std::vector<int32_t>* from_template;  // the template's ids on this side, null without a template
    std::vector<int32_t>* ids;
    std::string* source;
};

Status decide_from_config(const Side& side, bool add, const json* config, const TokenIdLookup& token_id) {
    *side.source = "tokenizer_config.json add_" + side.kind + "_token";
    side.ids->clear();
    if (!add) return Status::Ok();
    if (const std::optional<std::string> text = config_special_token(config, side.kind)) {
        const std::optional<int32_t> id = token_id(*text);
        if (!id) {
            return Status::Error("tokenizer_config.json: " + side.kind + "_token " + json(*text).dump() +
                                 " is no token of tokenizer.json");
        }
        side.ids->push_back(*id);
        return Status::Ok();
    }
    if (side.from_template != nullptr && !side.from_template->empty()) {
        *side.ids = *side.from_template;
        return Status::Ok();
    }
    return Status::Error("tokenizer_config.json: add_" + side.kind + "_token is true but there is no " +
                         side.kind + "_token, nor one in tokenizer.json's post_processor");
}

void decide_by_convention(const Side& side, bool sentencepiece, const json* config,
                          const TokenIdLookup& token_id) {
    side.ids->clear();
    if (side.kind == "eos") {
        *side.source = "convention: no tokenizer family here adds an EOS unless told to";
        return;
    }
    if (!sentencepiece) {
        *side.source =
            "convention: a tokenizer that is not SentencePiece-style (byte-level BPE: GPT-2, Llama 3, "
            "Qwen) adds no BOS";
        return;
    }
    const std::string text = config_special_token(config, "bos").value_or("<s>");
    if (const std::optional<int32_t> id = token_id(text)) {
        side.ids->push_back(*id);
        *side.source =
            "convention: SentencePiece-style tokenizers add their BOS (HF LlamaTokenizer, llama.cpp)";
    } else {
        *side.source = "convention: SentencePiece-style tokenizers add their BOS, but " + json(text).dump() +
                       " is no token here";
    }
}

}  // namespace

std::optional<std::string> config_special_token(const json* config, const std::string& kind) {
    if (config == nullptr) return std::nullopt;
    const auto it = config->find(kind + "_token");
    if (it == config->end()) return std::nullopt;
    if (it->is_string()) return it->get<std::string>();
    if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
        return (*it)["content"].get<std::string>();
    return std::nullopt;
}

Result<SpecialTokens> decide_special_tokens(const json& tokenizer, const json* config,
                                            const TokenIdLookup& token_id) {
    if (config != nullptr && !config->is_object())
        return Status::Error("tokenizer_config.json: expected an object");
    SpecialTokens out;
    std::optional<SingleTemplate> from_template;
    bool sentencepiece = false;
    try {
        if (Status s = read_post_processor(tokenizer.value("post_processor", json()), from_template); !s.ok())
            return s;
        sentencepiece = sentencepiece_style(tokenizer);
    } catch (const json::exception& e) {
        return Status::Error(std::string("post_processor: ") + e.what());
    }
    const Side sides[] = {
        {"bos", from_template ? &from_template->before : nullptr, &out.prefix, &out.prefix_source},
        {"eos", from_template ? &from_template->after : nullptr, &out.suffix, &out.suffix_source},
    };
    for (const Side& side : sides) {
        const json flag = config != nullptr ? config->value("add_" + side.kind + "_token", json()) : json();
        if (flag.is_boolean()) {
            if (Status s = decide_from_config(side, flag.get<bool>(), config, token_id); !s.ok()) return s;
        } else if (from_template) {
            *side.ids = *side.from_template;
            *side.source = "post_processor TemplateProcessing";
        } else {
            decide_by_convention(side, sentencepiece, config, token_id);
        }
    }
    if (const std::optional<std::string> bos = config_special_token(config, "bos"))
        out.bos_id = token_id(*bos);
    if (!out.bos_id && from_template && !from_template->before.empty())
        out.bos_id = from_template->before.front();
    if (!out.bos_id && !out.prefix.empty()) out.bos_id = out.prefix.front();
    if (const std::optional<std::string> eos = config_special_token(config, "eos"))
        out.eos_id = token_id(*eos);
    if (!out.eos_id && from_template && !from_template->after.empty())
        out.eos_id = from_template->after.back();
    if (!out.eos_id && !out.suffix.empty()) out.eos_id = out.suffix.back();
    return out;
}

}  // namespace slipway::tokenizer
