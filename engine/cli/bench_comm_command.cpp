// The bench-comm command (bench_comm_command.h).
#include "cli/bench_comm_command.h"

#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "dist/env.h"
#include "dist/process_group.h"
#ifdef SLIPWAY_WITH_NCCL
#include "dist/nccl_communicator.h"
#endif

namespace slipway::engine {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchCommOptions {
    std::string sizes = "1M,16M,256M";
    int iters = 20;
    int warmup = 3;
    std::string backend = "auto";
    int64_t timeout_s = 300;
    bool json = false;  // one JSON line on rank 0 instead of the table (for `slipway doctor`)
};

// A test hook: SLIPWAY_BENCH_COMM_FAULT makes this rank a faulty node, so `slipway doctor`'s handling of
// one can be tested on healthy machines. "slow=F": each timed allreduce takes F times as long (the rank
// sleeps after it, holding its peers back as a slow link would); "fail": exit 1 before the rendezvous;
// "hang": sleep before the rendezvous until killed. Slow lags rank 0 only (see run_bench_comm).
struct InjectedFault {
    double slow_factor = 1;
    bool fail = false;
    bool hang = false;
};

Result<InjectedFault> injected_fault() {
    InjectedFault fault;
    const char* value = std::getenv("SLIPWAY_BENCH_COMM_FAULT");
    if (!value || !*value) return fault;
    const std::string text = value;
    if (text == "fail") {
        fault.fail = true;
    } else if (text == "hang") {
        fault.hang = true;
    } else if (text.rfind("slow=", 0) == 0 && std::atof(text.c_str() + 5) >= 1) {
        fault.slow_factor = std::atof(text.c_str() + 5);
    } else {
        return Status::Error("SLIPWAY_BENCH_COMM_FAULT=\"" + text +
                             "\": expected slow=F (F >= 1), fail or hang");
    }
    return fault;
}

// "1M" -> 1048576 bytes; K, M, G are powers of 1024; a plain number is bytes.
Result<std::vector<size_t>> parse_sizes(const std::string& text) {
    std::vector<size_t> sizes;
    std::istringstream in(text);
    for (std::string item; std::getline(in, item, ',');) {
        size_t used = 0;
        double value = 0;
        try {
            value = std::stod(item, &used);
        } catch (const std::exception&) {
            return Status::Error("--sizes: \"" + item + "\" is not a size like 16M");
        }
        const std::string unit = item.substr(used);
        const double scale = unit.empty()  ? 1
                             : unit == "K" ? 1024.0
                             : unit == "M" ? 1048576.0
                             : unit == "G" ? 1073741824.0
                                           : 0;
        if (scale == 0 || value <= 0)
            return Status::Error("--sizes: \"" + item + "\" is not a size like 16M");
        sizes.push_back(static_cast<size_t>(value * scale) / sizeof(float) * sizeof(float));
    }
    if (sizes.empty()) return Status::Error("--sizes: no sizes given");
    return sizes;
}

struct Row {
    size_t bytes = 0;
    double seconds = 0;
    bool correct = false;
};

// Gloo (or c10d NCCL) through the process group: sum of (rank + 1) once for correctness, then timing.
Row measure_group(dist::DistContext& dist, size_t bytes, const BenchCommOptions& o, double slow_factor) {
    const int64_t n = static_cast<int64_t>(bytes / sizeof(float));
    std::vector<torch::Tensor> t{torch::full({n}, static_cast<float>(dist.rank() + 1))};  // (n)
    dist.group()->allreduce(t)->wait();
    const double world = static_cast<double>(dist.world_size());
    Row row;
    row.bytes = bytes;
    row.correct = t[0].eq(static_cast<float>(world * (world + 1) / 2)).all().item<bool>();
    for (int i = 0; i < o.warmup; ++i)
        dist.group()->allreduce(t)->wait();
    dist.barrier();
    const auto start = Clock::now();
    for (int i = 0; i < o.iters; ++i) {
        const auto one = Clock::now();
        dist.group()->allreduce(t)->wait();
        if (slow_factor > 1) std::this_thread::sleep_for((Clock::now() - one) * (slow_factor - 1));
    }
    row.seconds = std::chrono::duration<double>(Clock::now() - start).count() / o.iters;
    return row;
}

#ifdef SLIPWAY_WITH_NCCL
Result<Row> measure_nccl(dist::NcclCommunicator& comm, dist::DistContext& dist, size_t bytes,
                         const BenchCommOptions& o) {
    Result<dist::DeviceBuffer> buffer = dist::DeviceBuffer::allocate(bytes);
    if (!buffer.ok()) return buffer.status();
    const size_t n = bytes / sizeof(float);
    if (Status s = buffer->fill_f32(static_cast<float>(dist.rank() + 1)); !s.ok()) return s;
    if (Status s = comm.allreduce_sum_f32(buffer->data(), n); !s.ok()) return s;
    Row row;
    row.bytes = bytes;
    // Correctness: the fill is uniform, so the first and last elements stand for all.
    const double world = static_cast<double>(dist.world_size());
    const float expected = static_cast<float>(world * (world + 1) / 2);
    Result<float> first = buffer->read_f32(0), last = buffer->read_f32(n - 1);
    row.correct = first.ok() && last.ok() && *first == expected && *last == expected;
    for (int i = 0; i < o.warmup; ++i)
        if (Status s = comm.allreduce_sum_f32(buffer->data(), n); !s.ok()) return s;
    dist.barrier();
    const auto start = Clock::now();
    for (int i = 0; i < o.iters; ++i)  // back to back on the stream, one wait at the end (as nccl-tests)
        if (Status s = comm.enqueue_allreduce_sum_f32(buffer->data(), n); !s.ok()) return s;
    if (Status s = comm.synchronize(); !s.ok()) return s;
    row.seconds = std::chrono::duration<double>(Clock::now() - start).count() / o.iters;
    return row;
}
#endif

std::string human_bytes(size_t bytes) {
    char text[32];
    if (bytes >= (1u << 30))
        std::snprintf(text, sizeof(text), "%.0fG", bytes / 1073741824.0);
    else if (bytes >= (1u << 20))
        std::snprintf(text, sizeof(text), "%.0fM", bytes / 1048576.0);
    else if (bytes >= (1u << 10))
        std::snprintf(text, sizeof(text), "%.0fK", bytes / 1024.0);
    else
        std::snprintf(text, sizeof(text), "%zu", bytes);
    return text;
}

int run_bench_comm(const BenchCommOptions& o, std::ostream& out, std::ostream& err) {
    Result<std::vector<size_t>> sizes = parse_sizes(o.sizes);
    if (!sizes.ok()) {
        err << sizes.error() << "\n";
        return 1;
    }
    Result<InjectedFault> fault = injected_fault();
    if (!fault.ok()) {
        err << "bench-comm: " << fault.error() << "\n";
        return 1;
    }
    if (fault->fail) {
        err << "bench-comm: failing as SLIPWAY_BENCH_COMM_FAULT=fail asks\n";
        return 1;
    }
    while (fault->hang)
        std::this_thread::sleep_for(std::chrono::hours(1));
    Result<dist::DistEnv> env = dist::resolve_dist_env(dist::process_env());
    if (!env.ok()) {
        err << "bench-comm: " << env.error() << "\n";
        return 1;
    }
    DistributedConfig config;
    config.timeout_s = o.timeout_s;
#ifdef SLIPWAY_WITH_NCCL
    const bool gpus = dist::visible_gpu_count() > 0;
#else
    const bool gpus = false;
#endif
    config.backend = "gloo";  // the store and a CPU group for barriers; the raw NCCL path rides on them
    Result<std::unique_ptr<dist::DistContext>> dist = dist::DistContext::connect(*env, config);
    if (!dist.ok()) {
        err << "bench-comm: " << dist.error() << "\n";
        return 1;
    }
    dist::DistContext& d = **dist;
    // The ranks agree on the path: NCCL only when every rank has a GPU (a rank alone on Gloo would wait
    // forever for peers that went to NCCL).
    std::vector<double> ranks_with_gpus{gpus ? 1.0 : 0.0};
    d.allreduce_sum(ranks_with_gpus);
    const auto with_gpus = static_cast<int64_t>(ranks_with_gpus[0]);
    const bool all_gpus = with_gpus == d.world_size();
    if (o.backend == "nccl" && !all_gpus) {
        err << "bench-comm: rank " << d.rank()
            << ": --backend nccl needs a GPU on every rank and an engine built "
            << "with CUDA + NCCL; " << with_gpus << " of " << d.world_size() << " ranks have one (this rank "
            << (gpus ? "does" : "does not") << ")\n";
        return 1;
    }
    const bool raw_nccl = all_gpus && o.backend != "gloo";
#ifdef SLIPWAY_WITH_NCCL
    std::unique_ptr<dist::NcclCommunicator> nccl;
    if (raw_nccl) {
        Result<std::unique_ptr<dist::NcclCommunicator>> made = dist::NcclCommunicator::create(
            dist::store_exchange(d.store()), static_cast<int>(d.rank()), static_cast<int>(d.world_size()),
            static_cast<int>(env->local_rank), std::chrono::seconds(o.timeout_s));
        if (!made.ok()) {
            err << "bench-comm: " << made.error() << "\n";
            return 1;
        }
        nccl = std::move(*made);
    }
#endif
    const double n = static_cast<double>(d.world_size());
    if (d.is_main() && !o.json) {
        out << "# bench-comm: allreduce (sum, float32) over " << d.world_size() << " ranks, "
            << (raw_nccl ? "NCCL" : "gloo process group") << ", " << o.iters << " iterations per size\n";
        out << "#      size       count    time(us)  algbw(GB/s)  busbw(GB/s)  check\n";
    }
    bool all_correct = true;
    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    for (size_t bytes : *sizes) {
        Row row;
#ifdef SLIPWAY_WITH_NCCL
        if (raw_nccl) {
            Result<Row> r = measure_nccl(*nccl, d, bytes, o);
            if (!r.ok()) {
                err << "bench-comm: " << r.error() << "\n";
                return 1;
            }
            row = *r;
        } else
#endif
            // Only rank 0 lags: every rank sleeping would make each wait for the other's sleep, compounding.
            row = measure_group(d, bytes, o, d.rank() == 0 ? fault->slow_factor : 1.0);
        all_correct = all_correct && row.correct;
        const double algbw = static_cast<double>(row.bytes) / row.seconds / 1e9;
        const double busbw = algbw * 2 * (n - 1) / n;
        results.push_back({{"bytes", row.bytes},
                           {"time_us", row.seconds * 1e6},
                           {"algbw_gbps", algbw},
                           {"busbw_gbps", busbw},
                           {"correct", row.correct}});
        if (d.is_main() && !o.json) {
            char line[160];
            std::snprintf(line, sizeof(line), "%11s %11zu %11.1f %12.3f %12.3f  %s\n",
                          human_bytes(row.bytes).c_str(), row.bytes / sizeof(float), row.seconds * 1e6, algbw,
                          busbw, row.correct ? "ok" : "WRONG");
            out << line;
        }
    }
    if (d.is_main() && o.json) {
        const nlohmann::ordered_json report = {{"schema", "slipway.bench-comm/1"},
                                               {"backend", raw_nccl ? "nccl" : "gloo"},
                                               {"world_size", d.world_size()},
                                               {"iters", o.iters},
                                               {"results", results}};
        out << report.dump() << "\n";
    }
    out.flush();
    d.barrier();
    return all_correct ? 0 : 1;
}

}  // namespace

