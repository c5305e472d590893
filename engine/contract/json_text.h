// JSON from files and bytes Slipway does not control (run configs, tokenizer.json, config.json, safetensors
// headers, token-cache meta, MLLOG payloads): one nesting limit, and every exception the parser can throw
// turned into a Status that names the source.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "contract/status.h"

namespace slipway {

// Python's json module gives up near 1000 levels too. The limit keeps every later recursive walk (copy,
// compare, dump) of a parsed value safe from stack exhaustion; nlohmann's parser itself is iterative.
inline constexpr int kMaxJsonNesting = 512;

// True when `text` opens more than `limit` arrays/objects at once (strings are skipped; not a validator).
bool json_nesting_exceeds(std::string_view text, int limit = kMaxJsonNesting);

// Parses `text`; errors start with `source` ("run.json: invalid JSON: ...", "...: nested deeper than 512").
Result<nlohmann::json> parse_json_text(std::string_view text, const std::string& source);

}  // namespace slipway
