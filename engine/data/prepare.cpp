// The prepare pipeline of prepare.h: plan -> cache hit? -> read batches of lines -> encode them on the
// worker pool -> consume the results in input order (bad lines, dedup, validation hold-out, blocks) ->
// write -> commit.
#include "data/prepare.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <thread>

#include "data/block_cutter.h"
#include "data/conversation_packer.h"
#include "data/dedup.h"
#include "data/document_encoder.h"
#include "data/prepare_plan.h"
#include "data/token_cache.h"
#include "data/token_cache_writer.h"
#include "util/worker_pool.h"

namespace slipway::data {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

class Pipeline {
public:
    Pipeline(const PreparePlan& plan, const PrepareOptions& options, const DocumentEncoderOptions& encoder,
             TokenCacheWriter& writer, WorkerPool& pool, PrepareReport& report)
        : plan_(plan),
          options_(options),
          encoder_(encoder),
          writer_(writer),
          pool_(pool),
          report_(report),
          cutters_{BlockCutter(plan.mode, plan.block_size), BlockCutter(plan.mode, plan.block_size)},
          packers_{ConversationPacker(plan.block_size, encoder.eos_token_id),
                   ConversationPacker(plan.block_size, encoder.eos_token_id)} {
        for (const CacheInput& in : plan.inputs) {
            if (in.role != "tokenizer") bytes_total_ += in.size;
        }
    }

    // Reads one JSONL file; documents of the validation file all go to validation, those of the train
    // file to train unless held out.
    Status read_file(const std::string& path, Split role) {
        Result<LineReader> reader = LineReader::open(path, options_.max_line_bytes);
        if (!reader.ok()) return reader.status();
        const size_t batch = std::max<size_t>(1, options_.batch_documents);
        std::vector<TextLine> lines(batch);
        std::vector<EncodedDocument> docs(batch);
        const auto encode = [&](size_t i) {
            if (!lines[i].too_long) {
                encode_document(lines[i].text, encoder_, docs[i]);
                return;
            }
            docs[i] = EncodedDocument{};
            docs[i].error = "line is " + std::to_string(lines[i].length) + " bytes, over the limit of " +
                            std::to_string(options_.max_line_bytes);
        };
        while (true) {
            size_t n = 0;
            uint64_t bytes = 0;
            while (n < batch && bytes < options_.batch_bytes && reader->next(lines[n]))
                bytes += lines[n++].length;
            if (!reader->status().ok()) return reader->status();
            if (n == 0) break;
            std::atomic<size_t> next{0};  // workers take lines in turn; results stay in input order
            pool_.run([&](unsigned) {
                for (size_t i = next++; i < n; i = next++)
                    encode(i);
            });
            for (size_t i = 0; i < n; ++i) {
                if (Status s = consume(path, lines[i].number, docs[i], role); !s.ok()) return s;
            }
            if (options_.after_batch) {
                if (Status s = options_.after_batch(++batches_); !s.ok()) return s;
            }
            report_progress(path, bytes_done_ + reader->bytes_read());
        }
        bytes_done_ += reader->bytes_read();
        report_.bytes_read = bytes_done_;
        return Status::Ok();
    }

