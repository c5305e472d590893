// preview_data (data_preview.h): the prepare plan and encoder over the first lines of the train file.
#include "data/data_preview.h"

#include "data/document_encoder.h"
#include "data/line_reader.h"
#include "data/prepare_plan.h"
#include "data/token_cache_meta.h"

namespace slipway::data {
namespace {

constexpr size_t kMaxBadLines = 20;

// Consecutive tokens of one kind as spans, each decoded on its own.
Result<std::vector<PreviewSpan>> spans_of(const std::vector<uint32_t>& tokens,
                                          const tokenizer::Tokenizer& tok) {
    std::vector<PreviewSpan> spans;
    std::vector<int32_t> ids;
    bool trained = false;
    const auto close = [&]() -> Status {
        if (ids.empty()) return Status::Ok();
        Result<std::string> text = tok.decode(ids);
        if (!text.ok()) return text.status();
        spans.push_back({*text, static_cast<int64_t>(ids.size()), trained});
        ids.clear();
        return Status::Ok();
    };
    for (const uint32_t token : tokens) {
        const bool is_trained = (token & kUntrainedTokenBit) == 0;
        if (is_trained != trained) {
            if (Status s = close(); !s.ok()) return s;
            trained = is_trained;
        }
        ids.push_back(static_cast<int32_t>(token & kTokenIdMask));
    }
    if (Status s = close(); !s.ok()) return s;
    return spans;
}

}  // namespace

Result<DataPreview> preview_data(const RunConfig& config, size_t show, size_t read) {
    Result<PreparePlan> plan = make_prepare_plan(config, /*digest_inputs=*/false);
    if (!plan.ok()) return plan.status();
    Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_file(plan->tokenizer_file);
    if (!tok.ok()) return tok.status();
    Result<uint32_t> eos = resolve_eos_token_id(*plan, *tok, nullptr);
    if (!eos.ok()) return eos.status();

    DocumentEncoderOptions encoder = encoder_options(*plan, *tok, *eos);
    encoder.hash_text = false;
    encoder.pad_to_block = false;  // the conversation's own tokens

    DataPreview preview;
    preview.format = data_format_name(plan->format);
    preview.format_found = plan->format_found;
    preview.train_file = plan->train_file;
    Result<LineReader> reader = LineReader::open(plan->train_file);
    if (!reader.ok()) return reader.status();
    TextLine line;
    EncodedDocument doc;
    while (preview.lines_read < read && reader->next(line)) {
        ++preview.lines_read;
        if (line.too_long) {
            doc = EncodedDocument{};
            doc.error = "line is " + std::to_string(line.length) + " bytes, over the limit";
        } else {
            encode_document(line.text, encoder, doc);
        }
        if (!doc.error.empty()) {
            if (preview.bad_lines.size() < kMaxBadLines)
                preview.bad_lines.push_back(plan->train_file + ":" + std::to_string(line.number) + ": " +
                                            doc.error);
            continue;
        }
        if (doc.dropped) {
            ++preview.dropped;
            continue;
        }
        ++preview.kept;
        preview.truncated += doc.truncated ? 1 : 0;
        preview.tokens += doc.tokens.size();
        preview.trained += doc.trained;
        if (preview.documents.size() < show) {
            Result<std::vector<PreviewSpan>> spans = spans_of(doc.tokens, *tok);
            if (!spans.ok()) return spans.status();
            preview.documents.push_back({line.number, std::move(*spans),
                                         static_cast<int64_t>(doc.tokens.size()),
                                         static_cast<int64_t>(doc.trained), doc.truncated});
        }
    }
    if (!reader->status().ok()) return reader->status();
    preview.whole_file = !reader->next(line);
    return preview;
}

}  // namespace slipway::data
