// `slipway-engine bench-comm [--sizes 1M,16M,256M] [--iters K] [--backend auto|gloo|nccl]`, under any
// launcher (launch, srun, torchrun): allreduce time, algbw and busbw per size with nccl-tests' formulas
// (busbw = algbw x 2(n-1)/n), plus a correctness check, printed by rank 0. On GPUs it measures NCCL's
// own API (the raw fabric, like nccl-tests); on CPUs the Gloo process group that training uses. --json
// prints one JSON line instead (slipway doctor reads it); SLIPWAY_BENCH_COMM_FAULT injects a slow, failing
// or hung rank for the doctor's tests (slow applies to the Gloo path).
#pragma once

#include <iosfwd>

namespace CLI {
class App;
}

namespace slipway::engine {

void add_bench_comm_command(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err);

}  // namespace slipway::engine
