// What a stored run's chat talks to, from the run config kept with it (its paths are where the run ran:
// this computer's, or the cluster's): a LoRA run's base model with its output as the adapter, a full or
// embeddings-only run's output as the model.
#pragma once

#include "chat/chat_session.h"
#include "contract/run_config.h"
#include "contract/status.h"
#include "history/run_history.h"

namespace slipway::app {

// The run config stored with the run; fails, naming the run, when there is none readable.
[[nodiscard]] Result<RunConfig> stored_run_config(const StoredRun& run);

// Fails, naming the run, when it has no readable run config.
[[nodiscard]] Result<ChatTarget> chat_target_of_run(const StoredRun& run);

}  // namespace slipway::app
