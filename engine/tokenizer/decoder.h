// Decoders of tokenizer.json (ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace, Sequence): token
// strings back to text, as the HF library's decode chain does.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "contract/status.h"

namespace slipway::tokenizer {

class Decoder {
public:
    virtual ~Decoder() = default;
    // One step of the chain: tokens in, tokens out (the final text is their concatenation).
    virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
};

// nullptr for a JSON null (tokens are concatenated as they are).
Result<std::shared_ptr<const Decoder>> make_decoder(const nlohmann::json& spec);

}  // namespace slipway::tokenizer
