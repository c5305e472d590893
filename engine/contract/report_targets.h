// The names /training/report_to takes (HF's --report_to names): the trackers the engine writes itself, and
// HF's others, which it names when it refuses them.
#pragma once

#include <string>
#include <vector>

namespace slipway {

// Written by the engine as it trains, plus "all" (every one of them) and "none".
inline const std::vector<std::string>& report_to_names() {
    static const std::vector<std::string> names = {"tensorboard", "mlflow", "all", "none"};
    return names;
}

// HF's trackers the engine does not write.
inline const std::vector<std::string>& report_to_unwritten() {
    static const std::vector<std::string> names = {"wandb"};
    return names;
}

}  // namespace slipway
