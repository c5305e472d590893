// Split mode names and paragraph detection of boundaries.h.
#include "data/boundaries.h"

namespace slipway::data {

std::optional<SplitMode> parse_split_mode(std::string_view name) {
    if (name == "document") return SplitMode::kDocument;
    if (name == "paragraph") return SplitMode::kParagraph;
    if (name == "concat") return SplitMode::kConcat;
    return std::nullopt;
}

const char* split_mode_name(SplitMode mode) {
    switch (mode) {
        case SplitMode::kDocument:
            return "document";
        case SplitMode::kParagraph:
            return "paragraph";
        case SplitMode::kConcat:
            return "concat";
    }
    return "?";
}

std::vector<size_t> paragraph_starts(std::string_view text) {
    std::vector<size_t> starts = {0};
    size_t newlines = 0;     // '\n' in the current whitespace run
    bool seen_text = false;  // a non-whitespace character came before the run
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') {
            ++newlines;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
            // whitespace that does not end a line
        } else {
            if (seen_text && newlines >= 2) starts.push_back(i);
            seen_text = true;
            newlines = 0;
        }
    }
    return starts;
}

}  // namespace slipway::data
