// JSONL text reader of jsonl_reader.h.
#include "data/jsonl_reader.h"

#include <memory>

#include <nlohmann/json.hpp>

namespace slipway::data {

Result<JsonlReader> JsonlReader::open(const std::string& path, std::string text_field,
                                      size_t max_line_bytes) {
    auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
    if (!*in) return Status::Error(path + ": cannot open file");
    JsonlReader reader;
    reader.path_ = path;
    reader.field_ = std::move(text_field);
    reader.max_line_bytes_ = max_line_bytes;
    reader.in_ = std::move(in);
    return reader;
}

bool JsonlReader::next(JsonlRecord& record, std::string& error) {
    error.clear();
    while (true) {
        if (!std::getline(*in_, line_)) return false;
        ++line_number_;
        bytes_read_ += line_.size() + 1;
        if (!line_.empty() && line_.back() == '\r') line_.pop_back();
        if (line_.find_first_not_of(" \t") == std::string::npos) continue;  // blank lines are not records
        break;
    }
    record.line_number = line_number_;
    record.text.clear();
    const std::string where = path_ + ":" + std::to_string(line_number_) + ": ";
    if (line_.size() > max_line_bytes_) {
        error = where + "line is " + std::to_string(line_.size()) + " bytes, over the limit of " +
                std::to_string(max_line_bytes_);
        return true;
    }
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(line_);
    } catch (const nlohmann::json::exception& e) {
        // nlohmann reports invalid UTF-8 as a parse error too.
        error = where + "invalid JSON: " + e.what();
        return true;
    }
    if (!doc.is_object()) {
        error = where + "expected a JSON object";
        return true;
    }
    const auto it = doc.find(field_);
    if (it == doc.end()) {
        error = where + "missing field \"" + field_ + "\"";
        return true;
    }
    if (!it->is_string()) {
        error = where + "field \"" + field_ + "\" is not a string";
        return true;
    }
    record.text = it->get<std::string>();
    return true;
}

}  // namespace slipway::data
