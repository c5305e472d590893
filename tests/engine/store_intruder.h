// A client that reaches a running job's rendezvous store without the job's secret and keeps writing,
// overwriting, deleting and counting up the keys a job used before they lived under the secret's prefix
// (heartbeats, progress, gave-up records, rank 0's phase verdict, Gloo's rendezvous, TCPStore's worker
// count) and the job's own key names under guessed prefixes. Torch stays in its .cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace slipway::testing_support {

// Runs until `stop`; reconnects when the store drops it. Returns the operations the store accepted.
int64_t intrude_store(const std::string& host, int port, const std::atomic<bool>& stop);

}  // namespace slipway::testing_support
