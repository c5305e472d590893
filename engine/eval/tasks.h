// Evaluation task files (`slipway-engine eval --tasks`, /eval/tasks of a run config): a JSON document listing
// tasks, each a JSONL data file of samples. Parsing and checking only, no model and no torch; the format is
// documented in engine/eval/README.md. Errors name the task file, the task and the field, or the data file,
// its line and the field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contract/status.h"

namespace slipway::eval {

inline constexpr const char* kEvalTasksSchema = "slipway.eval/1";

enum class TaskKind { kMultipleChoice, kGeneration, kPerplexity };
const char* task_kind_name(TaskKind kind);  // "multiple_choice", "generation", "perplexity"

// One multiple-choice question: the model's log-likelihood of each choice after the context decides.
struct ChoiceSample {
    size_t line = 0;  // in the data file, 1-based
    std::string context;
    std::vector<std::string> choices;
    int64_t gold = 0;
};

// One generation: the model continues the prompt greedily; the result is compared with the target.
struct GenerationSample {
    size_t line = 0;
    std::string prompt;
    std::string target;
};

// One text of a perplexity set.
struct TextSample {
    size_t line = 0;
    std::string text;
};

struct EvalTask {
    std::string name;
    TaskKind kind = TaskKind::kMultipleChoice;
    std::string data_path;         // as resolved: relative paths are relative to the task file's folder
    std::optional<int64_t> limit;  // the first N samples only
    // lm-eval's HFLM add_bos_token: unset, the tokenizer's own special tokens (special_tokens.h) go around
    // every text; false, none; true, its BOS before every text even where the tokenizer adds none.
    std::optional<bool> add_bos_token;
    // multiple_choice: put between the context and each choice (lm-eval's target_delimiter).
    std::string target_delimiter = " ";
    // generation: at most this many new tokens; generation also ends at an end-of-sequence token or at the
    // first stop string, which is cut off with everything after it.
    int64_t max_new_tokens = 64;
    std::vector<std::string> stop;
    bool strip = true;  // generation: compare with surrounding whitespace removed from both sides

    std::vector<ChoiceSample> choice_samples;
    std::vector<GenerationSample> generation_samples;
    std::vector<TextSample> text_samples;

    size_t sample_count() const;
};

// Reads a task file and every data file it names. `limit` (when set) caps every task's samples, on top of
// the task's own limit.
Result<std::vector<EvalTask>> load_eval_tasks(const std::string& path, std::optional<int64_t> limit = {});

// The same from text already read; `path` names the document in errors and anchors relative data paths.
Result<std::vector<EvalTask>> parse_eval_tasks(const std::string& text, const std::string& path,
                                               std::optional<int64_t> limit = {});

}  // namespace slipway::eval
