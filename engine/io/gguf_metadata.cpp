// gguf_metadata.h: the HF -> GGUF mapping of LLaMA-family checkpoints. The tokenizer rules mirror
// llama.cpp 0.7.0's convert_hf_to_gguf.py (get_vocab_base, LlamaHfVocab, gguf-py's SpecialVocab) so that
// llama.cpp tokenizes as the HF tokenizer does, without running the HF tokenizer to hash its output.
#include "io/gguf_metadata.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <utility>

#include <nlohmann/json.hpp>

#include "contract/file_system.h"
#include "contract/json_text.h"
#include "tokenizer/special_tokens.h"

namespace slipway::io {
namespace {

using nlohmann::json;

constexpr double kPi = 3.14159265358979323846;
constexpr float kAddedTokenScore = -1000.0f;  // convert_hf_to_gguf's score for added and padding tokens

// The Split regexes of the pre-tokenizers supported (tokenizer.json spells them exactly so).
constexpr const char* kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

bool starts_with(const std::string& s, const std::string& prefix) {
    return s.rfind(prefix, 0) == 0;
}
bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
        s.replace(at, from.size(), to);
    return s;
}

// A JSON file of the folder; nullopt (not an error) when it is absent and optional.
Result<std::optional<json>> read_json(const std::string& folder, const std::string& file, bool required) {
    const std::string path = folder + "/" + file;
    std::error_code error;
    if (!required && !std::filesystem::exists(path, error)) return std::optional<json>();
    Result<std::string> text = read_file(path);
    if (!text.ok()) return text.status();
    Result<json> parsed = parse_json_text(*text, path);
    if (!parsed.ok()) return parsed.status();
    if (!parsed->is_object()) return Status::Error(path + ": must be a JSON object");
    return std::optional<json>(std::move(*parsed));
}

// convert_hf_to_gguf.py's does_token_look_special: added tokens some models fail to mark special.
bool looks_special(const std::string& t) {
    if (t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]") return true;
    if (starts_with(t, "<|") && ends_with(t, "|>")) return true;
    if (starts_with(t, "<\xef\xbd\x9c") && ends_with(t, "\xef\xbd\x9c>")) return true;  // <｜...｜>
    return starts_with(t, "<unused") && ends_with(t, ">");
}

bool is_byte_token(const std::string& t) {  // "<0x0A>"
    return t.size() == 6 && starts_with(t, "<0x") && t[5] == '>' &&
           std::isxdigit(static_cast<unsigned char>(t[3])) && std::isxdigit(static_cast<unsigned char>(t[4]));
}

// Every pre-tokenizer of tokenizer.json's pre_tokenizer (a Sequence is flattened).
void collect_pre_tokenizers(const json& node, std::vector<const json*>& out) {
    if (!node.is_object()) return;
    if (node.value("type", "") == "Sequence" && node.contains("pretokenizers") &&
        node["pretokenizers"].is_array()) {
        for (const json& child : node["pretokenizers"])
            collect_pre_tokenizers(child, out);
        return;
    }
    out.push_back(&node);
}

void collect_normalizers(const json& node, std::vector<const json*>& out) {
    if (!node.is_object()) return;
    if (node.value("type", "") == "Sequence" && node.contains("normalizers") &&
        node["normalizers"].is_array()) {
        for (const json& child : node["normalizers"])
            collect_normalizers(child, out);
        return;
    }
    out.push_back(&node);
}

struct AddedToken {
    int64_t id;
    std::string content;
    bool special;
};

// tokenizer.ggml.add_bos_token / add_eos_token and the ids they add, by the rule the engine's tokenizer
// encodes with (special_tokens.h): llama.cpp adds bos_token_id / eos_token_id, so the token the tokenizer
// adds must be that id (taken as it when the files name none), and only one.
Status set_add_special(const json& tokenizer, const json* config, const tokenizer::TokenIdLookup& token_id,
                       const std::string& tokenizer_path, GgufTokenizer& out) {
    Result<tokenizer::SpecialTokens> specials = tokenizer::decide_special_tokens(tokenizer, config, token_id);
    if (!specials.ok()) return Status::Error(tokenizer_path + ": " + specials.error());
    struct Side {
        const char* kind;
        const std::vector<int32_t>& ids;
        const std::string& source;
        std::optional<uint32_t>& id;
        std::optional<bool>& add;
        std::string& add_source;
    };
    const Side sides[] = {
        {"bos", specials->prefix, specials->prefix_source, out.bos_id, out.add_bos, out.add_bos_source},
        {"eos", specials->suffix, specials->suffix_source, out.eos_id, out.add_eos, out.add_eos_source},
    };
    for (const Side& side : sides) {
        side.add = !side.ids.empty();
        side.add_source = side.source;
        if (side.ids.empty()) continue;
        const std::string which = side.kind == std::string("bos") ? "before" : "after";
        if (side.ids.size() > 1) {
            return Status::Error(tokenizer_path + ": the tokenizer puts " + std::to_string(side.ids.size()) +
                                 " tokens " + which + " each text (" + side.source + "); a GGUF holds one " +
                                 side.kind + " token to add");
        }
        const auto added_id = static_cast<uint32_t>(side.ids.front());
        if (side.id && *side.id != added_id) {
            return Status::Error(tokenizer_path + ": the tokenizer puts id " + std::to_string(added_id) +
                                 " " + which + " each text (" + side.source + ") but the " + side.kind +
                                 " token is id " + std::to_string(*side.id) +
                                 " (tokenizer_config.json / config.json): llama.cpp "
                                 "would add that one instead");
        }
        side.id = added_id;
    }
    return Status::Ok();
}

Status read_chat_template(const std::string& folder, const json* config, GgufTokenizer& out) {
    const std::string where = folder + "/tokenizer_config.json";
    if (config != nullptr && config->contains("chat_template") && !(*config)["chat_template"].is_null()) {
        const json& t = (*config)["chat_template"];
        if (t.is_string()) {
            out.chat_template = t.get<std::string>();
            return Status::Ok();
        }
        if (!t.is_array()) return Status::Error(where + ": chat_template must be a string or a list");
        for (const json& entry : t) {
            if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string() ||
                !entry.contains("template") || !entry["template"].is_string()) {
                return Status::Error(where + ": chat_template entries must be {\"name\", \"template\"}");
            }
            const std::string name = entry["name"].get<std::string>();
            if (name == "default") {
                out.chat_template = entry["template"].get<std::string>();
            } else {
                out.named_chat_templates.emplace_back(name, entry["template"].get<std::string>());
            }
        }
        return Status::Ok();
    }
    // transformers 4.43+ may keep the template beside tokenizer_config.json instead.
    const std::string jinja = folder + "/chat_template.jinja";
    std::error_code error;
    if (std::filesystem::exists(jinja, error)) {
        Result<std::string> text = read_file(jinja);
        if (!text.ok()) return text.status();
        out.chat_template = std::move(*text);
        return Status::Ok();
    }
    Result<std::optional<json>> chat_json = read_json(folder, "chat_template.json", false);
    if (!chat_json.ok()) return chat_json.status();
    if (*chat_json && (**chat_json).contains("chat_template") && (**chat_json)["chat_template"].is_string())
        out.chat_template = (**chat_json)["chat_template"].get<std::string>();
    return Status::Ok();
}

}  // namespace

