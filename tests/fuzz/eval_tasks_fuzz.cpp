// Fuzz harness: evaluation task files as users write them (engine/eval/README.md) and their JSONL data, then
// the task loops over a fake model with the demo tokenizer: what they send the model stays within its
// positions, and every error names the file it is about. Input: the task file's bytes, "\n----\n", the bytes
// of data.jsonl (next to it, so "data": "data.jsonl" finds it).
#include <string>
#include <vector>

#include "eval/runner.h"
#include "eval/tasks.h"
#include "fuzz_common.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"

using namespace slipway;

namespace {

// 16 positions; every scored token has log-probability -1; greedy answers "ab\ncd" token by token.
class FakeModel : public eval::ScoringModel {
public:
    explicit FakeModel(std::vector<int32_t> script) : script_(std::move(script)) {}
    int64_t max_length() const override { return 16; }
    std::vector<int32_t> eos_ids() const override { return {4094}; }
    eval::TokenScores score(const std::vector<int32_t>& ids, size_t first) override {
        FUZZ_CHECK(first >= 1 && first < ids.size() && ids.size() <= 17,
                   "score(" + std::to_string(ids.size()) + " ids, first " + std::to_string(first) + ")");
        return {-static_cast<double>(ids.size() - first), static_cast<int64_t>(ids.size() - first), false};
    }
    std::vector<int32_t> greedy(const eval::GreedyRequest& request) override {
        FUZZ_CHECK(!request.prompt.empty() && request.prompt.size() < 16,
                   std::to_string(request.prompt.size()));
        std::vector<int32_t> out;
        for (int32_t id : script_) {
            if (static_cast<int64_t>(out.size()) >= request.max_new_tokens) break;
            out.push_back(id);
            if (request.stop && request.stop(out)) break;
        }
        return out;
    }

private:
    std::vector<int32_t> script_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const tokenizer::Tokenizer tok = [] {
        Result<tokenizer::Tokenizer> t =
            tokenizer::Tokenizer::from_file(test_paths::source_dir("/resources/demo/tokenizer.json"));
        FUZZ_CHECK(t.ok(), t.error());
        return *t;
    }();
    const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 2);
    const std::string path = fuzz::write_scratch("tasks.json", parts[0]);
    const std::string data_path = fuzz::write_scratch("data.jsonl", parts.size() > 1 ? parts[1] : "");
    Result<std::vector<eval::EvalTask>> tasks = eval::load_eval_tasks(path, 8);
    if (!tasks.ok()) {
        // The task file, or the data file a task names (which may be any path the file gave).
        FUZZ_CHECK(fuzz::names(tasks.error(), path) || fuzz::names(tasks.error(), ".") ||
                       fuzz::names(tasks.error(), "/"),
                   tasks.error());
        return 0;
    }
    for (eval::EvalTask& task : *tasks)
        task.max_new_tokens = std::min<int64_t>(task.max_new_tokens, 8);
    FakeModel model(tok.encode("ab\ncd"));
    Result<std::vector<eval::TaskResult>> results = eval::run_eval_tasks(*tasks, tok, model);
    if (!results.ok()) {
        FUZZ_CHECK(fuzz::names(results.error(), "task \""), results.error());
        return 0;
    }
    (void)eval::results_json(*results).dump();
    return 0;
}
