// Evaluation tasks during training (/eval/tasks): the task file and the run's tokenizer are read once by
// rank 0 at setup; at every evaluation rank 0 runs the tasks on its replica of the model (the other ranks
// wait for it outside any collective) and logs each metric as an MLLOG eval_task line.
#pragma once

#include <iosfwd>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/mllog.h"
#include "contract/run_config.h"
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
               const nlohmann::ordered_json& at, std::ostream& progress) const;

private:
    TaskEvaluator(std::vector<eval::EvalTask> tasks, tokenizer::Tokenizer tokenizer)
        : tasks_(std::move(tasks)), tokenizer_(std::move(tokenizer)) {}
    std::vector<eval::EvalTask> tasks_;
    tokenizer::Tokenizer tokenizer_;
};

}  // namespace slipway::train
