// generate_command.h. Input lines (--prompts FILE, or - for stdin, read one at a time so a caller can hold a
// conversation over a pipe): {"text": "..."} (with --chat: the user's message), {"ids": [...]} (the prompt's
// tokens as they are), or {"messages": [{"role", "content"}, ...]} (needs the chat template). Output, one
// line per input line, in order:
//   {"ids": [new tokens], "text": "...", "finish_reason": "eos|stop|length", "prompt_tokens": N,
//    "new_tokens": M, "tokens_per_s": R}
// and with --echo-prompt "prompt_ids" (the prompt's tokens) and "prompt" (its text as given or as the chat
// template rendered it; not for {"ids"} lines), so reference checks see what the model was fed.
// preceded with --stream by {"delta": "..."} lines as the text becomes final. A bad line gives
// {"error": "FILE:LINE: ..."} in its place (and on stderr), the others go on, and the exit code is 1.
#include "cli/generate_command.h"

#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <istream>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "chat/chat_setup.h"
#include "cli/model_loading.h"
#include "contract/json_text.h"
#include "contract/run_config.h"
#include "generate/generator.h"
#include "tokenizer/tokenizer.h"

namespace slipway::engine {
namespace {

struct GenerateCliOptions {
    std::string model_dir, adapter_dir, tokenizer_path;
    std::string prompt, prompts_path;
    std::string system;  // with --chat: a system message before each conversation of one user message
    bool chat = false, stream = false, echo_prompt = false;
    generate::GenerateOptions generation;
    std::string device = "cpu";
    int threads = 0;
};

// Everything one prompt needs besides the model.
struct Prompting {
    const tokenizer::Tokenizer* tokenizer = nullptr;
    std::optional<chat::ChatSetup> chat;  // with --chat
    std::string system;
    int64_t vocab = 0;
};

// One prompt: its tokens, and its text where it had one (a {"text"} line, or the rendered chat template).
struct Prompt {
    std::vector<int64_t> ids;
    std::optional<std::string> text;
};

// The ids of the end of a text: generation_config.json's eos_token_id, else config.json's, plus the chat
// template's eos_token (Qwen's <|im_end|>, which config.json does not list).
std::vector<int64_t> eos_ids(const std::string& model_dir, const model::LlamaConfig& config,
                             const tokenizer::Tokenizer& tokenizer,
                             const std::optional<chat::ChatSetup>& chat) {
    std::set<int64_t> ids(config.eos_token_ids.begin(), config.eos_token_ids.end());
    const std::string generation_config = model_dir + "/generation_config.json";
    if (std::filesystem::exists(generation_config)) {
        Result<nlohmann::json> j = read_json_file(generation_config);
        if (j.ok() && j->is_object() && j->contains("eos_token_id")) {
            const nlohmann::json& e = (*j)["eos_token_id"];
            ids.clear();
            for (const nlohmann::json& id : e.is_array() ? e : nlohmann::json::array({e})) {
                if (id.is_number_integer()) ids.insert(id.get<int64_t>());
            }
        }
    }
    if (chat && !chat->eos_token.empty()) {
        if (std::optional<int32_t> id = tokenizer.token_to_id(chat->eos_token)) ids.insert(*id);
    }
    return {ids.begin(), ids.end()};
}

Prompt prompt_of(const std::vector<int32_t>& ids, std::string text) {
    return {std::vector<int64_t>(ids.begin(), ids.end()), std::move(text)};
}

Result<Prompt> render_and_encode(const Prompting& p, const nlohmann::json& messages) {
    Result<std::string> text = chat::render_conversation(*p.chat, messages);
    if (!text.ok()) return text.status();
    // The template writes the special tokens itself (apply_chat_template encodes without adding any).
    Result<std::vector<int32_t>> ids = p.tokenizer->encode_checked(*text, /*add_special_tokens=*/false);
    if (!ids.ok()) return ids.status();
    return prompt_of(*ids, std::move(*text));
}

Result<Prompt> prompt_of_text(const Prompting& p, const std::string& text) {
    if (p.chat) {
        nlohmann::json messages = nlohmann::json::array();
        if (!p.system.empty()) messages.push_back({{"role", "system"}, {"content", p.system}});
        messages.push_back({{"role", "user"}, {"content", text}});
        return render_and_encode(p, messages);
    }
    Result<std::vector<int32_t>> ids = p.tokenizer->encode_checked(text, /*add_special_tokens=*/true);
    if (!ids.ok()) return ids.status();
    return prompt_of(*ids, text);
}

// One input line's prompt; errors start with `where` (FILE:LINE: ).
Result<Prompt> prompt_of_line(const Prompting& p, const std::string& line, const std::string& where) {
    Result<nlohmann::json> doc = parse_json_text(line, where.substr(0, where.size() - 2));
    if (!doc.ok()) return doc.status();
    if (!doc->is_object())
        return Status::Error(where + "expected {\"text\": ...}, {\"ids\": [...]} or {\"messages\": [...]}");
    if (doc->contains("ids")) {
        Result<std::vector<int64_t>> ids = read_ids_line(line, where, p.vocab, 1);
        if (!ids.ok()) return ids.status();
        return Prompt{std::move(*ids), std::nullopt};
    }
    if (doc->contains("messages")) {
        if (!p.chat) return Status::Error(where + "\"messages\" needs --chat (the model's chat template)");
        Result<Prompt> prompt = render_and_encode(p, (*doc)["messages"]);
        if (!prompt.ok()) return Status::Error(where + prompt.error());
        return prompt;
    }
    if (doc->contains("text") && (*doc)["text"].is_string()) {
        Result<Prompt> prompt = prompt_of_text(p, (*doc)["text"].get<std::string>());
        if (!prompt.ok()) return Status::Error(where + prompt.error());
        return prompt;
    }
    return Status::Error(where + "expected {\"text\": \"...\"}, {\"ids\": [...]} or {\"messages\": [...]}");
}

nlohmann::json result_line(const generate::Generation& g, const Prompt* echo) {
    const auto decoded = static_cast<double>(g.ids.size() > 1 ? g.ids.size() - 1 : 0);
    nlohmann::json line = {{"ids", g.ids},
                           {"text", g.text},
                           {"finish_reason", g.finish_reason},
                           {"prompt_tokens", g.prompt_tokens},
                           {"new_tokens", g.ids.size()},
                           {"tokens_per_s", g.decode_seconds > 0 ? decoded / g.decode_seconds : 0.0}};
    if (echo) {
        line["prompt_ids"] = echo->ids;
        if (echo->text) line["prompt"] = *echo->text;
    }
    return line;
}

int run_generate(const GenerateCliOptions& o, std::istream& in, std::ostream& out, std::ostream& err) {
    set_command_threads(o.threads);
    Result<tokenizer::Tokenizer> tok = load_command_tokenizer(o.model_dir, o.adapter_dir, o.tokenizer_path);
    if (!tok.ok()) {
        err << tok.error() << "\n";
        return 1;
    }
    Prompting prompting;
    prompting.tokenizer = &*tok;
    prompting.system = o.system;
    if (o.chat) {
        Result<chat::ChatSetup> setup = chat::read_chat_setup(model_chat_folder(o.model_dir, o.adapter_dir));
        if (!setup.ok()) {
            err << setup.error() << "\n";
            return setup.code() == StatusCode::kNotFound ? chat::kExitNoChatTemplate : 1;
        }
        prompting.chat = std::move(*setup);
    }
    Result<CommandModel> loaded = load_for_command(o.model_dir, o.adapter_dir, o.device);
    if (!loaded.ok()) {
        err << loaded.error() << "\n";
        return 1;
    }
    model::LlamaForCausalLM* llama = &loaded->llama;
    (*llama)->eval();
    prompting.vocab = (*llama)->config.vocab_size;
    generate::GenerateOptions options = o.generation;
    options.eos_ids = eos_ids(o.model_dir, (*llama)->config, *tok, prompting.chat);

    auto run_one = [&](const Result<Prompt>& prompt) {
        if (!prompt.ok()) {
            err << prompt.error() << "\n";
            out << nlohmann::json{{"error", prompt.error()}}.dump() << std::endl;
            return false;
        }
        generate::TextSink sink;
        if (o.stream)
            sink = [&out](const std::string& delta) {
                out << nlohmann::json{{"delta", delta}}.dump() << std::endl;
            };
        Result<generate::Generation> g = generate::generate(*llama, *tok, prompt->ids, options, sink);
        if (!g.ok()) {
            err << g.error() << "\n";
            out << nlohmann::json{{"error", g.error()}}.dump() << std::endl;
            return false;
        }
        // Flushed: a caller on a pipe reads it now.
        out << result_line(*g, o.echo_prompt ? &*prompt : nullptr).dump() << std::endl;
        return true;
    };

    if (o.prompts_path.empty()) {
        Result<Prompt> prompt = prompt_of_text(prompting, o.prompt);
        if (!prompt.ok()) prompt = Status::Error("--prompt: " + prompt.error());
        return run_one(prompt) ? 0 : 1;
    }
    std::ifstream file;
    std::istream* source = &in;
    if (o.prompts_path != "-") {
        file.open(o.prompts_path);
        if (!file) {
            err << o.prompts_path << ": cannot open file\n";
            return 1;
        }
        source = &file;
    }
    const std::string name = o.prompts_path == "-" ? "stdin" : o.prompts_path;
    bool all_ok = true;
    std::string line;
    for (size_t number = 1; std::getline(*source, line); ++number) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        all_ok =
            run_one(prompt_of_line(prompting, line, name + ":" + std::to_string(number) + ": ")) && all_ok;
    }
    return all_ok ? 0 : 1;
}

}  // namespace

