// TaskEvaluator (task_eval.h): the eval runner on the training model, one eval_task line per metric.
#include <torch/torch.h>

#include "contract/mllog_keys.h"
#include "train/task_eval.h"

#include <iomanip>
#include <ostream>
#include <sstream>

#include "eval/llama_scorer.h"
#include "eval/runner.h"
#include "model/torch_compat.h"

namespace slipway::train {

Result<TaskEvaluator> TaskEvaluator::load(const RunConfig& config) {
    Result<std::vector<eval::EvalTask>> tasks = eval::load_eval_tasks(config.eval.tasks);
    if (!tasks.ok()) return Status::Error("/eval/tasks: " + tasks.error());
    // The run's tokenizer, as prepare finds it: /tokenizer/path, else the model folder's tokenizer.json.
    const std::string path =
        config.tokenizer.path.empty() ? config.model.path + "/tokenizer.json" : config.tokenizer.path;
    Result<tokenizer::Tokenizer> tokenizer = tokenizer::Tokenizer::from_file(path);
    if (!tokenizer.ok()) return tokenizer.status();
    return TaskEvaluator(std::move(*tasks), std::move(*tokenizer));
}

Status TaskEvaluator::run(model::LlamaForCausalLM& model, c10::Device device, bool bf16, MllogWriter& log,
                          const nlohmann::ordered_json& at, std::ostream& progress,
                          const eval::ShardedScoring& sharded) const {
    const bool was_training = model->is_training();
    model->eval();
    Result<std::vector<eval::TaskResult>> results = Status::Error("not run");
    {
        model::Bf16Autocast autocast(bf16, device.type());
        const std::unique_ptr<eval::ScoringModel> scorer = eval::make_llama_scorer(model, device, sharded);
        results = eval::run_eval_tasks(tasks_, tokenizer_, *scorer);
    }
    if (was_training) model->train();
    if (!results.ok()) return results.status();
    std::ostringstream line;
    line << "eval tasks:" << std::fixed << std::setprecision(4);
    for (const eval::TaskResult& r : *results) {
        line << " " << r.name;
        for (const auto& [metric, value] : r.metrics) {
            nlohmann::ordered_json metadata = at;
            metadata[mllog_field::kTask] = r.name;
            metadata[mllog_field::kMetric] = metric;
            log.point_in_time(mllog_key::kEvalTask, value, metadata);
            line << " " << metric << " " << value;
        }
        line << ";";
    }
    progress << line.str() << "\n";
    return Status::Ok();
}

}  // namespace slipway::train
