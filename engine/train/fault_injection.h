// Fault injection for the distributed tests: faults that signals cannot make. SLIPWAY_FAULT_HANG_AT=R:S
// makes rank R's training thread stop at the start of step S and never come back while its other
// threads (the heartbeat) carry on — a deadlock or a stuck kernel, as seen from the other ranks.
// SLIPWAY_FAULT_THROW_AT=R:S:KIND makes rank R fail on its own in step S (after its forward pass) with a
// real error of KIND: shape (a shape mismatch in a torch op), oom (std::bad_alloc), file (a filesystem
// error); step 0 throws in the train command before training starts (the command line's last resort).
// Unset in real runs; nothing else reads them. Filesystem faults (a full disk, a failing fsync or rename, a
// torn file) have their own hook, SLIPWAY_FS_FAULT, read once by main (contract/faulty_file_system.h).
#pragma once

#include <cstdint>
#include <functional>

namespace slipway::train {

// Blocks forever when SLIPWAY_FAULT_HANG_AT names this rank and step; returns at once otherwise.
void hang_here_if_injected(int64_t rank, int64_t step);

// Throws when SLIPWAY_FAULT_THROW_AT names this rank and step; returns at once otherwise. `shape_error` runs
// a torch op on mismatched shapes (this library has no torch).
void throw_here_if_injected(int64_t rank, int64_t step, const std::function<void()>& shape_error);

}  // namespace slipway::train
