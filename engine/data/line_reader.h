// Reads a text file line by line with line numbers, fast (large buffered reads) and without limit on
// line length up to max_line_bytes; longer lines are consumed and reported, not loaded.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "contract/status.h"

namespace slipway::data {

struct TextLine {
    uint64_t number = 0;    // 1-based
    std::string text;       // without the '\n' (and a '\r' before it)
    uint64_t length = 0;    // bytes of the line as in the file
    bool too_long = false;  // over max_line_bytes: `text` is empty
};

class LineReader {
public:
    static constexpr size_t kDefaultMaxLineBytes = size_t{256} << 20;

    // Errors name the file.
    static Result<LineReader> open(const std::string& path, size_t max_line_bytes = kDefaultMaxLineBytes);

    // The next line that is not blank (blank: only spaces, tabs and '\r', as JsonlReader skips them).
    // False at the end of the file or on a read error (then status() says which).
    bool next(TextLine& line);
    const Status& status() const { return status_; }
    uint64_t bytes_read() const { return bytes_read_; }
    const std::string& path() const { return path_; }

private:
    LineReader() = default;
    bool read_raw(TextLine& line);  // any line, blank or not
    bool refill();

    std::string path_;
    size_t max_line_bytes_ = kDefaultMaxLineBytes;
    std::unique_ptr<FILE, int (*)(FILE*)> file_{nullptr, &std::fclose};
    std::vector<char> buffer_;
    size_t begin_ = 0;  // unread part of buffer_: [begin_, end_)
    size_t end_ = 0;
    bool eof_ = false;
    uint64_t line_number_ = 0;
    uint64_t bytes_read_ = 0;
    Status status_ = Status::Ok();
};

}  // namespace slipway::data
