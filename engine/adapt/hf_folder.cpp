// Reading and writing HF model folders for a vocabulary change (hf_folder.h).
#include <torch/torch.h>

#include "adapt/hf_folder.h"

#include <filesystem>

#include "contract/file_system.h"
#include "contract/json_text.h"
#include "model/tensor_io.h"

namespace slipway::adapt {

const std::vector<std::string> kSideFiles = {"tokenizer_config.json", "special_tokens_map.json",
                                             "generation_config.json", "chat_template.jinja"};

namespace {

Result<torch::Tensor> matrix(const ModelFolder& m, const std::string& key) {
    const auto found = m.checkpoint.tensors().find(key);
    if (found == m.checkpoint.tensors().end())
        return Result<torch::Tensor>::Error(m.dir + ": the checkpoint has no tensor \"" + key + "\"");
    if (found->second.shape.size() != 2 || found->second.shape[0] != m.vocab_size)
        return Result<torch::Tensor>::Error(
            m.dir + ": \"" + key + "\" is " + model::shape_text(found->second.shape) +
            ", not [vocab_size, hidden] with config.json's vocab_size " + std::to_string(m.vocab_size));
    return model::tensor_of(found->second);
}

// bos/eos/pad_token_id (a number or a list) into the new vocabulary; ids it lacks are dropped.
void remap_token_ids(nlohmann::json& config, const TokenIdMap& new_id) {
    for (const char* key : {"bos_token_id", "eos_token_id", "pad_token_id"}) {
        if (!config.contains(key)) continue;
        nlohmann::json& value = config[key];
        if (value.is_number_integer()) {
            const std::optional<int64_t> id = new_id(value.get<int64_t>());
            if (id)
                value = *id;
            else
                config.erase(key);
        } else if (value.is_array()) {
            nlohmann::json ids = nlohmann::json::array();
            for (const nlohmann::json& v : value)
                if (v.is_number_integer())
                    if (std::optional<int64_t> id = new_id(v.get<int64_t>())) ids.push_back(*id);
            if (ids.empty())
                config.erase(key);
            else
                value = ids;
        }
    }
}

// tokenizer_config.json without "added_tokens_decoder": its ids belong to the tokenizer the file came
// with, not to the new one (the chat template, bos/eos strings and the rest are kept).
// generation_config.json with its token ids remapped. Other files as they are.
Status copy_side_file(const std::string& from, const std::string& to, const TokenIdMap& new_id) {
    const std::string name = std::filesystem::path(from).filename().string();
    if (name != "tokenizer_config.json" && name != "generation_config.json")
        return copy_file_atomically(from, to);
    Result<std::string> text = read_file(from);
    if (!text.ok()) return text.status();
    Result<nlohmann::json> config = parse_json_text(*text, from);
    if (!config.ok()) return config.status();
    if (name == "tokenizer_config.json")
        config->erase("added_tokens_decoder");
    else
        remap_token_ids(*config, new_id);
    return write_file_atomically(to, config->dump(2) + "\n");
}

}  // namespace

Result<ModelFolder> open_model_folder(const std::string& dir) {
    ModelFolder m;
    m.dir = dir;
    Result<std::string> text = read_file(dir + "/config.json");
    if (!text.ok()) return text.status();
    Result<nlohmann::json> config = parse_json_text(*text, dir + "/config.json");
    if (!config.ok()) return config.status();
    m.config = std::move(*config);
    if (!m.config.contains("vocab_size") || !m.config["vocab_size"].is_number_integer())
        return Result<ModelFolder>::Error(dir + "/config.json: no integer \"vocab_size\"");
    m.vocab_size = m.config["vocab_size"].get<int64_t>();
    m.tied = m.config.value("tie_word_embeddings", false);
    Result<io::Checkpoint> checkpoint = io::Checkpoint::open_folder(dir);
    if (!checkpoint.ok()) return checkpoint.status();
    m.checkpoint = std::move(*checkpoint);
    Result<torch::Tensor> embed = matrix(m, kEmbedKey);
    if (!embed.ok()) return embed.status();
    m.embed = *embed;
    if (m.checkpoint.tensors().count(kHeadKey)) {
        Result<torch::Tensor> head = matrix(m, kHeadKey);
        if (!head.ok()) return head.status();
        m.head = *head;
    } else if (!m.tied) {
        return Result<ModelFolder>::Error(dir + ": the checkpoint has no \"" + std::string(kHeadKey) +
                                          "\" and config.json does not tie the embeddings");
    }
    return m;
}

Status write_model_folder(const ModelFolder& model, const torch::Tensor& embed,
                          const std::optional<torch::Tensor>& head, const std::string& out_dir,
                          const std::string& tokenizer_text, const std::string& side_dir,
                          const TokenIdMap& new_id) {
    std::error_code ec;
    if (std::filesystem::exists(out_dir, ec) && std::filesystem::equivalent(out_dir, model.dir, ec))
        return Status::Error(out_dir + ": the output folder is the input model's; write to another one");
    std::filesystem::create_directories(out_dir, ec);
    if (ec) return Status::Error(out_dir + ": cannot create the folder: " + ec.message());
    // embed, head: (V_new, H), contiguous CPU tensors kept alive for the views below.
    const torch::Tensor e = embed.contiguous();
    const torch::Tensor h = head ? head->contiguous() : torch::Tensor();
    std::map<std::string, io::TensorView> views = model.checkpoint.tensors();
    for (const auto& [key, t] : {std::pair<const char*, torch::Tensor>{kEmbedKey, e}, {kHeadKey, h}}) {
        if (!t.defined()) continue;
        Result<io::DType> dtype = model::io_dtype(t.scalar_type());
        if (!dtype.ok()) return dtype.status();
        views[key] = io::TensorView{*dtype, t.sizes().vec(), static_cast<const uint8_t*>(t.data_ptr()),
                                    static_cast<size_t>(t.numel()) * t.element_size()};
    }
    if (Status s = io::write_safetensors(out_dir + "/model.safetensors", views); !s.ok()) return s;
    nlohmann::json config = model.config;
    config["vocab_size"] = e.size(0);
    remap_token_ids(config, new_id);
    if (Status s = write_file_atomically(out_dir + "/config.json", config.dump(2) + "\n"); !s.ok()) return s;
    if (Status s = write_file_atomically(out_dir + "/tokenizer.json", tokenizer_text); !s.ok()) return s;
    for (const std::string& name : kSideFiles) {
        const std::string from = side_dir + "/" + name;
        if (!std::filesystem::exists(from, ec)) continue;
        if (Status s = copy_side_file(from, out_dir + "/" + name, new_id); !s.ok()) return s;
    }
    return Status::Ok();
}

}  // namespace slipway::adapt
