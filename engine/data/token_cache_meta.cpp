// meta.json of the token cache <-> CacheMeta (token_cache_meta.h).
#include "data/token_cache_meta.h"

#include <stdexcept>

#include "data/hash.h"

namespace slipway::data {
namespace {

nlohmann::ordered_json counts_to_json(const SplitCounts& c, Split split) {
    nlohmann::ordered_json j;
    j["documents"] = c.documents;
    j["tokens"] = c.tokens;
    j["blocks"] = c.blocks;
    j["tokens_dropped"] = c.tokens_dropped;
    j["tokens_repeated"] = c.tokens_repeated;
    j["trained_tokens"] = c.trained_tokens;
    j["padding_tokens"] = c.padding_tokens;
    j["tokens_file"] = tokens_file_name(split);
    j["blocks_file"] = blocks_file_name(split);
    return j;
}

// Reads a required field of a given type; throws nlohmann type errors that the caller turns into a Status.
template <typename T>
T field(const nlohmann::json& j, const char* name) {
    const auto it = j.find(name);
    if (it == j.end()) throw std::runtime_error(std::string("missing field \"") + name + "\"");
    return it->get<T>();
}

SplitCounts counts_from_json(const nlohmann::json& j) {
    SplitCounts c;
    c.documents = field<uint64_t>(j, "documents");
    c.tokens = field<uint64_t>(j, "tokens");
    c.blocks = field<uint64_t>(j, "blocks");
    c.tokens_dropped = field<uint64_t>(j, "tokens_dropped");
    c.tokens_repeated = field<uint64_t>(j, "tokens_repeated");
    c.trained_tokens = field<uint64_t>(j, "trained_tokens");
    c.padding_tokens = field<uint64_t>(j, "padding_tokens");
    return c;
}

}  // namespace

const char* split_name(Split split) {
    return split == Split::kTrain ? "train" : "validation";
}
std::string tokens_file_name(Split split) {
    return std::string(split_name(split)) + ".tokens";
}
std::string blocks_file_name(Split split) {
    return std::string(split_name(split)) + ".blocks";
}

nlohmann::ordered_json meta_to_json(const CacheMeta& meta) {
    nlohmann::ordered_json j;
    j["magic"] = kTokenCacheMagic;
    j["format_version"] = meta.format_version;
    j["engine_version"] = meta.engine_version;
    j["key"] = meta.key;
    j["created"] = meta.created;
    j["token_dtype"] = "uint32";
    j["offset_dtype"] = "uint64";
    j["byte_order"] = "little";
    j["block_size"] = meta.block_size;
    j["split"] = meta.split_mode;
    j["dedup"] = meta.dedup;
    j["text_field"] = meta.text_field;
    j["data_format"] = meta.data_format;
    j["train_on"] = meta.train_on;
    j["packed"] = meta.packed;
    j["untrained_token_bit"] = kUntrainedTokenBit;
    j["document_start_bit"] = kDocumentStartBit;
    j["validation_split_percentage"] = nullptr;
    if (meta.validation_split_percentage)
        j["validation_split_percentage"] = *meta.validation_split_percentage;
    j["seed"] = nullptr;
    if (meta.seed) j["seed"] = *meta.seed;
    j["eos_token_id"] = meta.eos_token_id;
    j["document_prefix_ids"] = meta.document_prefix_ids;
    j["document_prefix_source"] = meta.document_prefix_source;
    j["vocab_size"] = meta.vocab_size;
    j["documents_read"] = meta.documents_read;
    j["duplicates_removed"] = meta.duplicates_removed;
    j["bad_lines_skipped"] = meta.bad_lines_skipped;
    j["conversations_truncated"] = meta.conversations_truncated;
    j["conversations_dropped"] = meta.conversations_dropped;
    j["train"] = counts_to_json(meta.train, Split::kTrain);
    j["validation"] = counts_to_json(meta.validation, Split::kValidation);
    nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
    for (const CacheInput& in : meta.inputs) {
        inputs.push_back({{"role", in.role},
                          {"path", in.path},
                          {"size", in.size},
                          {"mtime_ns", in.mtime_ns},
                          {"xxh64", hex64(in.xxh64)}});
    }
    j["inputs"] = std::move(inputs);
    return j;
}

Result<CacheMeta> meta_from_json(const nlohmann::json& j, const std::string& file) {
    // Any JSON may sit here (another program's file, a torn write): "magic" is checked for a string first.
    const bool has_magic = j.is_object() && j.contains("magic") && j["magic"].is_string() &&
                           j["magic"].get<std::string>() == kTokenCacheMagic;
    if (!has_magic) {
        return Status::Error(file + ": not a token cache (magic \"" + kTokenCacheMagic + "\" missing)");
    }
    CacheMeta meta;
    try {
        meta.format_version = field<int64_t>(j, "format_version");
        if (meta.format_version != kTokenCacheFormatVersion) {
            return Status::Error(file + ": token cache format version " +
                                 std::to_string(meta.format_version) + ", this engine reads version " +
                                 std::to_string(kTokenCacheFormatVersion));
        }
        meta.engine_version = field<std::string>(j, "engine_version");
        meta.key = field<std::string>(j, "key");
        meta.created = field<std::string>(j, "created");
        meta.block_size = field<int64_t>(j, "block_size");
        meta.split_mode = field<std::string>(j, "split");
        meta.dedup = field<bool>(j, "dedup");
        meta.text_field = field<std::string>(j, "text_field");
        meta.data_format = field<std::string>(j, "data_format");
        meta.train_on = field<std::string>(j, "train_on");
        meta.packed = field<bool>(j, "packed");
        if (j.contains("validation_split_percentage") && !j["validation_split_percentage"].is_null()) {
            meta.validation_split_percentage = j["validation_split_percentage"].get<double>();
        }
        if (j.contains("seed") && !j["seed"].is_null()) meta.seed = j["seed"].get<int64_t>();
        meta.eos_token_id = field<int64_t>(j, "eos_token_id");
        meta.document_prefix_ids = field<std::vector<int64_t>>(j, "document_prefix_ids");
        meta.document_prefix_source = field<std::string>(j, "document_prefix_source");
        meta.vocab_size = field<uint64_t>(j, "vocab_size");
        meta.documents_read = field<uint64_t>(j, "documents_read");
        meta.duplicates_removed = field<uint64_t>(j, "duplicates_removed");
        meta.bad_lines_skipped = field<uint64_t>(j, "bad_lines_skipped");
        meta.conversations_truncated = field<uint64_t>(j, "conversations_truncated");
        meta.conversations_dropped = field<uint64_t>(j, "conversations_dropped");
        meta.train = counts_from_json(field<nlohmann::json>(j, "train"));
        meta.validation = counts_from_json(field<nlohmann::json>(j, "validation"));
        for (const nlohmann::json& in : field<nlohmann::json>(j, "inputs")) {
            CacheInput input;
            input.role = field<std::string>(in, "role");
            input.path = field<std::string>(in, "path");
            input.size = field<uint64_t>(in, "size");
            input.mtime_ns = field<int64_t>(in, "mtime_ns");
            input.xxh64 = std::stoull(field<std::string>(in, "xxh64"), nullptr, 16);
            meta.inputs.push_back(std::move(input));
        }
    } catch (const std::exception& e) {
        return Status::Error(file + ": bad token cache metadata: " + e.what());
    }
    if (meta.block_size < 1) return Status::Error(file + ": block_size must be >= 1");
    return meta;
}

}  // namespace slipway::data
