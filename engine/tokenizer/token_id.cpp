// parse_token_id (model.h): a token id read from tokenizer.json, checked.
#include <nlohmann/json.hpp>

#include "tokenizer/model.h"

namespace slipway::tokenizer {

Result<int32_t> parse_token_id(const nlohmann::json& value, const std::string& where) {
    if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
        (value.is_number_unsigned() ? value.get<uint64_t>() > uint64_t{kMaxTokenId}
                                    : value.get<int64_t>() > kMaxTokenId)) {
        return Status::Error(where + ": id " + value.dump() + " is not an integer in [0, " +
                             std::to_string(kMaxTokenId) + "]");
    }
    return static_cast<int32_t>(value.get<int64_t>());
}

}  // namespace slipway::tokenizer
