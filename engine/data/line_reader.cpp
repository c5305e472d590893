// The buffered line reader of line_reader.h.
#include "data/line_reader.h"

#include <cerrno>
#include <cstring>

namespace slipway::data {

Result<LineReader> LineReader::open(const std::string& path, size_t max_line_bytes) {
    LineReader reader;
    reader.path_ = path;
    reader.max_line_bytes_ = max_line_bytes;
    reader.file_.reset(std::fopen(path.c_str(), "rb"));
    if (!reader.file_) return Status::Error(path + ": cannot open file: " + std::strerror(errno));
    reader.buffer_.resize(size_t{1} << 20);
    return reader;
}

bool LineReader::refill() {
    if (eof_) return false;
    const size_t n = std::fread(buffer_.data(), 1, buffer_.size(), file_.get());
    begin_ = 0;
    end_ = n;
    if (n < buffer_.size()) {
        eof_ = true;
        if (std::ferror(file_.get())) {
            status_ = Status::Error(path_ + ": read error: " + std::strerror(errno));
            return false;
        }
    }
    return n > 0;
}

bool LineReader::read_raw(TextLine& line) {
    line.text.clear();
    line.length = 0;
    line.too_long = false;
    bool any = false;
    while (true) {
        if (begin_ == end_ && !refill()) break;
        any = true;
        const char* start = buffer_.data() + begin_;
        const auto* newline = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
        const size_t take = newline ? static_cast<size_t>(newline - start) : end_ - begin_;
        line.length += take;
        if (line.length > max_line_bytes_) {
            line.too_long = true;
            line.text.clear();
            line.text.shrink_to_fit();
        } else {
            line.text.append(start, take);
        }
        begin_ += take;
        if (newline) {
            ++begin_;
            bytes_read_ += line.length + 1;
            ++line_number_;
            line.number = line_number_;
            if (!line.text.empty() && line.text.back() == '\r') line.text.pop_back();
            return true;
        }
    }
    if (!status_.ok() || !any) return false;
    bytes_read_ += line.length;  // a last line without '\n'
    ++line_number_;
    line.number = line_number_;
    if (!line.text.empty() && line.text.back() == '\r') line.text.pop_back();
    return true;
}

bool LineReader::next(TextLine& line) {
    while (read_raw(line)) {
        if (line.too_long || line.text.find_first_not_of(" \t\r") != std::string::npos) return true;
    }
    return false;
}

}  // namespace slipway::data
