// JSON text from outside (see json_text.h).
#include "contract/json_text.h"

#include <exception>

namespace slipway {

bool json_nesting_exceeds(std::string_view text, int limit) {
    int depth = 0;
    bool in_string = false;
    bool escaped = false;
    for (const char c : text) {
        if (in_string) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > limit) return true;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return false;
}

Result<nlohmann::json> parse_json_text(std::string_view text, const std::string& source) {
    if (json_nesting_exceeds(text)) {
        return Result<nlohmann::json>::Error(source + ": invalid JSON: nested deeper than " +
                                             std::to_string(kMaxJsonNesting) + " levels");
    }
    try {
        return nlohmann::json::parse(text.begin(), text.end());
    } catch (const std::exception& e) {  // parse_error, and bad_alloc on absurd input
        return Result<nlohmann::json>::Error(source + ": invalid JSON: " + e.what());
    }
}

}  // namespace slipway
