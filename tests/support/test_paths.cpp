// The tail-joining half of test_paths.h; the folders themselves come from the generated
// test_paths_values.cpp.
#include "test_paths.h"

#include <deque>
#include <mutex>
#include <string>

namespace test_paths {
namespace detail {
// Defined in the generated source, one per build folder.
extern const char* const kSourceDir;
extern const char* const kBinaryDir;
extern const char* const kEngineBin;
extern const char* const kSlipwayBin;
}  // namespace detail

namespace {
// Keeps every joined path alive for the process, so callers may hold the pointer as they held a literal.
const char* joined(const std::string& head, const char* tail) {
    static std::mutex mutex;
    static std::deque<std::string> kept;
    const std::lock_guard<std::mutex> lock(mutex);
    return kept.emplace_back(head + tail).c_str();
}
}  // namespace

const char* source_dir(const char* tail) {
    return joined(detail::kSourceDir, tail);
}
const char* test_data_dir(const char* tail) {
    return joined(std::string(detail::kSourceDir) + "/tests/data", tail);
}
const char* binary_dir(const char* tail) {
    return joined(detail::kBinaryDir, tail);
}
const char* reference_dir(const char* tail) {
    return joined(std::string(detail::kBinaryDir) + "/reference", tail);
}
const char* trained_dir(const char* tail) {
    return reference_dir((std::string("/trained") + tail).c_str());
}
const char* engine_bin() {
    return detail::kEngineBin;
}
const char* slipway_bin() {
    return detail::kSlipwayBin;
}

}  // namespace test_paths
