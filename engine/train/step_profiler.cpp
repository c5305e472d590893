// StepProfiler (step_profiler.h). Kineto's C++ entry points (prepareProfiler, enableProfiler,
// disableProfiler) and ProfilerConfig have kept these signatures from 1.13 to 2.14.
#include "train/step_profiler.h"

#include <filesystem>
#include <set>

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/torch.h>

#include "contract/file_system.h"
#include "train/profile_summary.h"

namespace slipway::train {
namespace {

namespace kineto = torch::autograd::profiler;
namespace impl = torch::profiler::impl;

double since_us(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) {
    return std::chrono::duration<double, std::micro>(to - from).count();
}

// KinetoEvent's times: microseconds up to ~2.0, nanoseconds since. Detected, not guessed from the version.
template <typename Event>
auto start_us(const Event& e, int) -> decltype(static_cast<double>(e.startNs())) {
    return static_cast<double>(e.startNs()) / 1000.0;
}
template <typename Event>
double start_us(const Event& e, long) {
    return static_cast<double>(e.startUs());
}
template <typename Event>
auto duration_us(const Event& e, int) -> decltype(static_cast<double>(e.durationNs())) {
    return static_cast<double>(e.durationNs()) / 1000.0;
}
template <typename Event>
double duration_us(const Event& e, long) {
    return static_cast<double>(e.durationUs());
}

// The profiler's own operator records as a Chrome trace, where this LibTorch has no Kineto to write one
// (Debian's builds): CPU operators with their input dtypes, which is what the summary reads on a CPU.
nlohmann::json trace_of_events(const kineto::ProfilerResult& result) {
    nlohmann::json events = nlohmann::json::array();
    for (const auto& e : result.events()) {
        if (e.deviceType() != c10::DeviceType::CPU) continue;
        nlohmann::json types = nlohmann::json::array();
        for (const std::string& t : e.dtypes())
            types.push_back(t);
        events.push_back({{"ph", "X"},
                          {"cat", "cpu_op"},
                          {"name", e.name()},
                          {"pid", "slipway"},
                          {"tid", e.startThreadId()},
                          {"ts", start_us(e, 0)},
                          {"dur", duration_us(e, 0)},
                          {"args", {{"Input type", types}}}});
    }
    return {{"traceEvents", events}};
}

}  // namespace

StepProfiler::StepProfiler(const std::string& range, std::string output_dir, torch::Device device,
                           std::ostream& progress)
    : dir_(std::move(output_dir) + "/profile"), device_(device), progress_(progress) {
    const size_t colon = range.find(':');
    if (range.empty() || colon == std::string::npos) return;
    first_ = std::stoll(range.substr(0, colon));
    last_ = std::stoll(range.substr(colon + 1));
}

StepProfiler::~StepProfiler() {
    if (active_ && kineto_) (void)kineto::disableProfiler();  // a run that ended inside the range
}

void StepProfiler::sync_device() {
    if (device_.is_cuda()) torch::cuda::synchronize(device_.index());
}

void StepProfiler::step_begins(int64_t step) {
    if (step != first_) {
        if (active_) step_started_ = std::chrono::steady_clock::now();
        return;
    }
    sync_device();  // the steps before leave nothing running into the window
    const impl::ProfilerConfig config(impl::ProfilerState::KINETO, /*report_input_shapes=*/true);
    std::set<impl::ActivityType> activities{impl::ActivityType::CPU};
    if (device_.is_cuda()) activities.insert(impl::ActivityType::CUDA);
    try {
        kineto::prepareProfiler(config, activities);
        kineto::enableProfiler(config, activities);
        kineto_ = true;
    } catch (const std::exception& e) {
        kineto_error_ = e.what();
    }
    active_ = true;
    started_ = step_started_ = std::chrono::steady_clock::now();
}

Status StepProfiler::step_ends(int64_t step) {
    if (!active_) return Status::Ok();
    sync_device();
    const auto now = std::chrono::steady_clock::now();
    ranges_.push_back(
        {"step " + std::to_string(step), since_us(started_, step_started_), since_us(step_started_, now)});
    if (step < last_) return Status::Ok();
    return finish();
}

Status StepProfiler::finish() {
    const double wall_ms = since_us(started_, std::chrono::steady_clock::now()) / 1000.0;
    active_ = false;
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) return Status::Error(dir_ + ": " + ec.message());
    const std::string path = dir_ + "/trace.json";
    nlohmann::json trace = {{"traceEvents", nlohmann::json::array()}};
    double origin_us = 0;  // where our ranges start on the trace's clock
    if (kineto_) {
        kineto_ = false;
        std::unique_ptr<kineto::ProfilerResult> result = kineto::disableProfiler();
        const std::string raw = dir_ + "/kineto.json";
        try {
            result->save(raw);  // Kineto's trace: GPU kernels and copies too
            Result<std::string> text = read_file(raw);
            if (text.ok()) {
                nlohmann::json parsed = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
                if (parsed.is_object() && parsed.contains("traceEvents")) trace = std::move(parsed);
            }
        } catch (const std::exception& e) {
            const std::string why = e.what();
            progress_ << "profile: no Kineto in this LibTorch (" << why.substr(0, why.find('\n'))
                      << "): CPU operators only\n";
            trace = trace_of_events(*result);
        }
        std::filesystem::remove(raw, ec);
        // Our ranges on Kineto's clock: its events start at the first profiled step.
        double earliest = -1;
        for (const auto& e : trace["traceEvents"])
            if (e.is_object() && e.contains("ts") && e["ts"].is_number() && e.value("cat", "") == "cpu_op")
                earliest = earliest < 0 ? e["ts"].get<double>() : std::min(earliest, e["ts"].get<double>());
        origin_us = std::max(0.0, earliest);
    }
    const int64_t steps = last_ - first_ + 1;
    const ProfileSummary summary = summarize_trace(trace, steps, wall_ms);
    for (const Range& r : ranges_) {
        trace["traceEvents"].push_back({{"name", r.name},
                                        {"cat", "slipway"},
                                        {"ph", "X"},
                                        {"pid", "slipway"},
                                        {"tid", "steps"},
                                        {"ts", origin_us + r.begin_us},
                                        {"dur", r.dur_us}});
    }
    if (Status s = write_file_atomically(path, trace.dump()); !s.ok()) return s;
    if (!kineto_error_.empty())
        progress_ << "profile: Kineto did not start (" << kineto_error_
                  << "): the trace holds the step ranges\n";
    progress_ << profile_table(summary) << "profile: trace " << path << " (Perfetto: ui.perfetto.dev)\n";
    return Status::Ok();
}

StepProfiler::Phase::Phase(StepProfiler* profiler, const char* name)
    : profiler_(profiler), name_(name), start_(std::chrono::steady_clock::now()) {}

StepProfiler::Phase::~Phase() {
    if (profiler_ == nullptr) return;
    const auto now = std::chrono::steady_clock::now();
    profiler_->ranges_.push_back({name_, since_us(profiler_->started_, start_), since_us(start_, now)});
}

}  // namespace slipway::train
