// Incremental log reader: splits bytes into lines and classifies each with parse_mllog_line().
#include "contract/mllog_stream.h"

#include <utility>

namespace slipway {
namespace {

// A buffer that held one huge line gives its memory back rather than keeping it for the whole log.
constexpr size_t kKeepCapacityBytes = size_t{1} << 20;

void clear_pending(std::string& pending) {
    pending.clear();
    if (pending.capacity() > kKeepCapacityBytes) pending.shrink_to_fit();
}

}  // namespace

MllogStream::MllogStream(Sink sink, size_t max_line_bytes)
    : sink_(std::move(sink)), max_line_bytes_(max_line_bytes == 0 ? 1 : max_line_bytes) {}

void MllogStream::feed(std::string_view bytes) {
    while (!bytes.empty()) {
        const size_t newline = bytes.find('\n');
        const std::string_view piece = bytes.substr(0, newline);  // this line's bytes in this chunk
        const bool ends_here = newline != std::string_view::npos;

        if (skipping_) {
            if (!ends_here) return;
            skipping_ = false;
        } else if (piece.size() > max_line_bytes_ - pending_.size()) {
            // The cut is always at exactly max_line_bytes, so the item does not depend on the chunking.
            pending_.append(piece.substr(0, max_line_bytes_ - pending_.size()));
            emit_line(pending_, /*truncated=*/true);
            clear_pending(pending_);
            if (!ends_here) {
                skipping_ = true;
                return;
            }
        } else if (!ends_here) {
            pending_.append(piece);
            return;
        } else if (pending_.empty()) {
            emit_line(piece, /*truncated=*/false);  // the common case: no copy into pending_
        } else {
            pending_.append(piece);
            emit_line(pending_, /*truncated=*/false);
            clear_pending(pending_);
        }
        bytes.remove_prefix(newline + 1);
    }
}

void MllogStream::finish() {
    if (skipping_) {
        skipping_ = false;  // its item was emitted when it overflowed
        return;
    }
    if (pending_.empty()) return;
    emit_line(pending_, /*truncated=*/false);
    clear_pending(pending_);
}

void MllogStream::emit_line(std::string_view line, bool truncated) {
    if (!truncated && !line.empty() && line.back() == '\r') line.remove_suffix(1);

    MllogStreamItem item;
    item.line_number = ++lines_;
    item.text = std::string(line);
    item.truncated = truncated;
    if (truncated) {
        // Its JSON is incomplete by construction; only the marker decides whether it was an MLLOG line.
        if (line.find(kMllogPrefix) != std::string_view::npos) {
            item.kind = MllogLineKind::kBadMllog;
            item.error = "line longer than " + std::to_string(max_line_bytes_) + " bytes";
        }
    } else {
        MllogParseResult parsed = parse_mllog_line(line);
        item.kind = parsed.kind;
        item.event = std::move(parsed.event);
        item.error = std::move(parsed.error);
    }
    if (item.kind != MllogLineKind::kText) ++mllog_lines_;
    if (item.kind == MllogLineKind::kBadMllog) ++bad_lines_;
    sink_(std::move(item));
}

}  // namespace slipway
