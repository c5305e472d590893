// lora_targets.h: PEFT's rules for which modules get adapters, their ranks, and modules_to_save.
#include "model/lora_targets.h"

#include <map>
#include <regex>

namespace slipway::model {
namespace {

template <typename T>
T pattern_value(const std::map<std::string, T>& patterns, const std::string& module, T fallback) {
    for (const auto& [pattern, value] : patterns) {
        try {
            if (std::regex_match(module, std::regex("(.*\\.)?(" + pattern + ")"))) return value;
        } catch (const std::regex_error&) {
            if (module_name_matches(module, pattern)) return value;
        }
    }
    return fallback;
}

}  // namespace

bool module_name_matches(const std::string& module, const std::string& key) {
    return module == key || (module.size() > key.size() &&
                             module.compare(module.size() - key.size() - 1, key.size() + 1, "." + key) == 0);
}

bool lora_targets(const std::string& module, const AdapterConfig& adapter) {
    const bool all_linear = adapter.target_modules.size() == 1 && adapter.target_modules[0] == "all-linear";
    if (all_linear) return module != "lm_head";
    for (const std::string& target : adapter.target_modules) {
        if (module_name_matches(module, target)) return true;
    }
    return false;
}

int64_t lora_rank_for(const std::string& module, const AdapterConfig& adapter) {
    return pattern_value(adapter.rank_pattern, module, adapter.r);
}

double lora_alpha_for(const std::string& module, const AdapterConfig& adapter) {
    return pattern_value(adapter.alpha_pattern, module, adapter.lora_alpha);
}

bool in_modules_to_save(const std::string& name, const AdapterConfig& adapter) {
    const size_t dot = name.rfind('.');
    const std::string module = dot == std::string::npos ? name : name.substr(0, dot);
    for (const std::string& key : adapter.modules_to_save) {
        if (module_name_matches(module, key)) return true;
    }
    return false;
}

}  // namespace slipway::model