void add_bench_comm_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err) {
    auto options = std::make_shared<BenchCommOptions>();
    CLI::App* cmd = app.add_subcommand(
        "bench-comm", "Allreduce bandwidth per size like nccl-tests (run under launch, srun or torchrun)");
    cmd->add_option("--sizes", options->sizes, "Comma-separated sizes in bytes, K/M/G suffixes")
        ->capture_default_str();
    cmd->add_option("--iters", options->iters, "Timed iterations per size")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    cmd->add_option("--warmup", options->warmup, "Untimed iterations per size")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--backend", options->backend,
                    "auto (NCCL when every rank has a GPU, else Gloo) | gloo | nccl")
        ->check(CLI::IsMember({"auto", "gloo", "nccl"}))
        ->capture_default_str();
    cmd->add_option("--timeout-s", options->timeout_s, "Seconds a collective may wait for a rank");
    cmd->add_flag(
        "--json", options->json,
        "Print one JSON line (backend, world_size, results: bytes, time_us, algbw_gbps, busbw_gbps, "
        "correct) instead of the table");
    cmd->callback([options, exit_code, &out, &err] {
        try {
            *exit_code = run_bench_comm(*options, out, err);
        } catch (const std::exception& e) {  // a collective failed: a peer died or stalled
            err << "bench-comm: a collective failed (a rank died or stalled past --timeout-s): " << e.what()
                << "\n";
            err.flush();
            std::_Exit(1);  // the process group's threads may wait on the lost peer: no unwinding
        }
    });
}

}  // namespace slipway::engine
