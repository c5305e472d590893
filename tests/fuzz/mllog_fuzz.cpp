// Fuzz harness: MLLOG lines (the fast scanner checked against the nlohmann reference path) and the
// incremental stream (any chunking gives the same lines as one feed), plus the log summary built on them.
#include <string>
#include <vector>

#include "contract/log_summary.h"
#include "contract/mllog.h"
#include "contract/mllog_scan.h"
#include "contract/mllog_stream.h"
#include "fuzz_common.h"

using namespace slipway;

namespace {

// dump() tells values apart except 1 (signed) from 1 (unsigned); the type check covers the top level.
std::string describe(const MllogParseResult& r) {
    const MllogEvent& e = r.event;
    return std::to_string(static_cast<int>(r.kind)) + "|" + r.error + "|" + e.ns + "|" +
           std::to_string(e.time_ms) + "|" + e.event_type + "|" + e.key + "|" + e.value.type_name() + "|" +
           e.value.dump(-1, ' ', false, MllogJson::error_handler_t::replace) + "|" +
           e.metadata.dump(-1, ' ', false, MllogJson::error_handler_t::replace);
}

std::string describe(const MllogStreamItem& item) {
    return std::to_string(item.line_number) + ":" + std::to_string(static_cast<int>(item.kind)) + ":" +
           std::to_string(item.truncated) + ":" + item.text + ":" + item.error + ":" + item.event.key;
}

std::vector<std::string> stream_items(std::string_view bytes, const std::vector<size_t>& cuts, size_t limit) {
    std::vector<std::string> items;
    MllogStream stream([&items](MllogStreamItem&& item) { items.push_back(describe(item)); }, limit);
    size_t at = 0;
    for (size_t cut : cuts) {
        const size_t n = std::min(cut, bytes.size() - at);
        stream.feed(bytes.substr(at, n));
        at += n;
        FUZZ_CHECK(stream.pending_bytes() <= limit, "pending " + std::to_string(stream.pending_bytes()));
    }
    stream.feed(bytes.substr(at));
    stream.finish();
    return items;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text = fuzz::as_text(data, size);

    // Every line: scanner and reference agree.
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view line = text.substr(start, end - start);
        const MllogParseResult fast = parse_mllog_line(line);
        const MllogParseResult reference = mllog_detail::parse_mllog_line_reference(line);
        FUZZ_CHECK(describe(fast) == describe(reference), describe(fast) + "\n vs \n" + describe(reference));
        if (fast.kind == MllogLineKind::kEvent) (void)format_mllog_line(fast.event);
        start = end + 1;
    }

    // The stream: chunk sizes taken from the bytes themselves; a small line limit to reach truncation.
    std::vector<size_t> cuts;
    for (size_t i = 0; i < size && cuts.size() < 16; i += 7)
        cuts.push_back(data[i] % 37);
    constexpr size_t kLimit = 200;
    FUZZ_CHECK(stream_items(text, {}, kLimit) == stream_items(text, cuts, kLimit),
               "chunking changed the lines");

    const LogSummary summary = summarize_log_text(text, "fuzz.log");
    (void)to_json(summary).dump();  // as `slipway logs summary --json` prints it
    return 0;
}
