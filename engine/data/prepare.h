// prepare_token_cache(): the data pipeline behind `slipway-engine prepare`. JSONL -> (dedup) -> tokens
// (+EOS) on a pool of threads, in input order -> blocks -> a token cache folder named by a hash of its
// inputs, reused when it already exists. The output is byte-identical for any thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"
#include "data/line_reader.h"
#include "data/token_cache_meta.h"

namespace slipway::data {

struct PrepareProgress {
    std::string file;  // being read
    uint64_t bytes_done = 0;
    uint64_t bytes_total = 0;  // all input files
    uint64_t documents = 0;    // good documents so far
    uint64_t tokens = 0;
    double seconds = 0;
};

struct PrepareOptions {
    int64_t threads = 0;         // > 0 overrides data.preprocessing_num_workers (where 0 means all cores)
    bool skip_bad = false;       // count bad lines instead of failing on the first
    std::string engine_version;  // recorded in meta.json
    std::function<void(const PrepareProgress&)> progress;  // at most every progress_interval_s
    double progress_interval_s = 0.25;
    size_t max_line_bytes = LineReader::kDefaultMaxLineBytes;
    size_t batch_documents = 1024;  // lines tokenized together (results are kept in input order)
    size_t batch_bytes = size_t{8} << 20;
    // Test seam: called after each batch has been written; an error aborts like a failed write would.
    std::function<Status(uint64_t batch)> after_batch;
};

struct PrepareReport {
    std::string cache_path;
    bool cache_hit = false;  // an existing complete cache was reused; nothing was read but the hashes
    CacheMeta meta;
    std::string eos_source;    // where the EOS id came from (empty on a cache hit)
    std::string format_found;  // data.format auto: what the train file's first line has, in words
    unsigned threads = 0;
    double seconds = 0;
    uint64_t bytes_read = 0;               // JSONL bytes tokenized
    size_t stale_temporaries_removed = 0;  // .tmp folders of killed runs
    std::vector<std::string> skipped;      // "FILE:LINE: why" of the first bad lines skipped
    std::vector<std::string> warnings;
};

inline constexpr size_t kMaxSkippedMessages = 20;

// A conversation cache in one line: how many were kept, the trained share of the tokens, and how many were
// truncated or dropped (for `prepare` and the training log).
std::string describe_conversations(const CacheMeta& meta);

// Validates the config (not that the model exists: only the tokenizer and data must), then builds the
// cache or reuses it. Errors name the file and line (bad input), the file (missing, unreadable,
// unwritable) or the config field; nothing complete-looking is left behind on an error.
Result<PrepareReport> prepare_token_cache(const RunConfig& config, const PrepareOptions& options = {});

}  // namespace slipway::data
