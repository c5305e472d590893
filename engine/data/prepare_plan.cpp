// Path resolution, input digests, the cache key and the EOS id of prepare_plan.h.
#include "data/prepare_plan.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "data/hash.h"

namespace fs = std::filesystem;

namespace slipway::data {
namespace {

std::string absolute_path(const std::string& path) {
    std::error_code ec;
    fs::path p = fs::absolute(path, ec);
    return (ec ? fs::path(path) : p).lexically_normal().string();
}

Result<CacheInput> describe(const std::string& role, const std::string& path, bool digest_inputs) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return Status::Error(path + ": " + role + " file not found");
    if (!digest_inputs) return CacheInput{role, absolute_path(path), 0, 0, 0};
    Result<FileDigest> digest = digest_file(path);
    if (!digest.ok()) return digest.status();
    return CacheInput{role, absolute_path(path), digest->size, digest->mtime_ns, digest->hash};
}

// A file that changes the ids where it exists: an input of the key once, whichever setting names it.
Status add_optional_input(PreparePlan& plan, const std::string& role, const std::string& path,
                          bool digest_inputs) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return Status::Ok();
    for (const CacheInput& in : plan.inputs) {
        if (in.path == absolute_path(path)) return Status::Ok();
    }
    Result<CacheInput> input = describe(role, path, digest_inputs);
    if (!input.ok()) return input.status();
    plan.inputs.push_back(*input);
    return Status::Ok();
}

// data.format, with auto told by the train file's first line that is a JSON object (bad lines before it are
// the text reader's to refuse or skip; a file with none is read as text).
Status resolve_format(const DataConfig& d, PreparePlan& plan) {
    if (d.format != "auto") {
        Result<DataFormat> format = data_format_named(d.format);
        if (!format.ok()) return Status::Error("/data/format: " + format.error());
        plan.format = *format;
        return Status::Ok();
    }
    std::ifstream in(d.train_file);
    if (!in) return Status::Error(d.train_file + ": cannot read the train file");
    std::string line;
    for (uint64_t number = 1; std::getline(in, line); ++number) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        const nlohmann::json first = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (!first.is_object()) continue;
        Result<DataFormat> format = detect_data_format(first, d.text_field, &plan.format_found);
        if (!format.ok())
            return Status::Error(d.train_file + ":" + std::to_string(number) + ": " + format.error());
        plan.format = *format;
        return Status::Ok();
    }
    plan.format = DataFormat::kText;
    plan.format_found = "no JSON object in the file (plain text)";
    return Status::Ok();
}

// Conversations: train_on, truncation, and the chat setup, whose files become inputs.
Status resolve_conversations(const RunConfig& config, PreparePlan& plan) {
    const DataConfig& d = config.data;
    Result<TrainOn> train_on = train_on_named(d.train_on);
    if (!train_on.ok()) return Status::Error("/data/train_on: " + train_on.error());
    plan.train_on = *train_on;
    plan.truncation = d.truncation;
    plan.packing = d.packing;
    Result<chat::ChatSetup> setup = chat::read_chat_setup(config.model.path, d.chat_template);
    if (!setup.ok())
        return Status::Error("/data/format " + std::string(data_format_name(plan.format)) + ": " +
                             setup.error());
    plan.chat = std::move(*setup);
    Result<CacheInput> source = describe("chat_template", plan.chat.source, true);
    if (!source.ok()) return source.status();
    plan.inputs.push_back(*source);
    // bos/eos for the template
    return add_optional_input(plan, "tokenizer_config",
                              (fs::path(config.model.path) / "tokenizer_config.json").string(), true);
}

std::string format_double(double value) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.17g", value);
    return text;
}

}  // namespace

Result<std::optional<int64_t>> read_model_eos_token_id(const std::string& model_config_file) {
    std::error_code ec;
    if (!fs::is_regular_file(model_config_file, ec)) return std::optional<int64_t>();
    Result<nlohmann::json> json = read_json_file(model_config_file);
    if (!json.ok()) return json.status();
    if (!json->is_object()) return Status::Error(model_config_file + ": expected a JSON object");
    const auto it = json->find("eos_token_id");
    if (it == json->end() || it->is_null()) return std::optional<int64_t>();
    if (it->is_number_integer()) return std::optional<int64_t>(it->get<int64_t>());
    if (it->is_array() && !it->empty() && it->front().is_number_integer()) {
        return std::optional<int64_t>(it->front().get<int64_t>());
    }
    return Status::Error(model_config_file + ": eos_token_id must be an integer or a list of integers");
}

