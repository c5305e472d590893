// Fuzz harness: the run config as users share it (load, validate, the printout's round trip) and the
// seed-style flags of `config from-args` / `train --flag` applied on top of it. Input: the run.json bytes,
// optionally followed by "\n----\n" and one flag per line.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/hf_flags.h"
#include "contract/run_config.h"
#include "fuzz_common.h"

using namespace slipway;

namespace {

std::vector<std::string> lines_of(std::string_view text) {
    std::vector<std::string> lines;
    size_t start = 0;
    while (start <= text.size() && lines.size() < 64) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        lines.emplace_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::vector<std::string_view> parts = fuzz::split_parts(fuzz::as_text(data, size), 2);
    const std::string path = fuzz::write_scratch("run.json", parts[0]);

    Result<RunConfig> loaded = load_run_config(path);
    if (!loaded.ok()) {
        FUZZ_CHECK(fuzz::names(loaded.error(), path), loaded.error());
    } else {
        // What `config print` writes must read back to the same config (nothing lost or changed).
        const std::string printed = to_json(*loaded).dump();
        const ParsedRunConfig again = parse_run_config(nlohmann::json::parse(printed));
        FUZZ_CHECK(again.problems.empty(), format_problems(again.problems));
        FUZZ_CHECK(to_json(again.config).dump() == printed, printed);
    }

    RunConfig base;
    if (Result<nlohmann::json> doc = read_run_document(path); doc.ok()) {
        ParsedRunConfig parsed = parse_run_config(*doc);
        (void)validate(parsed.config, validation_context_for(parsed.config));
        if (parsed.problems.empty()) base = parsed.config;
    }
    if (parts.size() > 1) {
        Result<FlagReport> report = apply_hf_flags(base, lines_of(parts[1]));
        (void)validate(base);
        (void)to_json(base).dump();  // what `config from-args` prints
        (void)report;
    }
    return 0;
}
