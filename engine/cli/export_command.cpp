// export gguf (export_command.h): load the HF folder, merge the adapter, then stream each weight into the
// GGUF writer under llama.cpp's name, in the file type's storage, with the llama architecture's q/k rows
// permuted for ggml's RoPE. The tokenizer (and chat template) is the adapter folder's where it has one.
#include "cli/export_command.h"

#include <torch/torch.h>

#include <CLI/CLI.hpp>

#include <filesystem>
#include <memory>
#include <ostream>

#include "cli/model_loading.h"
#include "io/gguf_metadata.h"
#include "io/gguf_writer.h"
#include "model/lora.h"
#include "model/weights.h"

namespace slipway::engine {
namespace {

struct ExportOptions {
    std::string model_dir;
    std::string adapter_dir;
    std::string out_path;
    std::string type = "f16";
};

// Rows of `weight` (fp32, contiguous, CPU) in GGUF order: the writer's rows are the innermost dimension;
// with `permute_heads` the HF row each comes from is the permutation's (a bias is one row of `out` values,
// permuted element by element).
io::GgufRowSource rows_of(torch::Tensor weight, int64_t permute_heads) {
    const int64_t out_rows = weight.size(0), per_hf_row = weight.numel() / out_rows;
    const int64_t row_length = weight.size(weight.dim() - 1);
    return [weight, permute_heads, out_rows, per_hf_row, row_length](int64_t first, int64_t count,
                                                                     float* rows) {
        const float* data = weight.data_ptr<float>();
        for (int64_t r = 0; r < count; ++r) {
            for (int64_t c = 0; c < row_length; ++c) {
                const int64_t flat = (first + r) * row_length + c;
                const int64_t hf_row = flat / per_hf_row, column = flat % per_hf_row;
                const int64_t source =
                    permute_heads > 0 ? io::gguf_rope_source_row(hf_row, out_rows, permute_heads) : hf_row;
                rows[r * row_length + c] = data[source * per_hf_row + column];
            }
        }
        return Status::Ok();
    };
}

// "add_bos_token true (<s>, id 1): post_processor TemplateProcessing": what llama.cpp will add, and why.
std::string special_tokens_report(const io::GgufTokenizer& t) {
    auto side = [&t](const char* key, const std::optional<bool>& add, const std::optional<uint32_t>& id,
                     const std::string& source) {
        std::string text =
            std::string("tokenizer.ggml.") + key + " " + (add.value_or(false) ? "true" : "false");
        if (add.value_or(false) && id && *id < t.tokens.size())
            text += " (" + t.tokens[*id] + ", id " + std::to_string(*id) + ")";
        return text + ": " + source + "\n";
    };
    return side("add_bos_token", t.add_bos, t.bos_id, t.add_bos_source) +
           side("add_eos_token", t.add_eos, t.eos_id, t.add_eos_source);
}

// llama.cpp's llama architecture has no attention window (convert_hf_to_gguf.py drops Mistral's too): past
// the window, llama.cpp attends to positions the engine's model does not see.
std::string window_warning(const io::GgufModelMetadata& m) {
    const int64_t window = m.config.sliding_window;
    if (window <= 0 || window >= m.config.max_position_embeddings) return "";
    return "warning: config.json sliding_window " + std::to_string(window) + " < max_position_embeddings " +
           std::to_string(m.config.max_position_embeddings) + ": the GGUF's " + m.architecture +
           " architecture has no window, so past " + std::to_string(window) +
           " tokens llama.cpp attends to positions this model does not\n";
}

Status export_gguf(const ExportOptions& o, std::ostream& out) {
    Result<io::GgufFileType> file_type = io::parse_gguf_file_type(o.type);
    if (!file_type.ok()) return Status::Error("--type: " + file_type.error());
    Result<io::GgufModelMetadata> metadata = io::read_gguf_metadata(o.model_dir);
    if (!metadata.ok()) return metadata.status();
    const std::string tokenizer_json = model_tokenizer_path(o.model_dir, o.adapter_dir);
    if (tokenizer_json.empty())
        return Status::Error(o.model_dir + ": no tokenizer.json to put into the GGUF");
    const std::string tokenizer_folder = std::filesystem::path(tokenizer_json).parent_path().string();
    if (tokenizer_folder != o.model_dir) {
        Result<io::GgufTokenizer> tokenizer =
            io::read_gguf_tokenizer(tokenizer_folder, metadata->config.vocab_size);
        if (!tokenizer.ok()) return tokenizer.status();
        metadata->tokenizer = std::move(*tokenizer);
    }
    Result<model::LlamaForCausalLM> llama = model::load_hf_model(o.model_dir);
    if (!llama.ok()) return llama.status();
    if (!o.adapter_dir.empty()) {
        Result<AdapterConfig> adapter = model::load_adapter(*llama, o.adapter_dir);
        if (!adapter.ok()) return adapter.status();
        model::merge_lora(*llama);
    }
    io::GgufWriter writer;
    io::add_gguf_metadata(*metadata, *file_type, writer);
    if (Status s = io::add_gguf_rope_freqs(*metadata, writer); !s.ok()) return s;
    torch::NoGradGuard no_grad;
    for (const auto& item : (*llama)->named_parameters()) {
        Result<std::optional<io::GgufTensorPlan>> plan = io::gguf_tensor_plan(item.key(), *metadata);
        if (!plan.ok()) return plan.status();
        if (!plan->has_value()) continue;
        const torch::Tensor weight = item.value().detach().to(torch::kCPU, torch::kFloat32).contiguous();
        const std::vector<int64_t> shape(weight.sizes().begin(), weight.sizes().end());
        const io::GgufType type = io::gguf_tensor_type((*plan)->gguf_name, shape, *file_type);
        if (Status s = writer.add_tensor((*plan)->gguf_name, shape, type,
                                         rows_of(weight, (*plan)->rope_permute_heads));
            !s.ok())
            return s;
    }
    if (Status s = writer.write(o.out_path); !s.ok()) return s;
    out << window_warning(*metadata) << special_tokens_report(metadata->tokenizer);
    out << o.out_path << ": " << metadata->architecture << ", " << o.type << ", " << writer.tensor_count()
        << " tensors, " << writer.key_count() << " keys, " << writer.file_bytes() << " bytes"
        << (o.adapter_dir.empty() ? "" : ", adapter " + o.adapter_dir + " merged") << "\n";
    return Status::Ok();
}

}  // namespace

void add_export_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err) {
    CLI::App* exporter = app.add_subcommand("export", "Write a model in another format");
    exporter->require_subcommand(1);
    auto o = std::make_shared<ExportOptions>();
    CLI::App* gguf = exporter->add_subcommand(
        "gguf", "One GGUF file for llama.cpp / Ollama: weights (LoRA merged), tokenizer and chat template");
    gguf->add_option("--model", o->model_dir, "HF model folder")->required()->check(CLI::ExistingDirectory);
    gguf->add_option("--adapter", o->adapter_dir, "PEFT LoRA adapter folder, merged into the weights")
        ->check(CLI::ExistingDirectory);
    gguf->add_option("--out", o->out_path, "Output .gguf file")->required();
    gguf->add_option("--type", o->type, "Storage of the 2-D weights: f32 | f16 | bf16 | q8_0")
        ->capture_default_str()
        ->check(CLI::IsMember({"f32", "f16", "bf16", "q8_0"}));
    gguf->callback([o, exit_code, &out, &err] {
        const Status s = export_gguf(*o, out);
        if (!s.ok()) err << s.message() << "\n";
        *exit_code = s.ok() ? 0 : 1;
    });
}

}  // namespace slipway::engine
