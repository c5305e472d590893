// The tokenize command: reads JSONL in batches, encodes (or decodes) them on N threads, and writes the
// results in input order. A bad line is an error naming its number, or with --skip-bad is counted.
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

#include "tokenizer/tokenizer.h"
#include "util/worker_pool.h"

namespace slipway::engine {
namespace {

struct TokenizeOptions {
    std::string tokenizer_path;
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

LineResult process_line(const tokenizer::Tokenizer& tok, const TokenizeOptions& o, const std::string& line) {
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
    const std::vector<int32_t>& ids = *encoded;
    std::string out = "{\"ids\": [";
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(ids[i]);
    }
    out += "]}";
    r.output = std::move(out);
    return r;
}

int run_tokenize(const TokenizeOptions& o, std::istream& in, std::ostream& out, std::ostream& err) {
    Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_file(o.tokenizer_path);
    if (!tok.ok()) {
        err << tok.error() << "\n";
        return 1;
    }
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
        results.assign(lines.size(), LineResult{});
        pool.run([&](unsigned worker) {
            for (size_t i = worker; i < lines.size(); i += pool.size())
                results[i] = process_line(*tok, o, lines[i]);
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
        "tokenize", "Encode JSONL on stdin with a tokenizer.json ({\"ids\": [...]} per line)");
    cmd->add_option("--tokenizer", options->tokenizer_path, "tokenizer.json")
        ->required()
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
