// The fast path of parse_mllog_line(): a hand-rolled scanner for the JSON object after ":::MLLOG " that
// fills MllogEvent directly. It accepts only input it knows nlohmann::ordered_json parses to the same value
// (strict RFC 8259 JSON, well-formed UTF-8, shallow nesting, no duplicate keys, numbers in range) and
// declines the rest, so parse_mllog_line() falls back to nlohmann, which stays the reference for results
// and error messages. Internal to the contract library and its tests.
#pragma once

#include <cstdint>
#include <string_view>

#include "contract/mllog.h"

namespace slipway::mllog_detail {

// Fills `event` from `payload` (the text after ":::MLLOG ") and returns true, or returns false when it
// declines; `event` is then partly written and must be reset by the caller.
bool scan_mllog_payload(std::string_view payload, MllogEvent& event);

// parse_mllog_line() with the nlohmann parser only (the scanner skipped): the reference the scanner is
// tested against.
MllogParseResult parse_mllog_line_reference(std::string_view line);

// time_ms as the parser reads it from whatever JSON value the line holds (0 unless a number within int64).
int64_t time_ms_from_json(const MllogJson& value);

}  // namespace slipway::mllog_detail
