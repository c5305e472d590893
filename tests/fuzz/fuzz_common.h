// Helpers shared by the libFuzzer harnesses (tests/fuzz/*_fuzz.cpp): a scratch folder per process for
// parsers that read files, and FUZZ_CHECK, an invariant whose failure is a finding like a crash.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

// Aborts with the condition and a message: libFuzzer saves the input, the replay test fails.
#define FUZZ_CHECK(cond, message)                                                                     \
    do {                                                                                              \
        if (!(cond)) {                                                                                \
            std::fprintf(stderr, "fuzz check failed: %s: %s\n", #cond, std::string(message).c_str()); \
            std::abort();                                                                             \
        }                                                                                             \
    } while (0)

namespace slipway::fuzz {

// A folder of this process's own under the temp folder, created on first use, emptied by the caller.
inline const std::string& scratch_dir() {
    static const std::string dir = [] {
        const char* tmp = std::getenv("TMPDIR");
        std::string d = std::string(tmp && *tmp ? tmp : "/tmp") + "/slipway-fuzz-" + std::to_string(getpid());
        std::filesystem::create_directories(d);
        return d;
    }();
    return dir;
}

inline std::string write_scratch(const std::string& name, std::string_view bytes) {
    const std::string path = scratch_dir() + "/" + name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// Splits an input into parts at a line holding only "----" (multi-file inputs: a folder's files).
inline std::vector<std::string_view> split_parts(std::string_view text, size_t max_parts) {
    std::vector<std::string_view> parts;
    static constexpr std::string_view kSeparator = "\n----\n";
    while (parts.size() + 1 < max_parts) {
        const size_t at = text.find(kSeparator);
        if (at == std::string_view::npos) break;
        parts.push_back(text.substr(0, at));
        text.remove_prefix(at + kSeparator.size());
    }
    parts.push_back(text);
    return parts;
}

// The message of a failed parse must name what it read (the promise of issue 14).
inline bool names(const std::string& message, const std::string& what) {
    return message.find(what) != std::string::npos;
}

}  // namespace slipway::fuzz
