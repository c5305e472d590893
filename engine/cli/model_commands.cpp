// init-model, score, merge and dump (model_commands.h).
#include <torch/torch.h>

#include "cli/model_commands.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/model_loading.h"
#include "contract/file_system.h"
#include "contract/json_text.h"
#include "contract/run_config.h"
#include "model/llama.h"
#include "model/lora.h"
#include "model/qlora.h"
#include "model/tensor_io.h"
#include "model/torch_compat.h"
#include "model/weights.h"

namespace slipway::engine {
namespace {

struct QuantizeOptions {
    std::string model_dir, out_dir;
    bool double_quant = false;
    std::string compute_dtype = "bfloat16";
    std::string dtype;  // of the weights that stay unquantized; empty: the model's torch_dtype
};

// The files beside the weights that a model folder's users need (tokenizer, chat template, generation).
const char* const kModelSideFiles[] = {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                                       "generation_config.json", "chat_template.jinja"};

int run_quantize(const QuantizeOptions& o, std::ostream& out, std::ostream& err) {
    Result<model::LlamaConfig> config = model::LlamaConfig::from_file(o.model_dir + "/config.json");
    if (!config.ok()) {
        err << config.error() << "\n";
        return 1;
    }
    Result<io::Checkpoint> checkpoint = io::Checkpoint::open_folder(o.model_dir);
    if (!checkpoint.ok()) {
        err << checkpoint.error() << "\n";
        return 1;
    }
    // Quantized from the checkpoint's bytes layer by layer: the model is never whole in full precision.
    const AdapterConfig settings = model::qlora_settings(o.double_quant, o.compute_dtype);
    model::LlamaForCausalLM llama(*config);
    Result<int64_t> bytes = model::load_quantized_base(llama, *checkpoint, settings);
    if (!bytes.ok()) {
        err << o.model_dir << ": " << bytes.error() << "\n";
        return 1;
    }
    const std::string dtype = o.dtype.empty() ? config->torch_dtype : o.dtype;
    if (Status s = model::save_quantized_model(llama, settings, o.out_dir, dtype); !s.ok()) {
        err << s.message() << "\n";
        return 1;
    }
    for (const char* name : kModelSideFiles) {
        std::error_code ec;
        const std::filesystem::path from = std::filesystem::path(o.model_dir) / name;
        if (!std::filesystem::exists(from)) continue;
        std::filesystem::copy_file(from, std::filesystem::path(o.out_dir) / name,
                                   std::filesystem::copy_options::overwrite_existing, ec);
        if (ec) {
            err << from.string() << ": cannot copy: " << ec.message() << "\n";
            return 1;
        }
    }
    out << o.out_dir << ": decoder linear weights as NF4"
        << (o.double_quant ? " with double quantization" : "") << ", " << *bytes / (1 << 20)
        << " MiB of 4-bit storage; other weights " << dtype << "\n";
    return 0;
}

struct InitOptions {
    std::string config_path;
    std::string out_dir;
    uint64_t seed = 0;
    std::string dtype = "float32";
};

int run_init(const InitOptions& o, std::ostream& out, std::ostream& err) {
    Result<model::LlamaConfig> config = model::LlamaConfig::from_file(o.config_path);
    if (!config.ok()) {
        err << config.error() << "\n";
        return 1;
    }
    model::LlamaForCausalLM llama(*config);
    model::init_weights(llama, o.seed);
    const Status saved = model::save_hf_model(llama, o.out_dir, o.dtype);
    if (!saved.ok()) {
        err << saved.message() << "\n";
        return 1;
    }
    out << o.out_dir << ": " << config->parameter_count() << " parameters, " << o.dtype << ", seed " << o.seed
        << "\n";
    return 0;
}

struct ScoreOptions {
    std::string model_dir;
    std::string tokens_path;
    std::string adapter_dir;
    std::string device = "cpu";
    bool bf16 = false;
    int threads = 0;
};

int run_score(const ScoreOptions& o, std::ostream& out, std::ostream& err) {
    set_command_threads(o.threads);
    Result<CommandModel> loaded = load_for_command(o.model_dir, o.adapter_dir, o.device);
    if (!loaded.ok()) {
        err << loaded.error() << "\n";
        return 1;
    }
    model::LlamaForCausalLM& llama = loaded->llama;
    const torch::Device device = loaded->device;
    llama->eval();
    std::ifstream in(o.tokens_path);
    if (!in) {
        err << o.tokens_path << ": cannot open file\n";
        return 1;
    }
    torch::NoGradGuard no_grad;
    double weighted_loss = 0;
    int64_t total_tokens = 0, total_correct = 0;
    std::string line;
    size_t line_number = 0;
    const int64_t vocab = llama->config.vocab_size;
    while (std::getline(in, line)) {
        ++line_number;
        const std::string where = o.tokens_path + ":" + std::to_string(line_number) + ": ";
        const Result<std::vector<int64_t>> ids = read_ids_line(line, where, vocab, 2);
        if (!ids.ok()) {
            err << ids.error() << "\n";
            return 1;
        }
        const torch::Tensor batch = torch::tensor(*ids, torch::kInt64).unsqueeze(0).to(device);  // (1, T)
        model::LossResult r;
        {
            model::Bf16Autocast autocast(o.bf16, device.type());  // as training's bf16: fp32 weights
            r = model::causal_lm_loss(llama, batch);
        }
        const double loss = r.loss.item<double>();
        out << nlohmann::ordered_json{{"loss", loss},
                                      {"tokens", r.tokens},
                                      {"accuracy", static_cast<double>(r.correct) / r.tokens}}
                   .dump()
            << "\n";
        weighted_loss += loss * static_cast<double>(r.tokens);
        total_tokens += r.tokens;
        total_correct += r.correct;
    }
    const double mean = total_tokens ? weighted_loss / static_cast<double>(total_tokens) : 0.0;
    const double accuracy = total_tokens ? static_cast<double>(total_correct) / total_tokens : 0.0;
    out << nlohmann::ordered_json{{"summary", true},
                                  {"loss", mean},
                                  {"tokens", total_tokens},
                                  {"accuracy", accuracy}}
               .dump()
        << "\n";
    return 0;
}

struct MergeOptions {
    std::string model_dir;
    std::string adapter_dir;
    std::string out_dir;
    std::string dtype;
};

// The base model with a LoRA adapter folded in, as an HF folder (PEFT's merge_and_unload).
int run_merge(const MergeOptions& o, std::ostream& out, std::ostream& err) {
    Result<model::LlamaForCausalLM> llama = model::load_hf_model(o.model_dir);
    if (!llama.ok()) {
        err << llama.error() << "\n";
        return 1;
    }
    Result<AdapterConfig> adapter = model::load_adapter(*llama, o.adapter_dir);
    if (!adapter.ok()) {
        err << adapter.error() << "\n";
        return 1;
    }
    model::merge_lora(*llama);
    const std::string dtype = o.dtype.empty() ? (*llama)->config.torch_dtype : o.dtype;
    const Status saved = model::save_hf_model(
        *llama, o.out_dir,
        dtype == "float32" || dtype == "bfloat16" || dtype == "float16" ? dtype : "float32");
    if (!saved.ok()) {
        err << saved.message() << "\n";
        return 1;
    }
    for (const std::string& source : {o.adapter_dir, o.model_dir}) {  // the adapter's tokenizer wins
        std::error_code ec;
        if (std::filesystem::exists(source + "/tokenizer.json", ec)) {
            if (const Status copied =
                    copy_file_atomically(source + "/tokenizer.json", o.out_dir + "/tokenizer.json");
                !copied.ok()) {
                err << copied.message() << "\n";
                return 1;
            }
            break;
        }
    }
    out << o.out_dir << ": merged " << o.adapter_dir << " into " << o.model_dir << "\n";
    return 0;
}

struct DumpOptions {
    std::string model_dir;
    std::string tokens_path;
    std::string adapter_dir;
    std::string out_path;
    std::string device = "cpu";
};

// Logits, loss and every parameter's gradient for the first line of `tokens`, as safetensors, so an
// independent implementation can compare all three (tests/reference/llama_reference.py, tests/gpu/).
// With an adapter, the gradients are those of the parameters that require one.
int run_dump(const DumpOptions& o, std::ostream& out, std::ostream& err) {
    Result<CommandModel> loaded = load_for_command(o.model_dir, o.adapter_dir, o.device);
    if (!loaded.ok()) {
        err << loaded.error() << "\n";
        return 1;
    }
    model::LlamaForCausalLM& llama = loaded->llama;
    const torch::Device device = loaded->device;
    llama->eval();  // no LoRA dropout: the references it is compared with run in eval mode too
    std::ifstream in(o.tokens_path);
    std::string line;
    if (!in || !std::getline(in, line)) {
        err << o.tokens_path << ": cannot read a first line\n";
        return 1;
    }
    const Result<std::vector<int64_t>> ids =
        read_ids_line(line, o.tokens_path + ":1: ", llama->config.vocab_size, 2);
    if (!ids.ok()) {
        err << ids.error() << "\n";
        return 1;
    }
    const torch::Tensor batch = torch::tensor(*ids, torch::kInt64).unsqueeze(0).to(device);  // (1, T)
    model::LossResult r = model::causal_lm_loss(llama, batch);
    r.loss.backward();
    std::map<std::string, torch::Tensor> tensors;
    {
        torch::NoGradGuard no_grad;
        tensors["logits"] = llama->logits(batch).squeeze(0);  // (T, V)
    }
    tensors["loss"] = r.loss.detach().reshape({1});
    for (const auto& item : llama->named_parameters()) {
        if (item.value().grad().defined()) tensors["grad." + item.key()] = item.value().grad();
    }
    for (auto& [name, t] : tensors)
        t = t.to(torch::kCPU, torch::kFloat32);
    const Status written = model::write_tensors(o.out_path, tensors);
    if (!written.ok()) {
        err << written.message() << "\n";
        return 1;
    }
    out << o.out_path << ": loss " << r.loss.item<double>() << ", " << tensors.size() << " tensors\n";
    return 0;
}

}  // namespace

void add_model_commands(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err) {
    auto init = std::make_shared<InitOptions>();
    CLI::App* init_cmd =
        app.add_subcommand("init-model", "Write a randomly initialized HF LLaMA model folder");
    init_cmd->add_option("--config", init->config_path, "HF config.json")
        ->required()
        ->check(CLI::ExistingFile);
    init_cmd->add_option("--out", init->out_dir, "Output folder")->required();
    init_cmd->add_option("--seed", init->seed, "Random seed")->capture_default_str();
    init_cmd->add_option("--dtype", init->dtype, "f32 | bf16 | float32 | bfloat16 | float16")
        ->capture_default_str()
        ->transform(CLI::Transformer(
            std::map<std::string, std::string>{{"f32", "float32"}, {"bf16", "bfloat16"}, {"f16", "float16"}}))
        ->check(CLI::IsMember({"float32", "bfloat16", "float16"}));
    init_cmd->callback([init, exit_code, &out, &err] { *exit_code = run_init(*init, out, err); });

    auto quantize = std::make_shared<QuantizeOptions>();
    CLI::App* quantize_cmd = app.add_subcommand(
        "quantize", "Write a bitsandbytes 4-bit (NF4) copy of an HF model folder, as a \"-bnb-4bit\" folder");
    quantize_cmd->add_option("--model", quantize->model_dir, "HF model folder")
        ->required()
        ->check(CLI::ExistingDirectory);
    quantize_cmd->add_option("--out", quantize->out_dir, "Output folder")->required();
    quantize_cmd->add_flag("--double-quant", quantize->double_quant, "Quantize the block scales too (8-bit)");
    quantize_cmd->add_option("--compute-dtype", quantize->compute_dtype, "bnb_4bit_compute_dtype to record")
        ->capture_default_str()
        ->check(CLI::IsMember({"bfloat16", "float16", "float32"}));
    quantize_cmd
        ->add_option("--dtype", quantize->dtype,
                     "dtype of the weights left unquantized (default: the model's)")
        ->check(CLI::IsMember({"bfloat16", "float16", "float32"}));
    quantize_cmd->callback(
        [quantize, exit_code, &out, &err] { *exit_code = run_quantize(*quantize, out, err); });

    auto score = std::make_shared<ScoreOptions>();
    CLI::App* score_cmd =
        app.add_subcommand("score", "Mean next-token loss and accuracy of {\"ids\": [...]} lines");
    score_cmd->add_option("--model", score->model_dir, "HF model folder")
        ->required()
        ->check(CLI::ExistingDirectory);
    score_cmd->add_option("--tokens", score->tokens_path, "JSONL of {\"ids\": [...]}")
        ->required()
        ->check(CLI::ExistingFile);
    score_cmd->add_option("--adapter", score->adapter_dir, "PEFT LoRA adapter folder");
    score_cmd->add_option("--device", score->device, "cpu | cuda (GPU 0)")
        ->capture_default_str()
        ->check(CLI::IsMember({"cpu", "cuda"}));
    score_cmd->add_flag("--bf16", score->bf16, "bf16 autocast over fp32 weights, as training's bf16");
    score_cmd->add_option("--threads", score->threads, "Torch threads (0 = all cores)");
    score_cmd->callback([score, exit_code, &out, &err] { *exit_code = run_score(*score, out, err); });

    auto merge = std::make_shared<MergeOptions>();
    CLI::App* merge_cmd =
        app.add_subcommand("merge", "Fold a PEFT LoRA adapter into its base model (an HF folder)");
    merge_cmd->add_option("--model", merge->model_dir, "Base HF model folder")
        ->required()
        ->check(CLI::ExistingDirectory);
    merge_cmd->add_option("--adapter", merge->adapter_dir, "PEFT LoRA adapter folder")
        ->required()
        ->check(CLI::ExistingDirectory);
    merge_cmd->add_option("--out", merge->out_dir, "Output folder")->required();
    merge_cmd->add_option("--dtype", merge->dtype, "float32 | bfloat16 | float16 (default: the base's)")
        ->check(CLI::IsMember({"float32", "bfloat16", "float16"}));
    merge_cmd->callback([merge, exit_code, &out, &err] { *exit_code = run_merge(*merge, out, err); });

    auto dump = std::make_shared<DumpOptions>();
    CLI::App* dump_cmd =
        app.add_subcommand("dump", "Write logits, loss and gradients of the first line (reference checks)");
    dump_cmd->add_option("--model", dump->model_dir, "HF model folder")
        ->required()
        ->check(CLI::ExistingDirectory);
    dump_cmd->add_option("--tokens", dump->tokens_path, "JSONL of {\"ids\": [...]}")
        ->required()
        ->check(CLI::ExistingFile);
    dump_cmd->add_option("--out", dump->out_path, "Output .safetensors")->required();
    dump_cmd->add_option("--adapter", dump->adapter_dir, "PEFT LoRA adapter folder");
    dump_cmd->add_option("--device", dump->device, "cpu | cuda (GPU 0)")
        ->capture_default_str()
        ->check(CLI::IsMember({"cpu", "cuda"}));
    dump_cmd->callback([dump, exit_code, &out, &err] { *exit_code = run_dump(*dump, out, err); });
}

}  // namespace slipway::engine
