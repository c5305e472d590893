// Normalizers of tokenizer.json (NFC, NFKC, Prepend, Replace, Sequence). Anything else is an error naming
// the component, never a silently different encoding.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "contract/status.h"

namespace slipway::tokenizer {

class Normalizer {
public:
    virtual ~Normalizer() = default;
    [[nodiscard]] virtual Status normalize(std::string& text) const = 0;
};

// nullptr for a JSON null (no normalizer).
Result<std::shared_ptr<const Normalizer>> make_normalizer(const nlohmann::json& spec);

}  // namespace slipway::tokenizer
