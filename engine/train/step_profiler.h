// StepProfiler: `/training/profile_steps` A:B. Profiles optimizer steps A..B of a training run with torch's
// Kineto profiler (GPU kernels and copies through CUPTI where the build has it, ATen operators on the CPU),
// writes <output_dir>/profile/trace.json (a Chrome trace that Perfetto opens, with the steps and their
// phases added as ranges) and prints where the time went (profile_summary.h). Where Kineto cannot start,
// the trace holds the phase ranges alone and the table says so.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <torch/types.h>

#include "contract/status.h"

namespace slipway::train {

class StepProfiler {
public:
    // range: "A:B" (validated), or empty for a profiler that does nothing.
    StepProfiler(const std::string& range, std::string output_dir, torch::Device device,
                 std::ostream& progress);
    ~StepProfiler();
    StepProfiler(const StepProfiler&) = delete;
    StepProfiler& operator=(const StepProfiler&) = delete;

    // Around each optimizer step (1-based numbers). The last profiled step writes the trace and the table.
    void step_begins(int64_t step);
    [[nodiscard]] Status step_ends(int64_t step);
    // A named phase inside a profiled step ("forward", "backward", "optimizer"), for the trace.
    class Phase {
    public:
        Phase(StepProfiler* profiler, const char* name);
        ~Phase();
        Phase(const Phase&) = delete;
        Phase& operator=(const Phase&) = delete;

    private:
        StepProfiler* profiler_;
        const char* name_;
        std::chrono::steady_clock::time_point start_;
    };
    Phase phase(const char* name) { return Phase(active_ ? this : nullptr, name); }
    bool enabled() const { return first_ > 0; }

private:
    struct Range {
        std::string name;
        double begin_us, dur_us;
    };
    void sync_device();
    [[nodiscard]] Status finish();

    int64_t first_ = 0, last_ = 0;
    std::string dir_;
    torch::Device device_;
    std::ostream& progress_;
    bool active_ = false, kineto_ = false;
    std::string kineto_error_;
    std::chrono::steady_clock::time_point started_, step_started_;
    std::vector<Range> ranges_;
};

}  // namespace slipway::train
