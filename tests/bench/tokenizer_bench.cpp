// Benchmark (not a test): encode throughput of our tokenizers against the HF tokenizers library in the
// same invocation, on the same corpus, one thread and all threads, printed as a table with ratios.
// The reference runs as `REFERENCE_DIR/python tests/reference/golden.py --bench` (REFERENCE_DIR set up by
// tests/reference/install.sh: the tokenizer files and a python with the HF tokenizers library).
//
// Usage: tokenizer_bench [--reference-dir build/reference] [--corpus FILE] [--repeat 3]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "test_paths.h"
#include "tokenizer/tokenizer.h"
#include "util/worker_pool.h"

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> read_texts(const std::string& path) {
    std::vector<std::string> texts;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line))
        texts.push_back(nlohmann::json::parse(line)["text"].get<std::string>());
    return texts;
}

// Best of `repeat` runs (after a warm-up run fills the word caches, as the reference's best-of does).
double encode_mb_per_s(const slipway::tokenizer::Tokenizer& tok, const std::vector<std::string>& texts,
                       unsigned threads, int repeat, size_t bytes) {
    slipway::WorkerPool pool(threads);
    auto run = [&] {
        pool.run([&](unsigned worker) {
            for (size_t i = worker; i < texts.size(); i += pool.size())
                tok.encode(texts[i]);
        });
    };
    run();
    double best = 1e30;
    for (int r = 0; r < repeat; ++r) {
        const auto start = Clock::now();
        run();
        best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
    }
    return static_cast<double>(bytes) / 1e6 / best;
}

nlohmann::json reference_bench(const std::string& python, const std::string& script,
                               const std::string& tokenizer, const std::string& corpus, int repeat) {
    const std::string command = "'" + python + "' '" + script + "' --bench --tokenizer '" + tokenizer +
                                "' --corpus '" + corpus + "' --repeat " + std::to_string(repeat);
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) return nullptr;
    std::string output;
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof(buffer), pipe))
        output.append(buffer, n);
    if (pclose(pipe) != 0) return nullptr;
    try {
        return nlohmann::json::parse(output.substr(
            output.rfind('{', output.find_last_of('}')) == std::string::npos ? 0 : output.find('{')));
    } catch (const nlohmann::json::exception&) {
        return nullptr;
    }
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Tokenizer encode throughput: Slipway vs the HF tokenizers library"};
    std::string reference_dir = std::string(test_paths::binary_dir("/reference"));
    std::string corpus = std::string(test_paths::source_dir("/tests/data/tokenizer/corpus.jsonl"));
    int repeat = 3;
    app.add_option("--reference-dir", reference_dir,
                   "Folder where tests/reference/install.sh installed the reference");
    app.add_option("--corpus", corpus, "JSONL corpus (field text)");
    app.add_option("--repeat", repeat, "Timed runs per measurement (best is kept)");
    CLI11_PARSE(app, argc, argv);

    const std::vector<std::string> texts = read_texts(corpus);
    size_t bytes = 0;
    for (const std::string& t : texts)
        bytes += t.size();
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const std::string script = std::string(test_paths::source_dir("/tests/reference/golden.py"));
    const std::string python = reference_dir + "/python";
    std::printf("corpus: %s (%zu lines, %.2f MB), %u cores, best of %d runs, MB/s of UTF-8 input\n\n",
                corpus.c_str(), texts.size(), bytes / 1e6, cores, repeat);
    std::printf("%-8s | %9s %9s %6s | %9s %9s %6s | %12s\n", "", "ours 1T", "HF 1T", "ratio", "ours all",
                "HF all", "ratio", "HF per-call");
    std::printf("%s\n", std::string(84, '-').c_str());
    int failures = 0;
    for (const std::string name : {"llama3", "qwen3", "llama2"}) {
        const std::string path = reference_dir + "/tokenizers/" + name + "/tokenizer.json";
        auto tok = slipway::tokenizer::Tokenizer::from_file(path);
        if (!tok.ok()) {
            std::fprintf(stderr, "%s (run tests/reference/install.sh %s first)\n", tok.error().c_str(),
                         reference_dir.c_str());
            return 1;
        }
        const double ours_1 = encode_mb_per_s(*tok, texts, 1, repeat, bytes);
        const double ours_n = encode_mb_per_s(*tok, texts, cores, repeat, bytes);
        const nlohmann::json hf = reference_bench(python, script, path, corpus, repeat);
        if (hf.is_null()) {
            std::fprintf(stderr, "%s: the reference benchmark failed\n", name.c_str());
            ++failures;
            continue;
        }
        const double hf_1 = hf.value("mb_per_s_batch_1thread", 0.0);
        const double hf_n = hf.value("mb_per_s_batch", 0.0);
        std::printf("%-8s | %9.2f %9.2f %5.2fx | %9.2f %9.2f %5.2fx | %12.2f\n", name.c_str(), ours_1, hf_1,
                    ours_1 / hf_1, ours_n, hf_n, ours_n / hf_n, hf.value("mb_per_s_single", 0.0));
    }
    std::printf(
        "\nratio = ours / HF (> 1: we are faster). HF 1T: encode_batch with RAYON_NUM_THREADS=1; HF "
        "per-call:\n"
        "encode() line by line through the Python binding.\n");
    return failures == 0 ? 0 : 1;
}
