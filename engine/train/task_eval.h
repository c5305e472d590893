// Evaluation tasks during training (/eval/tasks): the task file and the run's tokenizer are read once at
// setup; at every evaluation the tasks run on the model and each metric is logged as an MLLOG eval_task
// line. Replicated (DDP), rank 0 runs them on its replica (the other ranks wait outside any collective);
// sharded, every rank runs them together, each unit gathered as the forward reaches it (llama_scorer.h).
#pragma once

#include <iosfwd>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/mllog.h"
#include "contract/run_config.h"
#include "eval/llama_scorer.h"
#include "eval/tasks.h"
#include "model/llama.h"
#include "tokenizer/tokenizer.h"

namespace slipway::train {

class TaskEvaluator {
public:
    // Errors name the task file (and task, field or line) or the tokenizer.
    static Result<TaskEvaluator> load(const RunConfig& config);

    // Runs every task on `model` (put in eval mode for the time, with bf16 autocast when `bf16`) and logs
    // eval_task lines with metadata {"task", "metric"} and `at` (samples_count, step_num). A failing task (a
    // sample too long for the model) is an error; the caller decides whether training goes on.
    Status run(model::LlamaForCausalLM& model, c10::Device device, bool bf16, MllogWriter& log,
               const nlohmann::ordered_json& at, std::ostream& progress,
               const eval::ShardedScoring& sharded = {}) const;

private:
    TaskEvaluator(std::vector<eval::EvalTask> tasks, tokenizer::Tokenizer tokenizer)
        : tasks_(std::move(tasks)), tokenizer_(std::move(tokenizer)) {}
    std::vector<eval::EvalTask> tasks_;
    tokenizer::Tokenizer tokenizer_;
};

}  // namespace slipway::train
