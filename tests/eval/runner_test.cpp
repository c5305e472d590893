// The task loops (eval/runner.h) over a fake model whose scores are known: which ids each request sends
// (lm-eval's left truncation), how results are averaged, and how generation stops and is cut.
#include "eval/runner.h"
#include "test_paths.h"

#include <cmath>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "tokenizer/tokenizer.h"

namespace slipway::eval {
namespace {

const tokenizer::Tokenizer& demo_tokenizer() {
    static const tokenizer::Tokenizer tok = [] {
        Result<tokenizer::Tokenizer> t =
            tokenizer::Tokenizer::from_file(test_paths::source_dir("/resources/demo/tokenizer.json"));
        EXPECT_TRUE(t.ok()) << t.error();
        return *t;
    }();
    return tok;
}

// Every scored token has log-probability -1 unless `favourite` is among the scored ids (then -0.5 each);
// greedy answers with `script`, one id per call of the loop, honouring eos and stop like a model would.
class FakeModel : public ScoringModel {
public:
    int64_t max_length() const override { return max_length_; }
    std::vector<int32_t> eos_ids() const override { return {eos_}; }
    TokenScores score(const std::vector<int32_t>& ids, size_t first) override {
        calls.push_back({ids, first});
        TokenScores s;
        s.tokens = static_cast<int64_t>(ids.size() - first);
        bool liked = false;
        for (size_t i = first; i < ids.size(); ++i)
            liked |= ids[i] == favourite;
        s.logprob_sum = static_cast<double>(s.tokens) * (liked ? -0.5 : -1.0);
        return s;
    }
    std::vector<int32_t> greedy(const GreedyRequest& request) override {
        prompts.push_back(request.prompt);
        std::vector<int32_t> out;
        for (int32_t id : script) {
            if (static_cast<int64_t>(out.size()) >= request.max_new_tokens || id == eos_) break;
            out.push_back(id);
            if (request.stop && request.stop(out)) break;
        }
        return out;
    }