void add_generate_command(CLI::App& app, int* exit_code, std::istream& in, std::ostream& out,
                          std::ostream& err) {
    auto o = std::make_shared<GenerateCliOptions>();
    CLI::App* cmd =
        app.add_subcommand("generate", "Generate text from a model (greedy or sampled), with a KV cache");
    cmd->add_option("--model", o->model_dir, "HF model folder")->required()->check(CLI::ExistingDirectory);
    cmd->add_option("--adapter", o->adapter_dir, "PEFT LoRA adapter folder")->check(CLI::ExistingDirectory);
    cmd->add_option("--tokenizer", o->tokenizer_path, "tokenizer.json (default: the model folder's)");
    auto* prompt = cmd->add_option("--prompt", o->prompt, "One prompt's text");
    auto* prompts = cmd->add_option("--prompts", o->prompts_path,
                                    "JSONL of {\"text\"}, {\"ids\"} or {\"messages\"} lines; - reads stdin");
    prompt->excludes(prompts);
    cmd->add_option("--max-new-tokens", o->generation.max_new_tokens, "Tokens to generate at most")
        ->capture_default_str()
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
    cmd->add_option("--temperature", o->generation.sampling.temperature, "0: greedy; above 0: sampling")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 100.0));
    cmd->add_option("--top-p", o->generation.sampling.top_p, "Sampling: nucleus probability")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1.0));
    cmd->add_option("--top-k", o->generation.sampling.top_k, "Sampling: the k most likely tokens (0: all)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--seed", o->generation.sampling.seed, "Sampling: the random seed")
        ->capture_default_str();
    cmd->add_option("--stop", o->generation.stop_strings,
                    "A stop string (repeatable); the text ends before it");
    cmd->add_flag("--chat", o->chat, "Render prompts with the model's chat template (tokenizer_config.json)");
    cmd->add_option("--system", o->system, "With --chat: a system message before each {\"text\"} prompt");
    cmd->add_flag("--stream", o->stream, "Write {\"delta\": ...} lines as the text is generated");
    cmd->add_flag("--echo-prompt", o->echo_prompt,
                  "Add the prompt (\"prompt\": its text as rendered, \"prompt_ids\") to each result line");
    cmd->add_option("--device", o->device, "cpu | cuda (GPU 0)")
        ->capture_default_str()
        ->check(CLI::IsMember({"cpu", "cuda"}));
    cmd->add_option("--threads", o->threads, "Torch threads (0 = all cores)");
    cmd->callback([o, exit_code, &in, &out, &err] {
        if (o->prompt.empty() && o->prompts_path.empty()) {
            err << "generate: give --prompt TEXT or --prompts FILE.jsonl\n";
            *exit_code = 1;
            return;
        }
        *exit_code = run_generate(*o, in, out, err);
    });
}

}  // namespace slipway::engine
