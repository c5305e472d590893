// Helpers shared by the prepare tests: temporary folders, files, a deterministic synthetic corpus whose
// paragraphs are known, and a run config over it that uses the demo tokenizer (resources/demo).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "contract/run_config.h"
#include "test_paths.h"

namespace slipway::data::test {

inline std::string fresh_dir(const std::string& name) {
    const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) /
                                      ("slipway-prepare-" + name + "-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir.string();
}

inline void write_file(const std::string& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary);
    out << content;
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

inline std::string demo_tokenizer() {
    return std::string(test_paths::source_dir("/resources/demo/tokenizer.json"));
}

// A document as its paragraph pieces, each with the separator that follows it; the text is their
// concatenation, so the pieces are exactly what paragraph mode tokenizes one by one.
struct TestDoc {
    std::vector<std::string> pieces;
    std::string text() const {
        std::string t;
        for (const std::string& p : pieces)
            t += p;
        return t;
    }
};

// `count` documents of 1-4 paragraphs of 3-40 words, some lines broken inside a paragraph.
inline std::vector<TestDoc> make_docs(size_t count, uint64_t seed) {
    static const char* const kWords[] = {
        "the",      "cat",   "sat",    "on",    "a",    "mat",    "and", "then",  "ran", "away",
        "computer", "says",  "no",     "error", "file", "system", "кот", "сидел", "на",  "ковре",
        "ошибка",   "диска", "привет", "мир",   "42",   "1999",   "!",   "?",     "-",   "(ok)"};
    const char* const separators[] = {"\n\n", "\n \n", "\r\n\r\n", "\n\n\n"};
    uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
    auto next = [&state](uint64_t bound) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return (state >> 33) % bound;
    };
    std::vector<TestDoc> docs(count);
    for (TestDoc& doc : docs) {
        const uint64_t paragraphs = 1 + next(4);
        for (uint64_t p = 0; p < paragraphs; ++p) {
            std::string piece;
            const uint64_t words = 3 + next(38);
            for (uint64_t w = 0; w < words; ++w) {
                if (w > 0) piece += next(10) == 0 ? "\n" : " ";
                piece += kWords[next(sizeof(kWords) / sizeof(kWords[0]))];
            }
            if (p + 1 < paragraphs) piece += separators[next(4)];
            doc.pieces.push_back(piece);
        }
    }
    return docs;
}

inline std::string to_jsonl(const std::vector<TestDoc>& docs) {
    std::string out;
    for (size_t i = 0; i < docs.size(); ++i) {
        out += nlohmann::json{{"text", docs[i].text()}, {"id", i}}.dump() + "\n";
    }
    return out;
}

// Paragraph mode, block_size 32, 10 % held out, seed 42, cache in <dir>/cache, no model folder.
inline RunConfig make_config(const std::string& dir, const std::string& train_file) {
    RunConfig config;
    config.model.path = dir + "/model";
    config.tokenizer.path = demo_tokenizer();
    config.data.train_file = train_file;
    config.data.block_size = 32;
    config.data.split = "paragraph";
    config.data.validation_split_percentage = 10;
    config.data.cache_dir = dir + "/cache";
    config.training.output_dir = dir + "/out";
    config.training.seed = 42;
    return config;
}

}  // namespace slipway::data::test