Result<GgufFileType> parse_gguf_file_type(const std::string& name) {
    if (name == "f32") return GgufFileType::kAllF32;
    if (name == "f16") return GgufFileType::kMostlyF16;
    if (name == "bf16") return GgufFileType::kMostlyBF16;
    if (name == "q8_0") return GgufFileType::kMostlyQ8_0;
    return Status::Error("GGUF type \"" + name + "\" is not supported (f32, f16, bf16, q8_0)");
}

Result<std::string> gguf_pre_tokenizer(const std::string& split_regex) {
    if (split_regex == kLlama3Regex) return std::string("llama-bpe");
    if (split_regex == kQwen2Regex) return std::string("qwen2");
    return Status::Error("pre_tokenizer Split regex " + json(split_regex).dump() +
                         " is not one llama.cpp's export here knows (Llama 3: llama-bpe, Qwen2/3: qwen2)");
}

Result<GgufTokenizer> read_gguf_tokenizer(const std::string& folder, int64_t vocab_size) {
    const std::string tokenizer_path = folder + "/tokenizer.json";
    Result<std::optional<json>> tokenizer_file = read_json(folder, "tokenizer.json", true);
    if (!tokenizer_file.ok()) return tokenizer_file.status();
    Result<std::optional<json>> config_file = read_json(folder, "tokenizer_config.json", false);
    if (!config_file.ok()) return config_file.status();
    Result<std::optional<json>> model_config_file = read_json(folder, "config.json", false);
    if (!model_config_file.ok()) return model_config_file.status();
    const json& tj = **tokenizer_file;
    const json* config = *config_file ? &**config_file : nullptr;
    const json* model_config = *model_config_file ? &**model_config_file : nullptr;

    GgufTokenizer out;
    try {
        if (!tj.contains("model") || !tj["model"].is_object())
            return Status::Error(tokenizer_path + ": model must be an object");
        const json& model = tj["model"];
        const std::string model_type = model.value("type", "BPE");
        if (model_type != "BPE") {
            return Status::Error(tokenizer_path + ": model.type \"" + model_type +
                                 "\" is not supported for GGUF (BPE only)");
        }
        if (!model.contains("vocab") || !model["vocab"].is_object())
            return Status::Error(tokenizer_path + ": model.vocab must be an object");

        // Which of llama.cpp's tokenizers: byte-level BPE (gpt2) or SentencePiece-style BPE (llama).
        std::vector<const json*> pre_tokenizers;
        if (tj.contains("pre_tokenizer")) collect_pre_tokenizers(tj["pre_tokenizer"], pre_tokenizers);
        bool byte_level = tj.contains("decoder") && tj["decoder"].is_object() &&
                          tj["decoder"].value("type", "") == "ByteLevel";
        std::optional<std::string> split_regex;
        std::optional<bool> metaspace_prefix;
        for (const json* p : pre_tokenizers) {
            const std::string type = p->value("type", "");
            if (type == "ByteLevel") byte_level = true;
            if (type == "Split" && p->contains("pattern") && (*p)["pattern"].is_object() &&
                (*p)["pattern"].contains("Regex") && (*p)["pattern"]["Regex"].is_string()) {
                split_regex = (*p)["pattern"]["Regex"].get<std::string>();
            }
            if (type == "Metaspace") {
                metaspace_prefix = p->value("prepend_scheme", std::string("always")) != "never" &&
                                   p->value("add_prefix_space", true);
            }
        }
        const bool byte_fallback = model.value("byte_fallback", false);
        if (byte_level) {
            out.model = "gpt2";
            if (!split_regex) {
                return Status::Error(tokenizer_path +
                                     ": byte-level BPE without a Split pre_tokenizer regex: not a Llama 3 or "
                                     "Qwen tokenizer (llama.cpp needs tokenizer.ggml.pre)");
            }
            Result<std::string> pre = gguf_pre_tokenizer(*split_regex);
            if (!pre.ok()) return Status::Error(tokenizer_path + ": " + pre.error());
            out.pre = *pre;
        } else if (byte_fallback) {
            out.model = "llama";
            out.pre = "default";
        } else {
            return Status::Error(tokenizer_path +
                                 ": neither byte-level BPE (pre_tokenizer ByteLevel) nor SentencePiece-style "
                                 "BPE (model.byte_fallback): llama.cpp has no tokenizer for it");
        }

        std::vector<const json*> normalizers;
        if (tj.contains("normalizer")) collect_normalizers(tj["normalizer"], normalizers);
        bool prepends_space = false;
        for (const json* n : normalizers) {
            const std::string type = n->value("type", "");
            if (type == "NFC") out.normalizer_nfc = true;
            if (type == "Prepend" && n->value("prepend", "") == "\xe2\x96\x81") prepends_space = true;
        }

        // ids: the model's vocab, then added_tokens (which may repeat ids of the vocab: <s> in Llama 2).
        std::map<int64_t, std::string> by_id;
        std::map<std::string, int64_t> vocab_ids;
        auto bad_id = [](const json& id) {
            return !id.is_number_integer() || id.get<int64_t>() < 0 ||
                   id.get<int64_t>() >= model::kMaxVocabSize;
        };
        auto id_error = [&](const std::string& what, const json& id) {
            return Status::Error(tokenizer_path + ": " + what + " has id " + id.dump() + ", out of range");
        };
        for (const auto& [text, id] : model["vocab"].items()) {
            if (bad_id(id)) return id_error("model.vocab entry " + json(text).dump(), id);
            by_id[id.get<int64_t>()] = text;
            vocab_ids[text] = id.get<int64_t>();
        }
        std::vector<AddedToken> added;
        if (tj.contains("added_tokens") && tj["added_tokens"].is_array()) {
            for (const json& a : tj["added_tokens"]) {
                if (!a.is_object() || !a.contains("id") || !a.contains("content") ||
                    !a["content"].is_string())
                    return Status::Error(tokenizer_path + ": added_tokens entries need id and content");
                if (bad_id(a["id"])) return id_error("added token " + a["content"].dump(), a["id"]);
                added.push_back(
                    {a["id"].get<int64_t>(), a["content"].get<std::string>(), a.value("special", false)});
            }
        }
        int64_t highest = -1;
        if (!by_id.empty()) highest = by_id.rbegin()->first;
        for (const AddedToken& a : added)
            highest = std::max(highest, a.id);
        if (vocab_size == 0) vocab_size = highest + 1;
        if (highest >= vocab_size) {
            return Status::Error(tokenizer_path + ": token id " + std::to_string(highest) +
                                 " is not below the model's vocab_size " + std::to_string(vocab_size));
        }

        // Padding rows of the embedding (Qwen's 151936 > 151669 tokens) become unused "[PAD<id>]" tokens.
        out.tokens.resize(static_cast<size_t>(vocab_size));
        out.token_types.assign(static_cast<size_t>(vocab_size), static_cast<int32_t>(GgufTokenType::kUnused));
        for (int64_t i = 0; i < vocab_size; ++i)
            out.tokens[i] = "[PAD" + std::to_string(i) + "]";
        const bool spm = out.model == "llama";
        if (spm) out.scores.assign(static_cast<size_t>(vocab_size), kAddedTokenScore);
        const std::string unk = model.contains("unk_token") && model["unk_token"].is_string()
                                    ? model["unk_token"].get<std::string>()
                                    : std::string();
        for (const auto& [id, text] : by_id) {
            out.tokens[id] = text;
            GgufTokenType type = GgufTokenType::kNormal;
            if (spm && !unk.empty() && text == unk) type = GgufTokenType::kUnknown;
            if (spm && is_byte_token(text)) type = GgufTokenType::kByte;
            out.token_types[id] = static_cast<int32_t>(type);
        }
        for (const AddedToken& a : added) {
            // convert_hf_to_gguf: special (or special-looking) added tokens are control tokens; the others
            // are user-defined, with SentencePiece's U+2581 turned back into spaces (pre-normalized).
            const bool control = a.special || looks_special(a.content);
            out.tokens[a.id] = control ? a.content : replace_all(a.content, "\xe2\x96\x81", " ");
            out.token_types[a.id] =
                static_cast<int32_t>(control ? GgufTokenType::kControl : GgufTokenType::kUserDefined);
            if (spm) out.scores[a.id] = kAddedTokenScore;
        }

        // Merges: "left right"; the pair form (transformers 4.45+) may hold spaces, written as U+0120
        // as gguf-py does, since llama.cpp splits a merge at its first space.
        std::vector<std::pair<std::string, std::string>> merges;
        if (model.contains("merges") && model["merges"].is_array()) {
            merges.reserve(model["merges"].size());
            for (const json& m : model["merges"]) {
                if (m.is_string()) {
                    const std::string s = m.get<std::string>();
                    const size_t space = s.find(' ', 1);
                    if (space == std::string::npos)
                        return Status::Error(tokenizer_path + ": merge " + m.dump() + " has no space");
                    merges.emplace_back(s.substr(0, space), s.substr(space + 1));
                } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
                    merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
                } else {
                    return Status::Error(tokenizer_path + ": merge " + m.dump() +
                                         " is neither \"a b\" nor [a, b]");
                }
            }
        }
        if (!spm) {
            out.merges.reserve(merges.size());
            for (const auto& [left, right] : merges) {
                out.merges.push_back(replace_all(left, " ", "\xc4\xa0") + " " +
                                     replace_all(right, " ", "\xc4\xa0"));
            }
        } else {
            // llama.cpp's SentencePiece BPE joins the adjacent pair whose joined token has the highest
            // score. tokenizer.json has no scores but its merges are in SentencePiece's score order, so the
            // token the merge of rank r makes scores -r (its first merge); normal tokens no merge makes (the
            // single characters, never joined) score below them all; control, byte and unknown tokens 0.
            const auto lowest = -static_cast<float>(merges.size());
            for (int64_t id = 0; id < vocab_size; ++id) {
                if (out.token_types[id] == static_cast<int32_t>(GgufTokenType::kNormal))
                    out.scores[id] = lowest;
                if (out.token_types[id] == static_cast<int32_t>(GgufTokenType::kByte) ||
                    out.token_types[id] == static_cast<int32_t>(GgufTokenType::kUnknown))
                    out.scores[id] = 0.0f;
            }
            std::vector<bool> scored(static_cast<size_t>(vocab_size), false);
            for (size_t rank = 0; rank < merges.size(); ++rank) {
                const auto it = vocab_ids.find(merges[rank].first + merges[rank].second);
                if (it == vocab_ids.end() || scored[it->second]) continue;
                scored[it->second] = true;
                if (out.token_types[it->second] == static_cast<int32_t>(GgufTokenType::kNormal))
                    out.scores[it->second] = -static_cast<float>(rank);
            }
            // The leading "▁" llama.cpp adds (add_space_prefix, on by default for SentencePiece): a Prepend
            // normalizer (Llama 2's tokenizer.json) or a Metaspace pre-tokenizer that prepends.
            out.add_space_prefix = prepends_space || metaspace_prefix.value_or(false);
            if (config != nullptr && config->contains("add_prefix_space") &&
                (*config)["add_prefix_space"].is_boolean())
                out.add_space_prefix = (*config)["add_prefix_space"].get<bool>();
        }

        // Special ids as SpecialVocab: tokenizer_config.json's <kind>_token text looked up among the added
        // tokens (then the vocab), else config.json's <kind>_token_id when it is one integer (Llama 3.1's
        // eos list is not). Ids outside the vocabulary are left out.
        // A token's id as the tokenizer resolves it: the added tokens first, then the vocab.
        const tokenizer::TokenIdLookup token_id = [&](std::string_view text) -> std::optional<int32_t> {
            for (const AddedToken& a : added) {
                if (a.content == text) return static_cast<int32_t>(a.id);
            }
            if (const auto it = vocab_ids.find(std::string(text)); it != vocab_ids.end())
                return static_cast<int32_t>(it->second);
            return std::nullopt;
        };
        auto special = [&](const std::string& kind) -> std::optional<uint32_t> {
            std::optional<int64_t> id;
            if (const std::optional<std::string> text = tokenizer::config_special_token(config, kind))
                id = token_id(*text);
            if (!id && model_config != nullptr) {
                const auto it = model_config->find(kind + "_token_id");
                if (it != model_config->end() && it->is_number_integer()) id = it->get<int64_t>();
            }
            if (!id || *id < 0 || *id >= vocab_size) return std::nullopt;
            return static_cast<uint32_t>(*id);
        };
        out.bos_id = special("bos");
        out.eos_id = special("eos");
        out.unknown_id = special("unk");
        out.separator_id = special("sep");
        out.padding_id = special("pad");
        if (Status s = set_add_special(tj, config, token_id, tokenizer_path, out); !s.ok()) return s;
    } catch (const json::exception& e) {
        return Status::Error(tokenizer_path + ": " + e.what());
    }
    if (Status s = read_chat_template(folder, config, out); !s.ok()) return s;
    return out;
}

