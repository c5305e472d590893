// The tokenize command: reads JSONL in batches, encodes (or decodes) them on N threads, and writes the
// results in input order. A bad line is an error naming its number, or with --skip-bad is counted. With a
// conversation format, each line is rendered by the model's chat template and written with its labels, the
// ids and labels `train` uses (data/conversation_encoder.h).
#include "cli/tokenize_command.h"

#include <algorithm>
#include <cstdint>
#include <istream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "chat/chat_setup.h"
#include "data/conversation.h"
#include "data/conversation_encoder.h"
#include "tokenizer/tokenizer.h"
#include "util/worker_pool.h"

namespace slipway::engine {
namespace {

struct TokenizeOptions {
    std::string tokenizer_path;
    std::string model_dir;        // tokenizer.json and the chat setup
    std::string format = "text";  // text | messages | sharegpt | alpaca | auto
    std::string train_on = "assistant";
    std::string chat_template;  // a template file instead of the model's
    std::string field = "text";
    bool add_special_tokens = false;
    bool decode = false;
    bool skip_special_tokens = false;
    bool skip_bad = false;
    unsigned threads = 0;
};

struct LineResult {
    std::string output;  // the JSON line to write
    std::string error;   // non-empty: the line is bad
};

// What a conversation line needs besides the tokenizer.
struct ConversationMode {
    data::DataFormat format = data::DataFormat::kText;
    data::TrainOn train_on = data::TrainOn::kAssistant;
    chat::ChatSetup setup;
};

std::string id_list(const std::vector<int32_t>& ids) {
    std::string out = "[";
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(ids[i]);
    }
    return out + "]";
}

LineResult conversation_line(const tokenizer::Tokenizer& tok, const ConversationMode& mode,
                             const nlohmann::json& doc) {
    LineResult r;
    Result<data::Conversation> conversation = data::parse_conversation(doc, mode.format);
    if (!conversation.ok()) {
        r.error = conversation.error();
        return r;
    }
    Result<data::EncodedConversation> encoded =
        data::encode_conversation(*conversation, mode.setup, tok, mode.train_on);
    if (!encoded.ok()) {
        r.error = encoded.error();
        return r;
    }
    r.output = "{\"ids\": " + id_list(encoded->ids) + ", \"labels\": " + id_list(encoded->labels) + "}";
    return r;
}

LineResult process_line(const tokenizer::Tokenizer& tok, const TokenizeOptions& o,
                        const ConversationMode& mode, const std::string& line) {
    LineResult r;
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
        r.error = std::string("invalid JSON: ") + e.what();
        return r;
    }
    if (!doc.is_object()) {
        r.error = "expected a JSON object";
        return r;
    }
    if (mode.format != data::DataFormat::kText) return conversation_line(tok, mode, doc);
    if (o.decode) {
        const auto it = doc.find("ids");
        if (it == doc.end() || !it->is_array()) {
            r.error = "missing \"ids\" array";
            return r;
        }
        std::vector<int32_t> ids;
        for (const auto& v : *it) {
            if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX) {
                r.error = "\"ids\" must hold token ids (integers from 0 to 2^31-1), got " + v.dump();
                return r;
            }
            ids.push_back(static_cast<int32_t>(v.get<int64_t>()));
        }
        Result<std::string> text = tok.decode(ids, o.skip_special_tokens);
        if (!text.ok()) {
            r.error = text.error();
            return r;
        }
        r.output =
            nlohmann::json{{"text", *text}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return r;
    }
    const auto it = doc.find(o.field);
    if (it == doc.end()) {
        r.error = "missing field \"" + o.field + "\"";
        return r;
    }
    if (!it->is_string()) {
        r.error = "field \"" + o.field + "\" is not a string";
        return r;
    }
    Result<std::vector<int32_t>> encoded =
        tok.encode_checked(it->get_ref<const std::string&>(), o.add_special_tokens);
    if (!encoded.ok()) {
        r.error = encoded.error();
        return r;
    }
    r.output = "{\"ids\": " + id_list(*encoded) + "}";
    return r;
}

// The format (auto: told by the first line's keys), train_on and chat setup of a conversation run.
Status set_up_conversations(const TokenizeOptions& o, const std::string& first_line, ConversationMode& mode,
                            std::ostream& err) {
    if (o.format == "auto") {
        nlohmann::json doc;
        try {
            doc = nlohmann::json::parse(first_line);
        } catch (const nlohmann::json::exception& e) {
            return Status::Error(std::string("stdin:1: invalid JSON: ") + e.what());
        }
        std::string found;
        Result<data::DataFormat> format = data::detect_data_format(doc, o.field, &found);
        if (!format.ok()) return Status::Error("stdin:1: " + format.error());
        mode.format = *format;
        err << "format: " << data::data_format_name(*format) << " (the first line has " << found << ")\n";
    } else {
        Result<data::DataFormat> format = data::data_format_named(o.format);
        if (!format.ok()) return Status::Error("--format: " + format.error());
        mode.format = *format;
    }
    if (mode.format == data::DataFormat::kText) return Status::Ok();
    Result<data::TrainOn> train_on = data::train_on_named(o.train_on);
    if (!train_on.ok()) return Status::Error("--train-on: " + train_on.error());
    mode.train_on = *train_on;
    if (o.model_dir.empty())
        return Status::Error("--format " + std::string(data::data_format_name(mode.format)) +
                             " renders conversations with the model's chat template and special tokens: give "
                             "--model DIR");
    Result<chat::ChatSetup> setup = chat::read_chat_setup(o.model_dir, o.chat_template);
    if (!setup.ok()) return setup.status();
    mode.setup = std::move(*setup);
    return Status::Ok();
}