    // Decides the last blocks of both splits and fills the counts.
    Status finish(CacheMeta& meta) {
        for (const Split split : {Split::kTrain, Split::kValidation}) {
            BlockCutter& cutter = cutters_[static_cast<int>(split)];
            ConversationPacker& packer = packers_[static_cast<int>(split)];
            packer.finish();
            if (Status s = append_packed(split); !s.ok()) return s;
            cutter.finish();
            if (Status s = writer_.append_blocks(split, cutter.take_blocks()); !s.ok()) return s;
            SplitCounts& c = meta.counts(split);
            c.documents = documents_[static_cast<int>(split)];
            c.tokens = cutter.stats().tokens;
            c.blocks = cutter.stats().blocks;
            c.tokens_dropped = cutter.stats().dropped;
            c.tokens_repeated = cutter.stats().repeated;
            c.trained_tokens = trained_[static_cast<int>(split)];
            c.padding_tokens = plan_.packing ? packer.padding_tokens() : padding_[static_cast<int>(split)];
        }
        meta.conversations_truncated = conversations_truncated_;
        meta.conversations_dropped = conversations_dropped_;
        meta.documents_read = documents_read_;
        meta.duplicates_removed = dedup_.removed();
        meta.bad_lines_skipped = bad_lines_;
        return Status::Ok();
    }

private:
    Status consume(const std::string& path, uint64_t line_number, const EncodedDocument& doc, Split role) {
        if (!doc.error.empty()) {
            std::string message = path + ":" + std::to_string(line_number) + ": " + doc.error;
            if (!options_.skip_bad) return Status::Error(std::move(message));
            ++bad_lines_;
            if (report_.skipped.size() < kMaxSkippedMessages) report_.skipped.push_back(std::move(message));
            return Status::Ok();
        }
        ++documents_read_;
        conversations_truncated_ += doc.truncated ? 1 : 0;
        if (doc.dropped) {
            ++conversations_dropped_;
            return Status::Ok();
        }
        if (plan_.dedup && !dedup_.keep(doc.hash)) return Status::Ok();
        Split split = role;
        if (role == Split::kTrain && plan_.seed &&
            held_out_for_validation(line_number, *plan_.seed, *plan_.validation_split_percentage)) {
            split = Split::kValidation;
        }
        const int s = static_cast<int>(split);
        ++documents_[s];
        trained_[s] += doc.trained;
        tokens_ += doc.tokens.size();
        if (plan_.format != DataFormat::kText && plan_.packing) {
            packers_[s].add(doc.tokens);
            return append_packed(split);
        }
        padding_[s] += doc.padding;
        if (Status st = writer_.append_tokens(split, doc.tokens); !st.ok()) return st;
        cutters_[s].add_document(doc.tokens.size(), doc.starts);
        return writer_.append_blocks(split, cutters_[s].take_blocks());
    }

    // The blocks the packer closed, each a document of exactly block_size tokens to the cutter.
    Status append_packed(Split split) {
        const int s = static_cast<int>(split);
        for (const std::vector<uint32_t>& block : packers_[s].take_blocks()) {
            if (Status st = writer_.append_tokens(split, block); !st.ok()) return st;
            cutters_[s].add_document(block.size(), {});
            if (Status st = writer_.append_blocks(split, cutters_[s].take_blocks()); !st.ok()) return st;
        }
        return Status::Ok();
    }

    void report_progress(const std::string& file, uint64_t bytes_done) {
        if (!options_.progress) return;
        const double now = seconds_since(start_);
        if (now - last_progress_ < options_.progress_interval_s) return;
        last_progress_ = now;
        options_.progress({file, bytes_done, bytes_total_, documents_read_, tokens_, now});
    }