Result<std::string> gguf_architecture(const model::LlamaConfig& config) {
    if (config.model_type == "llama" || config.model_type == "mistral") return std::string("llama");
    if (config.model_type == "qwen2" || config.model_type == "qwen3") return config.model_type;
    return Status::Error("config.json: model_type \"" + config.model_type +
                         "\" has no GGUF architecture here");
}

Result<GgufModelMetadata> read_gguf_metadata(const std::string& folder) {
    GgufModelMetadata out;
    Result<std::optional<json>> config_json = read_json(folder, "config.json", true);
    if (!config_json.ok()) return config_json.status();
    Result<model::LlamaConfig> config = model::LlamaConfig::from_json(**config_json);
    if (!config.ok()) return Status::Error(folder + "/" + config.error());
    out.config = std::move(*config);
    Result<std::string> architecture = gguf_architecture(out.config);
    if (!architecture.ok()) return Status::Error(folder + "/" + architecture.error());
    out.architecture = *architecture;
    // llama.cpp has no bias tensors for qwen3, nor o_proj / MLP biases for qwen2.
    if ((out.config.model_type == "qwen3" && (out.config.qkv_bias || out.config.o_bias)) ||
        ((out.config.model_type == "qwen2" || out.config.model_type == "qwen3") &&
         (out.config.mlp_bias || (out.config.model_type == "qwen2" && out.config.o_bias)))) {
        return Status::Error(folder + "/config.json: attention_bias / mlp_bias: llama.cpp's " +
                             out.architecture + " has no such biases");
    }
    Result<GgufTokenizer> tokenizer = read_gguf_tokenizer(folder, out.config.vocab_size);
    if (!tokenizer.ok()) return tokenizer.status();
    out.tokenizer = std::move(*tokenizer);
    out.name = std::filesystem::path(folder).lexically_normal().filename().string();
    if (out.name.empty())
        out.name = std::filesystem::path(folder).lexically_normal().parent_path().filename().string();
    return out;
}