    int64_t max_length_ = 1000;
    int32_t eos_ = 4094;
    int32_t favourite = -1;
    std::vector<int32_t> script;
    std::vector<std::pair<std::vector<int32_t>, size_t>> calls;
    std::vector<std::vector<int32_t>> prompts;  // of greedy
};

// The demo tokenizer's post-processor puts <|begin_of_text|> before every text: what a task encodes, unless
// it says add_bos_token false.
constexpr int32_t kBos = 4093;

std::vector<int32_t> ids_of(std::string_view text, bool add_special_tokens = true) {
    return demo_tokenizer().encode(text, add_special_tokens);
}

// The demo tokenizer without its post-processor: byte-level BPE, which adds no BOS and names none.
const tokenizer::Tokenizer& tokenizer_without_bos() {
    static const tokenizer::Tokenizer tok = [] {
        std::ifstream in(test_paths::source_dir("/resources/demo/tokenizer.json"));
        nlohmann::json doc = nlohmann::json::parse(in);
        doc["post_processor"] = nullptr;
        Result<tokenizer::Tokenizer> t = tokenizer::Tokenizer::from_json(doc);
        EXPECT_TRUE(t.ok()) << t.error();
        return *t;
    }();
    return tok;
}

TEST(RunnerTest, MultipleChoiceSendsContextPlusContinuationAndAveragesHits) {
    EvalTask task;
    task.name = "mc";
    task.kind = TaskKind::kMultipleChoice;
    task.choice_samples = {{1, "Dogs say", {"moo", "woof"}, 1}, {2, "Cats say", {"meow", "woof"}, 1}};
    FakeModel model;
    model.favourite = ids_of(" woof", false).back();
    Result<TaskResult> r = run_eval_task(task, demo_tokenizer(), model);
    ASSERT_TRUE(r.ok()) << r.error();
    ASSERT_EQ(model.calls.size(), 4u);
    const std::vector<int32_t> context = ids_of("Dogs say");
    std::vector<int32_t> whole = ids_of("Dogs say moo");
    ASSERT_EQ(whole.front(), kBos);
    EXPECT_EQ(model.calls[0].first, whole);
    EXPECT_EQ(model.calls[0].second, context.size());
    // "woof" is liked in both questions: right in both.
    EXPECT_EQ(r->samples, 2);
    ASSERT_EQ(r->metrics.size(), 2u);
    EXPECT_EQ(r->metrics[0], (std::pair<std::string, double>{"acc", 1.0}));
    EXPECT_EQ(r->metrics[1].first, "acc_norm");
}

TEST(RunnerTest, LongInputsKeepTheirLastMaxLengthPlusOneTokensAsLmEval) {
    EvalTask task;
    task.name = "mc";
    task.kind = TaskKind::kMultipleChoice;
    std::string context;
    for (int i = 0; i < 40; ++i)
        context += " word" + std::to_string(i);
    task.choice_samples = {{1, context, {"yes", "no"}, 0}};
    FakeModel model;
    model.max_length_ = 8;
    Result<TaskResult> r = run_eval_task(task, demo_tokenizer(), model);
    ASSERT_TRUE(r.ok()) << r.error();
    const std::vector<int32_t> whole = ids_of(context + " yes");
    const std::vector<int32_t> continuation = ids_of(" yes", false);
    ASSERT_EQ(model.calls[0].first.size(), 9u);
    EXPECT_TRUE(std::equal(model.calls[0].first.begin(), model.calls[0].first.end(), whole.end() - 9));
    EXPECT_EQ(model.calls[0].second, 9 - continuation.size());
}

TEST(RunnerTest, GenerationStopsAtTheStopStringAndCutsIt) {
    EvalTask task;
    task.name = "copy";
    task.kind = TaskKind::kGeneration;
    task.stop = {"\n"};
    task.generation_samples = {{1, "Copy: abc", "abc"}, {2, "Copy: abd", "ab"}, {3, "Copy: x", "x"}};
    FakeModel model;
    model.script = ids_of(" abc\nmore text", false);
    std::vector<nlohmann::ordered_json> details;
    Result<TaskResult> r = run_eval_task(task, demo_tokenizer(), model,
                                         [&](const nlohmann::ordered_json& d) { details.push_back(d); });
    ASSERT_TRUE(r.ok()) << r.error();
    ASSERT_EQ(details.size(), 3u);
    EXPECT_EQ(details[0]["generated"], " abc");  // cut at "\n"; stripped only for the comparison
    // The loop stopped at the token that completed the stop string, not at the end of the script.
    EXPECT_LT(details[0]["new_ids"].size(), model.script.size());
    EXPECT_EQ(r->metrics[0], (std::pair<std::string, double>{"exact_match", 1.0 / 3}));
    EXPECT_EQ(r->metrics[1], (std::pair<std::string, double>{"prefix_match", 2.0 / 3}));
}

TEST(RunnerTest, GenerationEndsAtEos) {
    EvalTask task;
    task.name = "copy";
    task.kind = TaskKind::kGeneration;
    task.generation_samples = {{1, "Copy: abc", "abc"}};
    FakeModel model;
    model.script = ids_of("abc", false);
    model.script.push_back(4094);
    model.script.push_back(ids_of("zzz", false)[0]);
    Result<TaskResult> r = run_eval_task(task, demo_tokenizer(), model);
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->metrics[0].second, 1.0);
    EXPECT_EQ(r->tokens, static_cast<int64_t>(ids_of("abc", false).size()));
    EXPECT_EQ(model.calls.size(), 0u);
}

// As lm-eval's loglikelihood_rolling: every token the text encodes to (its BOS too, as the tokenizer adds it)
// is predicted, the first from the BOS prefix token.
TEST(RunnerTest, PerplexityPredictsEveryTokenTheFirstFromTheBos) {
    EvalTask task;
    task.name = "ppl";
    task.kind = TaskKind::kPerplexity;
    task.text_samples = {{1, "Hello there, world."}, {2, "Привет, мир."}};
    FakeModel model;
    Result<TaskResult> r = run_eval_task(task, demo_tokenizer(), model);
    ASSERT_TRUE(r.ok()) << r.error();
    const auto expected =
        static_cast<int64_t>(ids_of("Hello there, world.").size() + ids_of("Привет, мир.").size());
    EXPECT_EQ(r->tokens, expected);
    std::vector<int32_t> first = ids_of("Hello there, world.");
    first.insert(first.begin(), kBos);
    ASSERT_EQ(model.calls.size(), 2u);
    EXPECT_EQ(model.calls[0].first, first);
    EXPECT_EQ(model.calls[0].second, 1u);
    EXPECT_DOUBLE_EQ(r->metrics[0].second, std::exp(1.0));  // every token -1: mean NLL 1
    EXPECT_DOUBLE_EQ(r->metrics[1].second, 1.0);
    const nlohmann::ordered_json json = results_json({*r});
    EXPECT_EQ(json["tasks"][0]["tokens"], expected);
    EXPECT_EQ(json["tasks"][0]["kind"], "perplexity");
}

// A text longer than the model: rolling windows as lm-eval's get_rolling_token_windows(context_len=1), every
// token after the first predicted once, each window seeing as much before it as fits.
TEST(RunnerTest, LongTextsAreScoredInRollingWindows) {
    EvalTask task;
    task.name = "ppl";
    task.kind = TaskKind::kPerplexity;
    std::string text;
    for (int i = 0; i < 10; ++i)
        text += " w" + std::to_string(i);
    task.text_samples = {{1, text}};
    std::vector<int32_t> ids = ids_of(text);  // the prefix token, then the text's with its BOS
    ids.insert(ids.begin(), kBos);
    ASSERT_GE(ids.size(), 10u);
    FakeModel model;
    model.max_length_ = 4;
    Result<TaskResult> r = run_eval_task(task, demo_tokenizer(), model);
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->tokens, static_cast<int64_t>(ids.size() - 1));
    size_t predicted = 1;
    for (const auto& [window, first] : model.calls) {
        EXPECT_LE(window.size(), 5u);
        // The window ends where its predictions end and starts max_length + 1 tokens earlier (or at 0).
        const size_t end = predicted + (window.size() - first);
        EXPECT_EQ(window, std::vector<int32_t>(ids.begin() + static_cast<std::ptrdiff_t>(end - window.size()),
                                               ids.begin() + static_cast<std::ptrdiff_t>(end)));
        EXPECT_TRUE(first == 1 || window.size() == 5u) << first;
        predicted = end;
    }
    EXPECT_EQ(predicted, ids.size());
    EXPECT_EQ(model.calls.size(), (ids.size() - 1 + 3) / 4);
}