Result<PreparePlan> make_prepare_plan(const RunConfig& config, bool digest_inputs) {
    PreparePlan plan;
    const DataConfig& d = config.data;
    plan.train_file = d.train_file;
    plan.validation_file = d.validation_file;
    plan.tokenizer_file = !config.tokenizer.path.empty()
                              ? config.tokenizer.path
                              : (fs::path(config.model.path) / "tokenizer.json").string();
    plan.model_config_file = (fs::path(config.model.path) / "config.json").string();
    plan.cache_dir = absolute_path(
        !d.cache_dir.empty() ? d.cache_dir : (fs::path(config.training.output_dir) / "cache").string());
    const std::optional<SplitMode> mode = parse_split_mode(d.split);
    if (!mode) return Status::Error("/data/split: unknown split mode \"" + d.split + "\"");
    plan.mode = *mode;
    plan.block_size = static_cast<uint64_t>(d.block_size);
    plan.dedup = d.dedup;
    plan.text_field = d.text_field;
    if (d.validation_file.empty()) {
        plan.validation_split_percentage = d.validation_split_percentage;
        if (d.validation_split_percentage > 0) plan.seed = config.training.seed;
    }
    Result<std::optional<int64_t>> eos = read_model_eos_token_id(plan.model_config_file);
    if (!eos.ok()) return eos.status();
    plan.model_eos_token_id = *eos;

    Result<CacheInput> train = describe("train", plan.train_file, digest_inputs);
    if (!train.ok()) return train.status();
    plan.inputs.push_back(*train);
    if (!plan.validation_file.empty()) {
        Result<CacheInput> validation = describe("validation", plan.validation_file, digest_inputs);
        if (!validation.ok()) return validation.status();
        plan.inputs.push_back(*validation);
    }
    Result<CacheInput> tok = describe("tokenizer", plan.tokenizer_file, digest_inputs);
    if (!tok.ok()) return tok.status();
    plan.inputs.push_back(*tok);
    // Beside the tokenizer, it decides the special tokens around each document (special_tokens.h).
    const std::string tokenizer_config =
        (fs::path(plan.tokenizer_file).parent_path() / "tokenizer_config.json").string();
    if (Status s = add_optional_input(plan, "tokenizer_config", tokenizer_config, digest_inputs); !s.ok())
        return s;
    if (Status s = resolve_format(d, plan); !s.ok()) return s;
    if (plan.format != DataFormat::kText) {
        if (Status s = resolve_conversations(config, plan); !s.ok()) return s;
    }

    plan.key = hex64(xxh64(cache_key_text(plan)));
    plan.cache_path = (fs::path(plan.cache_dir) / plan.key).string();
    return plan;
}

std::string cache_key_text(const PreparePlan& plan) {
    std::string text = std::string(kTokenCacheMagic) + "/" + std::to_string(kTokenCacheFormatVersion) + "\n";
    for (const CacheInput& in : plan.inputs) {
        if (in.role == "tokenizer") {  // its bytes decide the ids, wherever it lives
            text += "tokenizer=" + hex64(in.xxh64) + "\n";
        } else {
            text += in.role + "=" + in.path + "|" + std::to_string(in.size) + "|" +
                    std::to_string(in.mtime_ns) + "|" + hex64(in.xxh64) + "\n";
        }
    }
    text += "block_size=" + std::to_string(plan.block_size) + "\n";
    text += std::string("split=") + split_mode_name(plan.mode) + "\n";
    text += std::string("dedup=") + (plan.dedup ? "1" : "0") + "\n";
    text += "text_field=" + plan.text_field + "\n";
    text += std::string("format=") + data_format_name(plan.format) + "\n";
    if (plan.format != DataFormat::kText) {
        text += std::string("train_on=") + train_on_name(plan.train_on) + "\n";
        text += "truncation=" + plan.truncation + "\n";
        text += std::string("packing=") + (plan.packing ? "1" : "0") + "\n";
    }
    if (plan.validation_split_percentage) {
        text += "validation_split_percentage=" + format_double(*plan.validation_split_percentage) + "\n";
    }
    if (plan.seed) text += "seed=" + std::to_string(*plan.seed) + "\n";
    // Without a model config the EOS comes from the tokenizer, whose hash is already in the key.
    text +=
        "eos=" + (plan.model_eos_token_id ? std::to_string(*plan.model_eos_token_id) : "tokenizer") + "\n";
    return text;
}

Result<uint32_t> resolve_eos_token_id(const PreparePlan& plan, const tokenizer::Tokenizer& tok,
                                      std::string* source) {
    std::optional<int64_t> id = plan.model_eos_token_id;
    std::string from = plan.model_config_file + " eos_token_id";
    if (!id) {
        for (const char* name : {"<|end_of_text|>", "<|endoftext|>", "</s>", "<|im_end|>", "<eos>"}) {
            if (const std::optional<int32_t> found = tok.token_to_id(name)) {
                id = *found;
                from = plan.tokenizer_file + " token " + name;
                break;
            }
        }
    }
    if (!id) {
        return Status::Error("no EOS token: " + plan.model_config_file + " has no eos_token_id and " +
                             plan.tokenizer_file +
                             " has none of <|end_of_text|>, <|endoftext|>, </s>, <|im_end|>, <eos>");
    }
    if (*id < 0 || static_cast<uint64_t>(*id) >= tok.vocab_size()) {
        return Status::Error(from + ": EOS id " + std::to_string(*id) +
                             " is outside the tokenizer's vocabulary of " + std::to_string(tok.vocab_size()));
    }
    if (source) *source = from;
    return static_cast<uint32_t>(*id);
}

DocumentEncoderOptions encoder_options(const PreparePlan& plan, const tokenizer::Tokenizer& tok,
                                       uint32_t eos) {
    DocumentEncoderOptions encoder;
    encoder.tokenizer = &tok;
    encoder.text_field = plan.text_field;
    encoder.mode = plan.mode;
    encoder.eos_token_id = eos;
    encoder.hash_text = plan.dedup;
    encoder.format = plan.format;
    encoder.chat = &plan.chat;
    encoder.train_on = plan.train_on;
    encoder.block_size = plan.block_size;
    encoder.truncation = plan.truncation;
    encoder.pad_to_block = !plan.packing;
    return encoder;
}

bool held_out_for_validation(uint64_t line_number, int64_t seed, double percentage) {
    if (percentage <= 0) return false;
    const double share = percentage / 100.0;
    if (share >= 1) return true;
    const auto threshold = static_cast<uint64_t>(std::ldexp(share, 64));
    const uint64_t draw =
        splitmix64_mix(splitmix64_mix(static_cast<uint64_t>(seed)) ^ splitmix64_mix(line_number));
    return draw < threshold;
}

}  // namespace slipway::data
