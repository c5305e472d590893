// Reads the text field of a JSONL file line by line. Every problem names the file and the line: invalid
// JSON, a missing or non-string field, invalid UTF-8, an over-long line.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "contract/status.h"

namespace slipway::data {

struct JsonlRecord {
    size_t line_number = 0;  // 1-based
    std::string text;
};

class JsonlReader {
public:
    static constexpr size_t kDefaultMaxLineBytes = 256u << 20;

    // Fails when the file cannot be opened (the message names it).
    static Result<JsonlReader> open(const std::string& path, std::string text_field,
                                    size_t max_line_bytes = kDefaultMaxLineBytes);

    // Next record: true and `record` filled; false at the end of the file. A bad line sets `error`
    // ("FILE:LINE: ...") and returns true with an empty record, so callers can skip or stop.
    bool next(JsonlRecord& record, std::string& error);

    const std::string& path() const { return path_; }
    uint64_t bytes_read() const { return bytes_read_; }

private:
    JsonlReader() = default;
    std::string path_;
    std::string field_;
    size_t max_line_bytes_ = kDefaultMaxLineBytes;
    std::unique_ptr<std::ifstream> in_;
    size_t line_number_ = 0;
    uint64_t bytes_read_ = 0;
    std::string line_;
};

}  // namespace slipway::data
