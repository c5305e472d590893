// Runs evaluation tasks (tasks.h) through a model seen only as ScoringModel: log-likelihoods of tokens and
// greedy continuations. The lm-eval request building (metrics.h) and the result JSON live here, without
// torch; eval/llama_scorer.h puts LlamaForCausalLM behind the interface.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/status.h"
#include "eval/tasks.h"

namespace slipway::tokenizer {
class Tokenizer;
}

namespace slipway::eval {

struct TokenScores {
    double logprob_sum = 0;  // sum of log p(ids[i] | ids[0..i)) over the scored tokens
    int64_t tokens = 0;      // scored tokens
    bool greedy = true;      // every scored token was the model's argmax
};

// What greedy generation is asked: the new tokens after `prompt`, at most max_new_tokens; an id of eos_ids
// ends it (and is not returned), and so does `stop` answering true for the new ids so far, or the model's
// context filling up.
struct GreedyRequest {
    std::vector<int32_t> prompt;
    int64_t max_new_tokens = 0;
    std::vector<int32_t> eos_ids;
    std::function<bool(const std::vector<int32_t>& new_ids)> stop;
};

class ScoringModel {
public:
    virtual ~ScoringModel() = default;
    // The longest input the model takes (max_position_embeddings).
    virtual int64_t max_length() const = 0;
    // The model's end-of-sequence ids (config.json eos_token_id).
    virtual std::vector<int32_t> eos_ids() const = 0;
    // Runs the model on ids[0 .. n-1) (n = ids.size() <= max_length() + 1) and scores ids[first .. n), each
    // given the ids before it; 1 <= first < n.
    virtual TokenScores score(const std::vector<int32_t>& ids, size_t first) = 0;
    virtual std::vector<int32_t> greedy(const GreedyRequest& request) = 0;
};

struct TaskResult {
    std::string name;
    TaskKind kind = TaskKind::kMultipleChoice;
    int64_t samples = 0;
    int64_t tokens = 0;  // perplexity: predicted tokens; generation: new tokens generated
    // In a stable order: acc, acc_norm | exact_match, prefix_match | perplexity, nll.
    std::vector<std::pair<std::string, double>> metrics;
};

// Receives one JSON object per sample (its task, index, line, log-likelihoods or generation) when set.
using SampleSink = std::function<void(const nlohmann::ordered_json&)>;

// Errors name the task, the data file and line (a prompt or choice too long for the model, a context that
// encodes to no tokens). Perplexity texts of any length are scored in rolling windows.
Result<TaskResult> run_eval_task(const EvalTask& task, const tokenizer::Tokenizer& tokenizer,
                                 ScoringModel& model, const SampleSink& sink = {});
Result<std::vector<TaskResult>> run_eval_tasks(const std::vector<EvalTask>& tasks,
                                               const tokenizer::Tokenizer& tokenizer, ScoringModel& model,
                                               const SampleSink& sink = {});

// {"tasks": [{"name", "kind", "samples", ["tokens",] "metrics": {...}}, ...]}
nlohmann::ordered_json results_json(const std::vector<TaskResult>& results);

}  // namespace slipway::eval
