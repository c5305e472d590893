// The task loops of runner.h: one request per choice, generation or text, then the means.
#include "eval/runner.h"

#include <algorithm>

#include "eval/metrics.h"
#include "tokenizer/tokenizer.h"

namespace slipway::eval {
namespace {

using ojson = nlohmann::ordered_json;

std::string where(const EvalTask& task, size_t line) {
    return task.data_path + ":" + std::to_string(line) + ": task \"" + task.name + "\": ";
}

// A task's texts as ids, as lm-eval's HFLM.tok_encode makes them: the special tokens the tokenizer itself
// adds (special_tokens.h) unless the task's add_bos_token says otherwise, and none for a text that already
// starts with the BOS token's text (lm-eval's has_bos_prefix), so that a prompt written with its BOS gets
// one.
class TaskEncoder {
public:
    static Result<TaskEncoder> make(const EvalTask& task, const tokenizer::Tokenizer& tokenizer) {
        const tokenizer::SpecialTokens& special = tokenizer.special_tokens();
        TaskEncoder e(tokenizer);
        if (special.bos_id) e.bos_text_ = tokenizer.id_to_token(*special.bos_id).value_or("");
        if (!task.add_bos_token) {
            e.prefix_ = special.prefix;
            e.suffix_ = special.suffix;
        } else if (*task.add_bos_token) {
            if (!special.bos_id)
                return Status::Error("task \"" + task.name +
                                     "\": add_bos_token is true but the tokenizer has no BOS token "
                                     "(no bos_token in tokenizer_config.json, none in its post_processor)");
            e.prefix_ = {*special.bos_id};
            e.suffix_ = special.suffix;
        }
        return e;
    }

