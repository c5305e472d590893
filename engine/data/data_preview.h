// What a run will learn from, before any cluster time is spent: the first lines of its train file read,
// rendered and tokenized exactly as `prepare` does (the same plan, encoder and chat template), as spans of
// trained and untrained tokens with their text and token counts, plus the counts over the lines read and
// the bad lines by number. The editor's data page shows it; no torch, no Qt.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"

namespace slipway::data {

// A run of consecutive tokens that are all trained or all not (a prompt, an answer, the template's
// markers between them).
struct PreviewSpan {
    std::string text;  // decoded, special tokens shown
    int64_t tokens = 0;
    bool trained = false;
};

struct PreviewDocument {
    uint64_t line = 0;  // 1-based line of the train file
    std::vector<PreviewSpan> spans;
    int64_t tokens = 0, trained = 0;
    bool truncated = false;  // cut to block_size (data.truncation)
};

struct DataPreview {
    std::string format;        // text | messages | sharegpt | alpaca (auto resolved)
    std::string format_found;  // with auto: what the first line has, in words
    std::string train_file;
    std::vector<PreviewDocument> documents;  // the first `show` that encode
    // Over the lines read (at most `read`):
    uint64_t lines_read = 0, kept = 0, truncated = 0, dropped = 0;
    uint64_t tokens = 0, trained = 0;
    std::vector<std::string> bad_lines;  // "FILE:LINE: reason", at most 20
    bool whole_file = false;             // every line of the file was read
};

// Errors: the plan's (a missing file, a bad field), the tokenizer's, the chat template's.
[[nodiscard]] Result<DataPreview> preview_data(const RunConfig& config, size_t show = 3, size_t read = 200);

}  // namespace slipway::data
