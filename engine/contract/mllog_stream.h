// Incremental log reader: bytes in any chunking -> numbered lines, each a text line, an MLLOG event or a
// bad MLLOG line. Used for whole files and for logs that are still growing (tail -f, remote followers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "contract/mllog.h"

namespace slipway {

struct MllogStreamItem {
    int64_t line_number = 0;  // 1-based
    MllogLineKind kind = MllogLineKind::kText;
    std::string text;        // the line without '\n' and a trailing '\r' (its first bytes if truncated)
    MllogEvent event;        // kind == kEvent
    std::string error;       // kind == kBadMllog
    bool truncated = false;  // the line was longer than the stream's limit; the rest of it was dropped
};

// A line is the bytes up to '\n' (a trailing '\r' is dropped); finish() ends a final unterminated piece.
// Items go to the sink in line order, and feeding the same bytes in any chunking gives the same items.
// A line longer than max_line_bytes (not counting its '\n') is cut there so memory stays bounded: it is
// reported once, truncated, as a bad MLLOG line if its kept bytes contain ":::MLLOG ", else as text.
class MllogStream {
public:
    using Sink = std::function<void(MllogStreamItem&& item)>;
    static constexpr size_t kDefaultMaxLineBytes = size_t{64} << 20;

    explicit MllogStream(Sink sink, size_t max_line_bytes = kDefaultMaxLineBytes);

    void feed(std::string_view bytes);
    // Emits the pending unterminated line, if any. Feeding may continue afterwards with a new line.
    void finish();

    int64_t lines() const { return lines_; }
    int64_t mllog_lines() const { return mllog_lines_; }  // lines with ":::MLLOG ", good or bad
    int64_t bad_lines() const { return bad_lines_; }
    // Bytes held for a line whose '\n' has not arrived yet.
    size_t pending_bytes() const { return pending_.size(); }

private:
    void emit_line(std::string_view line, bool truncated);

    Sink sink_;
    size_t max_line_bytes_;
    std::string pending_;
    bool skipping_ = false;  // dropping the tail of an overlong line until its '\n'
    int64_t lines_ = 0;
    int64_t mllog_lines_ = 0;
    int64_t bad_lines_ = 0;
};

}  // namespace slipway
