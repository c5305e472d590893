// Fault injection (fault_injection.h).
#include "train/fault_injection.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <string>
#include <thread>

namespace slipway::train {

void hang_here_if_injected(int64_t rank, int64_t step) {
    const char* spec = std::getenv("SLIPWAY_FAULT_HANG_AT");
    if (!spec) return;
    long long want_rank = -1, want_step = -1;
    if (std::sscanf(spec, "%lld:%lld", &want_rank, &want_step) != 2) return;
    if (want_rank != rank || want_step != step) return;
    std::fprintf(stderr, "rank %lld: SLIPWAY_FAULT_HANG_AT: the training thread hangs at step %lld\n",
                 static_cast<long long>(rank), static_cast<long long>(step));
    while (true)
        std::this_thread::sleep_for(std::chrono::hours(1));
}

void throw_here_if_injected(int64_t rank, int64_t step, const std::function<void()>& shape_error) {
    const char* spec = std::getenv("SLIPWAY_FAULT_THROW_AT");
    if (!spec) return;
    long long want_rank = -1, want_step = -1;
    char kind[16] = {};
    if (std::sscanf(spec, "%lld:%lld:%15s", &want_rank, &want_step, kind) != 3) return;
    if (want_rank != rank || want_step != step) return;
    std::fprintf(stderr, "rank %lld: SLIPWAY_FAULT_THROW_AT: failing (%s) at step %lld\n",
                 static_cast<long long>(rank), kind, static_cast<long long>(step));
    const std::string k = kind;
    if (k == "shape") shape_error();
    if (k == "oom") throw std::bad_alloc();
    if (k == "file") (void)std::filesystem::file_size("/nonexistent/slipway-injected-fault");  // throws
}

}  // namespace slipway::train
