// Where a training step's time goes, from a Chrome trace of the profiled steps: GPU kernels and copies
// (Kineto's trace on a GPU) or the CPU's ATen operators by self time (on a CPU), sorted into the categories
// an optimiser acts on. No torch here: the trace is JSON, and its reading is tested on written traces.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace slipway::train {

inline constexpr const char* kProfileCategories[] = {
    "bf16 GEMM",        "fp32 GEMM", "GEMM (other dtype)", "attention", "elementwise/reduction",
    "copies and casts", "memcpy",    "host gaps"};

struct ProfileRow {
    std::string category;
    double ms_per_step = 0;
    double share = 0;  // of the step's wall time
};

struct ProfileSummary {
    std::string source;  // "GPU kernels" or "CPU operators (self time)"
    int64_t steps = 0;
    double wall_ms_per_step = 0;
    std::vector<ProfileRow> rows;  // every category of kProfileCategories, in that order
    int64_t events = 0;            // kernels or operators counted
    struct Top {
        std::string name, category;
        double ms_per_step = 0;
        int64_t calls = 0;
    };
    std::vector<Top> top;  // the kernels (or operators, by self time) that took the most, at most 12
};

// The category of a GPU kernel or a CPU operator by its name and, for products, the dtypes of its inputs
// ("c10::BFloat16", "float", ...; empty when unknown).
std::string profile_category(const std::string& name, const std::vector<std::string>& input_types);

// trace: {"traceEvents": [...]} as Kineto writes it; steps and wall_ms: how many optimizer steps it spans
// and their wall time. Device events ("kernel", "gpu_memcpy", "gpu_memset") win when present; host gaps
// are the wall time the device (or, on a CPU, any operator) was idle.
ProfileSummary summarize_trace(const nlohmann::json& trace, int64_t steps, double wall_ms);

// A fixed-width table: category, ms per step, share.
std::string profile_table(const ProfileSummary& summary);

}  // namespace slipway::train