void add_gguf_metadata(const GgufModelMetadata& m, GgufFileType file_type, GgufWriter& w) {
    const std::string& a = m.architecture;
    const model::LlamaConfig& c = m.config;
    w.set_string("general.architecture", a);
    if (!m.name.empty()) w.set_string("general.name", m.name);
    w.set_u32("general.file_type", static_cast<uint32_t>(file_type));
    w.set_u32("general.quantization_version", 2);  // GGML_QNT_VERSION

    w.set_u32(a + ".context_length", static_cast<uint32_t>(c.max_position_embeddings));
    w.set_u32(a + ".embedding_length", static_cast<uint32_t>(c.hidden_size));
    w.set_u32(a + ".block_count", static_cast<uint32_t>(c.num_hidden_layers));
    w.set_u32(a + ".feed_forward_length", static_cast<uint32_t>(c.intermediate_size));
    w.set_u32(a + ".attention.head_count", static_cast<uint32_t>(c.num_attention_heads));
    w.set_u32(a + ".attention.head_count_kv", static_cast<uint32_t>(c.num_key_value_heads));
    w.set_f32(a + ".attention.layer_norm_rms_epsilon", static_cast<float>(c.rms_norm_eps));
    w.set_f32(a + ".rope.freq_base", static_cast<float>(c.rope_theta));
    w.set_u32(a + ".rope.dimension_count", static_cast<uint32_t>(c.head_dim));
    w.set_u32(a + ".vocab_size", static_cast<uint32_t>(c.vocab_size));
    // llama.cpp takes hidden_size / heads as the head size unless told (Qwen3-0.6B: 1024 / 16 != 128).
    if (c.head_dim * c.num_attention_heads != c.hidden_size) {
        w.set_u32(a + ".attention.key_length", static_cast<uint32_t>(c.head_dim));
        w.set_u32(a + ".attention.value_length", static_cast<uint32_t>(c.head_dim));
    }
    if (c.rope_scaling.type == "linear") {
        w.set_string(a + ".rope.scaling.type", "linear");
        w.set_f32(a + ".rope.scaling.factor", static_cast<float>(c.rope_scaling.factor));
    }

    const GgufTokenizer& t = m.tokenizer;
    w.set_string("tokenizer.ggml.model", t.model);
    w.set_string("tokenizer.ggml.pre", t.pre);
    w.set_string_array("tokenizer.ggml.tokens", t.tokens);
    if (!t.scores.empty()) w.set_f32_array("tokenizer.ggml.scores", t.scores);
    w.set_i32_array("tokenizer.ggml.token_type", t.token_types);
    if (!t.merges.empty()) w.set_string_array("tokenizer.ggml.merges", t.merges);
    const std::pair<const char*, const std::optional<uint32_t>*> ids[] = {
        {"tokenizer.ggml.bos_token_id", &t.bos_id},
        {"tokenizer.ggml.eos_token_id", &t.eos_id},
        {"tokenizer.ggml.unknown_token_id", &t.unknown_id},
        {"tokenizer.ggml.seperator_token_id", &t.separator_id},
        {"tokenizer.ggml.padding_token_id", &t.padding_id},
    };
    for (const auto& [key, id] : ids) {
        if (*id) w.set_u32(key, **id);
    }
    if (t.add_bos) w.set_bool("tokenizer.ggml.add_bos_token", *t.add_bos);
    if (t.add_eos) w.set_bool("tokenizer.ggml.add_eos_token", *t.add_eos);
    if (t.add_space_prefix) w.set_bool("tokenizer.ggml.add_space_prefix", *t.add_space_prefix);
    if (t.normalizer_nfc) w.set_bool("tokenizer.ggml.normalizer.nfc", true);
    if (!t.chat_template.empty()) w.set_string("tokenizer.chat_template", t.chat_template);
    for (const auto& [name, text] : t.named_chat_templates)
        w.set_string("tokenizer.chat_template." + name, text);
}

