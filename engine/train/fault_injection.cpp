// Fault injection (fault_injection.h).
#include "train/fault_injection.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
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

}  // namespace slipway::train
