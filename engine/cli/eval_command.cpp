// The eval command (eval_command.h): load tasks first (a bad task file fails before the model loads), then
// the model, its tokenizer, and run every task.
#include <torch/torch.h>

#include "cli/eval_command.h"

#include <fstream>
#include <memory>
#include <optional>
#include <ostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/model_loading.h"
#include "eval/llama_scorer.h"
#include "eval/runner.h"
#include "eval/tasks.h"
#include "model/torch_compat.h"
#include "tokenizer/tokenizer.h"

namespace slipway::engine {
namespace {

struct EvalOptions {
    std::string model_dir;
    std::string adapter_dir;
    std::string tasks_path;
    std::string tokenizer_path;
    std::string details_path;
    std::string device = "cpu";
    int threads = 0;
    bool bf16 = false;
    std::optional<int64_t> limit;
};

int run_eval(const EvalOptions& o, std::ostream& out, std::ostream& err) {
    Result<std::vector<eval::EvalTask>> tasks = eval::load_eval_tasks(o.tasks_path, o.limit);
    if (!tasks.ok()) {
        err << tasks.error() << "\n";
        return 1;
    }
    Result<tokenizer::Tokenizer> tokenizer =
        load_command_tokenizer(o.model_dir, o.adapter_dir, o.tokenizer_path);
    if (!tokenizer.ok()) {
        err << tokenizer.error() << "\n";
        return 1;
    }
    set_command_threads(o.threads);
    Result<CommandModel> loaded = load_for_command(o.model_dir, o.adapter_dir, o.device);
    if (!loaded.ok()) {
        err << loaded.error() << "\n";
        return 1;
    }
    model::LlamaForCausalLM& llama = loaded->llama;
    const torch::Device device = loaded->device;
    if (tokenizer->vocab_size() > static_cast<size_t>(llama->config.vocab_size)) {
        err << "the tokenizer has " << tokenizer->vocab_size() << " tokens but the model only "
            << llama->config.vocab_size << "\n";
        return 1;
    }
    llama->eval();
    std::unique_ptr<eval::ScoringModel> scorer = eval::make_llama_scorer(llama, device);
    std::ofstream details;
    eval::SampleSink sink;
    if (!o.details_path.empty()) {
        details.open(o.details_path);
        if (!details) {
            err << o.details_path << ": cannot write\n";
            return 1;
        }
        sink = [&details](const nlohmann::ordered_json& sample) { details << sample.dump() << "\n"; };
    }
    Result<std::vector<eval::TaskResult>> results = Status::Error("not run");
    {
        model::Bf16Autocast autocast(o.bf16, device.type());  // as training's bf16: fp32 weights
        results = eval::run_eval_tasks(*tasks, *tokenizer, *scorer, sink);
    }
    if (!results.ok()) {
        err << results.error() << "\n";
        return 1;
    }
    if (details.is_open() && !details.flush()) {
        err << o.details_path << ": write failed\n";
        return 1;
    }
    nlohmann::ordered_json doc = {{"model", o.model_dir}};
    if (!o.adapter_dir.empty()) doc["adapter"] = o.adapter_dir;
    doc["tasks_file"] = o.tasks_path;
    doc["tasks"] = eval::results_json(*results)["tasks"];
    out << doc.dump(2) << "\n";
    return 0;
}

}  // namespace

void add_eval_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err) {
    auto o = std::make_shared<EvalOptions>();
    CLI::App* cmd = app.add_subcommand(
        "eval", "Run evaluation tasks (multiple choice, generation, perplexity) on a model; JSON on stdout");
    cmd->add_option("--model", o->model_dir, "HF model folder")->required()->check(CLI::ExistingDirectory);
    cmd->add_option("--adapter", o->adapter_dir, "PEFT LoRA adapter folder")->check(CLI::ExistingDirectory);
    cmd->add_option("--tasks", o->tasks_path, "Task file (JSON; engine/eval/README.md)")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_option("--tokenizer", o->tokenizer_path,
                    "tokenizer.json (default: the adapter's, else the model folder's)")
        ->check(CLI::ExistingFile);
    cmd->add_option("--device", o->device, "cpu | cuda (GPU 0)")
        ->capture_default_str()
        ->check(CLI::IsMember({"cpu", "cuda"}));
    cmd->add_option("--threads", o->threads, "Torch threads (0 = all cores)");
    cmd->add_flag("--bf16", o->bf16, "bf16 autocast over fp32 weights, as training's bf16");
    cmd->add_option("--limit", o->limit, "At most N samples per task")->check(CLI::PositiveNumber);
    cmd->add_option("--details", o->details_path, "Write every sample's scores to this JSONL file");
    cmd->callback([o, exit_code, &out, &err] { *exit_code = run_eval(*o, out, err); });
}

}  // namespace slipway::engine