Result<std::optional<GgufTensorPlan>> gguf_tensor_plan(const std::string& hf_name,
                                                       const GgufModelMetadata& m) {
    const model::LlamaConfig& c = m.config;
    const bool llama = m.architecture == "llama";
    if (hf_name == "model.embed_tokens.weight")
        return std::optional<GgufTensorPlan>({"token_embd.weight", 0});
    if (hf_name == "model.norm.weight") return std::optional<GgufTensorPlan>({"output_norm.weight", 0});
    if (hf_name == "lm_head.weight") return std::optional<GgufTensorPlan>({"output.weight", 0});
    const std::string prefix = "model.layers.";
    auto unknown = [&]() {
        return Status::Error("tensor " + hf_name + " has no place in llama.cpp's " + m.architecture +
                             " GGUF");
    };
    if (!starts_with(hf_name, prefix)) return unknown();
    const size_t dot = hf_name.find('.', prefix.size());
    if (dot == std::string::npos || dot == prefix.size() || dot - prefix.size() > 4) return unknown();
    const std::string digits = hf_name.substr(prefix.size(), dot - prefix.size());
    if (!std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
        return unknown();
    const int64_t layer = std::stoll(digits);
    if (layer >= c.num_hidden_layers) {
        return Status::Error("tensor " + hf_name + ": layer " + digits + " but num_hidden_layers is " +
                             std::to_string(c.num_hidden_layers));
    }
    const std::string rest = hf_name.substr(dot + 1);
    if (ends_with(rest, "rotary_emb.inv_freq"))
        return std::optional<GgufTensorPlan>();  // llama.cpp computes it
    // HF module -> GGUF tensor, and whether the llama architecture permutes its rows for RoPE.
    struct Entry {
        const char* hf;
        const char* gguf;
        int64_t permute_heads;
    };
    const Entry entries[] = {
        {"input_layernorm", "attn_norm", 0},
        {"post_attention_layernorm", "ffn_norm", 0},
        {"self_attn.q_proj", "attn_q", llama ? c.num_attention_heads : 0},
        {"self_attn.k_proj", "attn_k", llama ? c.num_key_value_heads : 0},
        {"self_attn.v_proj", "attn_v", 0},
        {"self_attn.o_proj", "attn_output", 0},
        {"self_attn.q_norm", "attn_q_norm", 0},
        {"self_attn.k_norm", "attn_k_norm", 0},
        {"mlp.gate_proj", "ffn_gate", 0},
        {"mlp.up_proj", "ffn_up", 0},
        {"mlp.down_proj", "ffn_down", 0},
    };
    for (const Entry& e : entries) {
        for (const char* kind : {".weight", ".bias"}) {
            if (rest != std::string(e.hf) + kind) continue;
            const bool norm = ends_with(e.gguf, "_norm");
            if (norm && std::string(kind) == ".bias") return unknown();
            if ((std::string(e.gguf) == "attn_q_norm" || std::string(e.gguf) == "attn_k_norm") &&
                m.architecture != "qwen3")
                return unknown();
            return std::optional<GgufTensorPlan>(
                GgufTensorPlan{"blk." + digits + "." + e.gguf + kind, e.permute_heads});
        }
    }
    return unknown();
}

GgufType gguf_tensor_type(const std::string& gguf_name, const std::vector<int64_t>& shape,
                          GgufFileType file_type) {
    // Most of ggml takes 1-D tensors (norms, biases) only as F32.
    if (shape.size() <= 1 || ends_with(gguf_name, "_norm.weight") || !ends_with(gguf_name, ".weight"))
        return GgufType::kF32;
    switch (file_type) {
        case GgufFileType::kAllF32:
            return GgufType::kF32;
        case GgufFileType::kMostlyF16:
            return GgufType::kF16;
        case GgufFileType::kMostlyBF16:
            return GgufType::kBF16;
        case GgufFileType::kMostlyQ8_0:
            return shape.back() % kQ8_0BlockValues == 0 ? GgufType::kQ8_0 : GgufType::kF16;
    }
    return GgufType::kF32;
}

int64_t gguf_rope_source_row(int64_t row, int64_t out, int64_t heads) {
    const int64_t d = out / heads;  // rows per head
    const int64_t head = row / d;
    const int64_t within = row % d;
    return head * d + (within % 2) * (d / 2) + within / 2;
}

void permute_for_gguf_rope(const float* rows, int64_t out, int64_t in, int64_t heads, float* result) {
    for (int64_t r = 0; r < out; ++r) {
        const float* src = rows + gguf_rope_source_row(r, out, heads) * in;
        std::copy(src, src + in, result + r * in);
    }
}

std::vector<float> llama3_rope_factors(const model::LlamaConfig& c) {
    if (c.rope_scaling.type != "llama3") return {};
    const model::RopeScaling& s = c.rope_scaling;
    const double low_wavelen = static_cast<double>(s.original_max_position_embeddings) / s.low_freq_factor;
    const double high_wavelen = static_cast<double>(s.original_max_position_embeddings) / s.high_freq_factor;
    std::vector<float> factors;
    for (int64_t i = 0; i < c.head_dim; i += 2) {
        // As torch computes the frequencies there: in float32.
        const float exponent = static_cast<float>(i) / static_cast<float>(c.head_dim);
        const float freq = 1.0f / std::pow(static_cast<float>(c.rope_theta), exponent);
        const double wavelen = 2 * kPi / static_cast<double>(freq);
        double factor;
        if (wavelen < high_wavelen) {
            factor = 1.0;
        } else if (wavelen > low_wavelen) {
            factor = s.factor;
        } else {
            const double smooth =
                (static_cast<double>(s.original_max_position_embeddings) / wavelen - s.low_freq_factor) /
                (s.high_freq_factor - s.low_freq_factor);
            factor = 1.0 / ((1.0 - smooth) / s.factor + smooth);
        }
        factors.push_back(static_cast<float>(factor));
    }
    return factors;
}

Status add_gguf_rope_freqs(const GgufModelMetadata& metadata, GgufWriter& writer) {
    std::vector<float> factors = llama3_rope_factors(metadata.config);
    if (factors.empty()) return Status::Ok();
    const auto n = static_cast<int64_t>(factors.size());
    return writer.add_tensor("rope_freqs.weight", {n}, GgufType::kF32, std::move(factors));
}

}  // namespace slipway::io