int run_tokenize(const TokenizeOptions& o, std::istream& in, std::ostream& out, std::ostream& err) {
    if (o.tokenizer_path.empty() && o.model_dir.empty()) {
        err << "tokenize: give --tokenizer FILE or --model DIR (its tokenizer.json)\n";
        return 1;
    }
    Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_file(
        o.tokenizer_path.empty() ? o.model_dir + "/tokenizer.json" : o.tokenizer_path);
    if (!tok.ok()) {
        err << tok.error() << "\n";
        return 1;
    }
    ConversationMode mode;
    bool set_up = o.format == "text";
    WorkerPool pool(o.threads);  // persistent workers keep their word caches warm across batches
    constexpr size_t kBatchLines = 4096;
    std::vector<std::string> lines;
    std::vector<LineResult> results;
    size_t line_number = 0, bad = 0;
    std::string line;
    bool more = true;
    while (more) {
        lines.clear();
        while (lines.size() < kBatchLines && (more = static_cast<bool>(std::getline(in, line)))) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            lines.push_back(line);
        }
        if (!set_up && !lines.empty()) {
            if (Status s = set_up_conversations(o, lines.front(), mode, err); !s.ok()) {
                err << s.message() << "\n";
                return 1;
            }
            set_up = true;
        }
        results.assign(lines.size(), LineResult{});
        pool.run([&](unsigned worker) {
            for (size_t i = worker; i < lines.size(); i += pool.size())
                results[i] = process_line(*tok, o, mode, lines[i]);
        });
        for (const LineResult& r : results) {
            ++line_number;
            if (r.error.empty()) {
                out << r.output << '\n';
                continue;
            }
            if (!o.skip_bad) {
                err << "stdin:" << line_number << ": " << r.error << "\n";
                return 1;
            }
            ++bad;
            if (bad <= 10) err << "stdin:" << line_number << ": skipped: " << r.error << "\n";
        }
    }
    if (bad > 0) err << "skipped " << bad << " bad line(s) of " << line_number << "\n";
    out.flush();
    return 0;
}

}  // namespace

void add_tokenize_command(CLI::App& app, int* exit_code, std::istream& in, std::ostream& out,
                          std::ostream& err) {
    auto options = std::make_shared<TokenizeOptions>();
    CLI::App* cmd = app.add_subcommand(
        "tokenize",
        "Encode JSONL on stdin with a tokenizer.json ({\"ids\": [...]} per line), or render conversations "
        "with a model's chat template ({\"ids\": [...], \"labels\": [...]}, -100 where not trained)");
    cmd->add_option("--tokenizer", options->tokenizer_path, "tokenizer.json")->check(CLI::ExistingFile);
    cmd->add_option("--model", options->model_dir,
                    "HF model folder: tokenizer.json, and tokenizer_config.json or chat_template.jinja")
        ->check(CLI::ExistingDirectory);
    cmd->add_option("--format", options->format,
                    "text, messages, sharegpt, alpaca or auto (by the first line)")
        ->capture_default_str();
    cmd->add_option("--train-on", options->train_on, "Conversations: assistant, all or last_assistant")
        ->capture_default_str();
    cmd->add_option("--chat-template", options->chat_template,
                    "A Jinja chat template file instead of the model's")
        ->check(CLI::ExistingFile);
    cmd->add_option("--field", options->field, "JSON field holding the text")->capture_default_str();
    cmd->add_flag("--add-special-tokens", options->add_special_tokens,
                  "Add the post-processor's tokens (e.g. BOS)");
    cmd->add_flag("--decode", options->decode, "Read {\"ids\": [...]} lines and write {\"text\": ...}");
    cmd->add_flag("--skip-special-tokens", options->skip_special_tokens,
                  "With --decode: drop special tokens");
    cmd->add_flag("--skip-bad", options->skip_bad, "Skip bad lines (counted on stderr) instead of failing");
    cmd->add_option("--threads", options->threads, "Worker threads (0 = all cores)");
    cmd->callback(
        [options, exit_code, &in, &out, &err] { *exit_code = run_tokenize(*options, in, out, err); });
}

}  // namespace slipway::engine
