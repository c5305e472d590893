// Fault injection for the distributed tests: faults that signals cannot make. SLIPWAY_FAULT_HANG_AT=R:S
// makes rank R's training thread stop at the start of step S and never come back while its other
// threads (the heartbeat) carry on — a deadlock or a stuck kernel, as seen from the other ranks.
// Unset in real runs; nothing else reads it.
#pragma once

#include <cstdint>

namespace slipway::train {

// Blocks forever when SLIPWAY_FAULT_HANG_AT names this rank and step; returns at once otherwise.
void hang_here_if_injected(int64_t rank, int64_t step);

}  // namespace slipway::train