    std::vector<int32_t> operator()(std::string_view text) const {
        const bool has_bos_text = !bos_text_.empty() && text.substr(0, bos_text_.size()) == bos_text_;
        if (has_bos_text || (prefix_.empty() && suffix_.empty()))
            return tokenizer_->encode(text, /*add_special_tokens=*/false);
        std::vector<int32_t> ids = prefix_;
        const std::vector<int32_t> own = tokenizer_->encode(text, /*add_special_tokens=*/false);
        ids.insert(ids.end(), own.begin(), own.end());
        ids.insert(ids.end(), suffix_.begin(), suffix_.end());
        return ids;
    }

private:
    explicit TaskEncoder(const tokenizer::Tokenizer& tokenizer) : tokenizer_(&tokenizer) {}
    const tokenizer::Tokenizer* tokenizer_;
    std::vector<int32_t> prefix_, suffix_;
    std::string bos_text_;
};

// The token a text's first token is predicted from (lm-eval's prefix_token_id): the tokenizer's BOS, else its
// EOS, else the model's.
Result<int32_t> prefix_token(const EvalTask& task, const tokenizer::Tokenizer& tokenizer,
                             const ScoringModel& model) {
    const tokenizer::SpecialTokens& special = tokenizer.special_tokens();
    if (special.bos_id) return *special.bos_id;
    if (special.eos_id) return *special.eos_id;
    if (!model.eos_ids().empty()) return static_cast<int32_t>(model.eos_ids().front());
    return Status::Error(task.data_path + ": task \"" + task.name +
                         "\": a perplexity task needs a BOS or EOS token to predict a text's first token "
                         "from, and neither the tokenizer nor the model's config.json names one");
}

// lm-eval's _loglikelihood_tokens: the last max_length + 1 tokens of context + continuation, the model run on
// all but the last, the continuation's tokens scored.
Result<TokenScores> score_pair(const EncodedPair& pair, ScoringModel& model, const std::string& at) {
    if (pair.context.empty()) return Result<TokenScores>::Error(at + "the context encodes to no tokens");
    if (pair.continuation.empty()) return Result<TokenScores>::Error(at + "a choice encodes to no tokens");
    const auto limit = static_cast<size_t>(model.max_length()) + 1;
    if (pair.continuation.size() >= limit)
        return Result<TokenScores>::Error(at + "a choice has " + std::to_string(pair.continuation.size()) +
                                          " tokens: more than the model's " +
                                          std::to_string(model.max_length()) + " positions");
    std::vector<int32_t> ids = pair.context;
    ids.insert(ids.end(), pair.continuation.begin(), pair.continuation.end());
    if (ids.size() > limit) ids.erase(ids.begin(), ids.end() - static_cast<std::ptrdiff_t>(limit));
    return model.score(ids, ids.size() - pair.continuation.size());
}

Result<TaskResult> run_choices(const EvalTask& task, const tokenizer::Tokenizer& tokenizer,
                               ScoringModel& model, const SampleSink& sink) {
    TaskResult r;
    int64_t acc = 0, acc_norm = 0;
    Result<TaskEncoder> encoder = TaskEncoder::make(task, tokenizer);
    if (!encoder.ok()) return encoder.status();
    const Encode enc = [&encoder](std::string_view text) { return (*encoder)(text); };
    for (size_t i = 0; i < task.choice_samples.size(); ++i) {
        const ChoiceSample& s = task.choice_samples[i];
        std::vector<double> lls;
        ojson greedy = ojson::array();
        for (const std::string& choice : s.choices) {
            const EncodedPair pair = encode_pair(enc, s.context, task.target_delimiter + choice);
            Result<TokenScores> scored = score_pair(pair, model, where(task, s.line));
            if (!scored.ok()) return scored.status();
            lls.push_back(scored->logprob_sum);
            greedy.push_back(scored->greedy);
        }
        const ChoicePick pick = pick_choice(lls, s.choices);
        acc += static_cast<int64_t>(pick.pred) == s.gold;
        acc_norm += static_cast<int64_t>(pick.pred_norm) == s.gold;
        if (sink) {
            sink(ojson{{"task", task.name},
                       {"index", i},
                       {"line", s.line},
                       {"loglikelihoods", lls},
                       {"is_greedy", greedy},
                       {"gold", s.gold},
                       {"pred", pick.pred},
                       {"pred_norm", pick.pred_norm}});
        }
    }
    const auto n = static_cast<double>(task.choice_samples.size());
    r.metrics = {{"acc", static_cast<double>(acc) / n}, {"acc_norm", static_cast<double>(acc_norm) / n}};
    return r;
}

Result<TaskResult> run_generation(const EvalTask& task, const tokenizer::Tokenizer& tokenizer,
                                  ScoringModel& model, const SampleSink& sink) {
    TaskResult r;
    int64_t exact = 0, prefix = 0;
    Result<TaskEncoder> encoder = TaskEncoder::make(task, tokenizer);
    if (!encoder.ok()) return encoder.status();
    for (size_t i = 0; i < task.generation_samples.size(); ++i) {
        const GenerationSample& s = task.generation_samples[i];
        GreedyRequest request;
        request.prompt = (*encoder)(s.prompt);
        if (request.prompt.empty())
            return Status::Error(where(task, s.line) + "the prompt encodes to no tokens");
        if (static_cast<int64_t>(request.prompt.size()) >= model.max_length())
            return Status::Error(
                where(task, s.line) + "the prompt has " + std::to_string(request.prompt.size()) +
                " tokens: no room left in the model's " + std::to_string(model.max_length()) + " positions");
        request.max_new_tokens = task.max_new_tokens;
        request.eos_ids = model.eos_ids();
        std::string decode_error;
        auto text_of = [&tokenizer, &decode_error](const std::vector<int32_t>& ids) {
            Result<std::string> text = tokenizer.decode(ids, /*skip_special_tokens=*/true);
            if (!text.ok()) decode_error = text.error();
            return text.ok() ? *text : std::string();
        };
        if (!task.stop.empty()) {
            request.stop = [&task, &text_of](const std::vector<int32_t>& ids) {
                return first_stop(text_of(ids), task.stop) != std::string::npos;
            };
        }
        const std::vector<int32_t> new_ids = model.greedy(request);
        std::string text = text_of(new_ids);
        if (!decode_error.empty()) return Status::Error(where(task, s.line) + decode_error);
        if (const size_t stop = first_stop(text, task.stop); stop != std::string::npos) text.resize(stop);
        const GenerationScore score = score_generation(text, s.target, task.strip);
        exact += score.exact_match;
        prefix += score.prefix_match;
        r.tokens += static_cast<int64_t>(new_ids.size());
        if (sink) {
            sink(ojson{{"task", task.name},
                       {"index", i},
                       {"line", s.line},
                       {"generated", text},
                       {"new_ids", new_ids},
                       {"exact_match", score.exact_match},
                       {"prefix_match", score.prefix_match}});
        }
    }
    const auto n = static_cast<double>(task.generation_samples.size());
    r.metrics = {{"exact_match", static_cast<double>(exact) / n},
                 {"prefix_match", static_cast<double>(prefix) / n}};
    return r;
}

// Token-level, as lm-eval's loglikelihood_rolling: each text is encoded as the task's other texts are and
// every one of its tokens is predicted, the first from the prefix token, each later one given the tokens
// before it in that text; texts do not see each other. A text longer than the model is scored in rolling
// windows as lm-eval's get_rolling_token_windows (context_len 1) makes them: each window predicts the next up
// to max_length tokens, seeing as many tokens before them as fit; every token is predicted exactly once.
Result<TaskResult> run_perplexity(const EvalTask& task, const tokenizer::Tokenizer& tokenizer,
                                  ScoringModel& model, const SampleSink& sink) {
    TaskResult r;
    PerplexitySums sums;
    const auto positions = static_cast<size_t>(model.max_length());
    Result<TaskEncoder> encoder = TaskEncoder::make(task, tokenizer);
    if (!encoder.ok()) return encoder.status();
    Result<int32_t> prefix = prefix_token(task, tokenizer, model);
    if (!prefix.ok()) return prefix.status();
    for (size_t i = 0; i < task.text_samples.size(); ++i) {
        const TextSample& s = task.text_samples[i];
        std::vector<int32_t> ids = (*encoder)(s.text);  // [T + 1]: the prefix token, then the text's
        ids.insert(ids.begin(), *prefix);
        double nll = 0;
        int64_t tokens = 0, windows = 0;
        for (size_t predicted = 1; predicted < ids.size(); ++windows) {
            const size_t count = std::min(ids.size() - predicted, positions);
            const size_t end = predicted + count;
            const size_t begin = end > positions + 1 ? end - (positions + 1) : 0;
            const std::vector<int32_t> window(ids.begin() + static_cast<std::ptrdiff_t>(begin),
                                              ids.begin() + static_cast<std::ptrdiff_t>(end));
            const TokenScores scored = model.score(window, window.size() - count);
            nll -= scored.logprob_sum;
            tokens += scored.tokens;
            predicted = end;
        }
        if (tokens == 0) continue;  // the text encodes to no tokens
        sums.nll_sum += nll;
        sums.tokens += tokens;
        if (sink)
            sink(ojson{{"task", task.name},
                       {"index", i},
                       {"line", s.line},
                       {"nll_sum", nll},
                       {"tokens", tokens},
                       {"windows", windows}});
    }
    if (sums.tokens == 0)
        return Status::Error(task.data_path + ": task \"" + task.name +
                             "\": every text encodes to no tokens");
    r.tokens = sums.tokens;
    r.metrics = {{"perplexity", sums.perplexity()}, {"nll", sums.mean_nll()}};
    return r;
}

}  // namespace

Result<TaskResult> run_eval_task(const EvalTask& task, const tokenizer::Tokenizer& tokenizer,
                                 ScoringModel& model, const SampleSink& sink) {
    Result<TaskResult> r = Status::Error("unknown task kind");
    switch (task.kind) {
        case TaskKind::kMultipleChoice:
            r = run_choices(task, tokenizer, model, sink);
            break;
        case TaskKind::kGeneration:
            r = run_generation(task, tokenizer, model, sink);
            break;
        case TaskKind::kPerplexity:
            r = run_perplexity(task, tokenizer, model, sink);
            break;
    }
    if (!r.ok()) return r;
    r->name = task.name;
    r->kind = task.kind;
    r->samples = static_cast<int64_t>(task.sample_count());
    return r;
}

Result<std::vector<TaskResult>> run_eval_tasks(const std::vector<EvalTask>& tasks,
                                               const tokenizer::Tokenizer& tokenizer, ScoringModel& model,
                                               const SampleSink& sink) {
    std::vector<TaskResult> results;
    for (const EvalTask& task : tasks) {
        Result<TaskResult> r = run_eval_task(task, tokenizer, model, sink);
        if (!r.ok()) return r.status();
        results.push_back(std::move(*r));
    }
    return results;
}

nlohmann::ordered_json results_json(const std::vector<TaskResult>& results) {
    ojson tasks = ojson::array();
    for (const TaskResult& r : results) {
        ojson metrics = ojson::object();
        for (const auto& [name, value] : r.metrics)
            metrics[name] = value;
        ojson task = {{"name", r.name}, {"kind", task_kind_name(r.kind)}, {"samples", r.samples}};
        if (r.kind == TaskKind::kPerplexity) task["tokens"] = r.tokens;
        if (r.kind == TaskKind::kGeneration) task["new_tokens"] = r.tokens;
        task["metrics"] = std::move(metrics);
        tasks.push_back(std::move(task));
    }
    return ojson{{"tasks", std::move(tasks)}};
}

}  // namespace slipway::eval