// One multiple-choice question with the task's add_bos_token set.
EvalTask dogs_say(bool add_bos_token) {
    EvalTask task;
    task.name = "mc";
    task.kind = TaskKind::kMultipleChoice;
    task.add_bos_token = add_bos_token;
    task.choice_samples = {{1, "Dogs say", {"moo", "woof"}, 1}};
    return task;
}

TEST(RunnerTest, AddBosTokenFalseEncodesWithoutSpecialTokensAsLmEvalsHflmArgument) {
    const EvalTask task = dogs_say(false);
    FakeModel model;
    Result<TaskResult> r = run_eval_task(task, demo_tokenizer(), model);
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(model.calls[0].first, ids_of("Dogs say moo", false));
    EXPECT_EQ(model.calls[0].second, ids_of("Dogs say", false).size());
}

// lm-eval's has_bos_prefix: a text written with its BOS does not get a second one.
TEST(RunnerTest, ATextThatStartsWithTheBosTextGetsNoSecondBos) {
    EvalTask task;
    task.name = "copy";
    task.kind = TaskKind::kGeneration;
    task.generation_samples = {{1, "<|begin_of_text|>Copy: abc", "abc"}, {2, "Copy: abc", "abc"}};
    FakeModel model;
    model.script = ids_of(" abc", false);
    Result<TaskResult> r = run_eval_task(task, demo_tokenizer(), model);
    ASSERT_TRUE(r.ok()) << r.error();
    ASSERT_EQ(model.prompts.size(), 2u);
    EXPECT_EQ(model.prompts[0], ids_of("Copy: abc"));
    EXPECT_EQ(model.prompts[1], ids_of("Copy: abc"));
    EXPECT_EQ(model.prompts[0].front(), kBos);
    EXPECT_NE(model.prompts[0][1], kBos);
}

TEST(RunnerTest, AddBosTokenTrueAddsItWhereTheTokenizerAddsNoneAndNeedsOne) {
    const EvalTask task = dogs_say(true);
    FakeModel model;
    Result<TaskResult> r = run_eval_task(task, demo_tokenizer(), model);
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(model.calls[0].first, ids_of("Dogs say moo"));
    r = run_eval_task(task, tokenizer_without_bos(), model);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("task \"mc\": add_bos_token is true but the tokenizer has no BOS token"),
              std::string::npos)
        << r.error();
}

// Without a BOS anywhere, lm-eval's prefix token is the EOS: here the model's, as the tokenizer names none.
TEST(RunnerTest, WithoutABosPerplexityPredictsTheFirstTokenFromTheEos) {
    EvalTask task;
    task.name = "ppl";
    task.kind = TaskKind::kPerplexity;
    task.text_samples = {{1, "Hello there, world."}};
    FakeModel model;
    Result<TaskResult> r = run_eval_task(task, tokenizer_without_bos(), model);
    ASSERT_TRUE(r.ok()) << r.error();
    std::vector<int32_t> expected = ids_of("Hello there, world.", false);
    expected.insert(expected.begin(), 4094);
    ASSERT_EQ(model.calls.size(), 1u);
    EXPECT_EQ(model.calls[0].first, expected);
    EXPECT_EQ(r->tokens, static_cast<int64_t>(expected.size() - 1));
}

TEST(RunnerTest, TooLongPromptsAreErrorsNamingTheLine) {
    EvalTask task;
    task.name = "copy";
    task.kind = TaskKind::kGeneration;
    task.data_path = "copy.jsonl";
    task.generation_samples = {{1, "short", "s"},
                               {4, "a much longer prompt than the model can take in at once", "a"}};
    FakeModel model;
    model.max_length_ = 4;
    model.script = ids_of("s");
    Result<TaskResult> r = run_eval_task(task, demo_tokenizer(), model);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().rfind("copy.jsonl:4: task \"copy\": the prompt has ", 0), 0u) << r.error();
}

}  // namespace
}  // namespace slipway::eval