    const PreparePlan& plan_;
    const PrepareOptions& options_;
    const DocumentEncoderOptions& encoder_;
    TokenCacheWriter& writer_;
    WorkerPool& pool_;
    PrepareReport& report_;
    BlockCutter cutters_[2];
    ConversationPacker packers_[2];
    uint64_t padding_[2] = {0, 0};
    DuplicateFilter dedup_;
    uint64_t documents_[2] = {0, 0};
    uint64_t trained_[2] = {0, 0};
    uint64_t conversations_truncated_ = 0, conversations_dropped_ = 0;
    uint64_t documents_read_ = 0;
    uint64_t bad_lines_ = 0;
    uint64_t tokens_ = 0;
    uint64_t batches_ = 0;
    uint64_t bytes_done_ = 0;
    uint64_t bytes_total_ = 0;
    Clock::time_point start_ = Clock::now();
    double last_progress_ = 0;
};

unsigned thread_count(const RunConfig& config, const PrepareOptions& options) {
    const int64_t wanted = options.threads > 0 ? options.threads : config.data.preprocessing_num_workers;
    if (wanted > 0) return static_cast<unsigned>(wanted);
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

std::string describe_conversations(const CacheMeta& m) {
    const uint64_t tokens = m.train.tokens + m.validation.tokens;
    const uint64_t trained = m.train.trained_tokens + m.validation.trained_tokens;
    const uint64_t padding = m.train.padding_tokens + m.validation.padding_tokens;
    const uint64_t blocks = m.train.blocks + m.validation.blocks;
    const auto percent = [](uint64_t part, uint64_t whole) {
        char text[32];
        std::snprintf(text, sizeof(text), "%.1f%%",
                      whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
        return std::string(text);
    };
    const std::string layout = m.packed ? "packed into " + std::to_string(blocks) + " blocks of " +
                                              std::to_string(m.block_size) + " tokens (" +
                                              percent(tokens - padding, tokens) + " filled)"
                                        : "one a block of " + std::to_string(m.block_size) + " tokens";
    return "conversations (" + m.data_format + ", train_on " + m.train_on +
           "): " + std::to_string(m.train.documents + m.validation.documents) + " kept, " + layout + "; " +
           std::to_string(trained) + " of " + std::to_string(tokens - padding) + " tokens trained (" +
           percent(trained, tokens - padding) + "); " + std::to_string(m.conversations_truncated) +
           " truncated, " + std::to_string(m.conversations_dropped) + " dropped (longer than " +
           std::to_string(m.block_size) + " tokens, or nothing left to train)";
}

Result<PrepareReport> prepare_token_cache(const RunConfig& config, const PrepareOptions& options) {
    const Clock::time_point start = Clock::now();
    const ConfigProblems problems = validate(config, validation_context_for(config));
    if (has_errors(problems)) {
        std::string message = "invalid run config:";
        for (const ConfigProblem& p : problems) {
            if (p.is_error()) message += "\n  " + p.to_string();
        }
        return Status::Error(message);
    }
    Result<PreparePlan> plan = make_prepare_plan(config);
    if (!plan.ok()) return plan.status();

    PrepareReport report;
    report.cache_path = plan->cache_path;
    report.format_found = plan->format_found;
    if (Result<TokenCache> existing = TokenCache::open(plan->cache_path); existing.ok()) {
        report.cache_hit = true;
        report.meta = existing->meta();
        report.seconds = seconds_since(start);
        return report;
    }

    std::error_code ec;
    std::filesystem::create_directories(plan->cache_dir, ec);
    if (ec || !std::filesystem::is_directory(plan->cache_dir, ec)) {
        return Status::Error(plan->cache_dir + ": cannot create the cache folder: " +
                             (ec ? ec.message() : std::string("not a folder")));
    }
    report.stale_temporaries_removed = remove_stale_temporaries(plan->cache_dir);

    Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_file(plan->tokenizer_file);
    if (!tok.ok()) return tok.status();
    Result<uint32_t> eos = resolve_eos_token_id(*plan, *tok, &report.eos_source);
    if (!eos.ok()) return eos.status();

    Result<TokenCacheWriter> writer = TokenCacheWriter::create(plan->cache_dir, plan->key);
    if (!writer.ok()) return writer.status();

    const DocumentEncoderOptions encoder = encoder_options(*plan, *tok, *eos);
    report.threads = thread_count(config, options);
    WorkerPool pool(report.threads);
    CacheMeta meta;
    {
        Pipeline pipeline(*plan, options, encoder, *writer, pool, report);
        if (Status s = pipeline.read_file(plan->train_file, Split::kTrain); !s.ok()) return s;
        if (!plan->validation_file.empty()) {
            if (Status s = pipeline.read_file(plan->validation_file, Split::kValidation); !s.ok()) return s;
        }
        if (Status s = pipeline.finish(meta); !s.ok()) return s;
    }
    if (meta.train.blocks == 0) {
        return Status::Error(plan->train_file + ": no training block of " + std::to_string(plan->block_size) +
                             " tokens: " + std::to_string(meta.train.documents) + " document(s) gave " +
                             std::to_string(meta.train.tokens) + " tokens");
    }
    const bool wants_validation =
        !plan->validation_file.empty() || plan->validation_split_percentage.value_or(0) > 0;
    if (wants_validation && meta.validation.blocks == 0) {
        report.warnings.push_back("validation: no block of " + std::to_string(plan->block_size) +
                                  " tokens (" + std::to_string(meta.validation.documents) + " document(s), " +
                                  std::to_string(meta.validation.tokens) + " tokens)");
    }
    meta.engine_version = options.engine_version;
    meta.key = plan->key;
    meta.created = utc_now();
    meta.block_size = static_cast<int64_t>(plan->block_size);
    meta.split_mode = split_mode_name(plan->mode);
    meta.dedup = plan->dedup;
    meta.text_field = plan->text_field;
    meta.data_format = data_format_name(plan->format);
    meta.train_on = plan->format == DataFormat::kText ? "" : train_on_name(plan->train_on);
    meta.packed = plan->format != DataFormat::kText && plan->packing;
    meta.validation_split_percentage = plan->validation_split_percentage;
    meta.seed = plan->seed;
    meta.eos_token_id = *eos;
    if (plan->format == DataFormat::kText) {
        const tokenizer::SpecialTokens& special = tok->special_tokens();
        meta.document_prefix_ids.assign(special.prefix.begin(), special.prefix.end());
        meta.document_prefix_source = special.prefix_source;
    }
    meta.vocab_size = tok->vocab_size();
    meta.inputs = plan->inputs;
    Result<std::string> path = writer->commit(meta);
    if (!path.ok()) return path.status();
    report.cache_path = *path;
    report.meta = std::move(meta);
    report.seconds = seconds_since(start);
    return report;
}

}  // namespace slipway::data
