// The task-file parser (eval/tasks.h): what a good file gives, and that every kind of mistake names the
// file, the task and the field, or the data file, its line and the field.
#include "eval/tasks.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace slipway::eval {
namespace {

namespace fs = std::filesystem;

class TasksTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("slipway-eval-tasks-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        write("mc.jsonl",
              "{\"context\": \"Q\", \"choices\": [\"a\", \"b\"], \"gold\": 1}\n\n"
              "{\"context\": \"R\", \"choices\": [\"c\", \"d\", \"e\"], \"gold\": 0, \"id\": 7}\n");
        write("gen.jsonl", "{\"prompt\": \"copy: x\", \"target\": \"x\"}\n");
        write("ppl.jsonl", "{\"text\": \"one\"}\n{\"text\": \"two\"}\n{\"text\": \"three\"}\n");
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string write(const std::string& name, const std::string& text) {
        std::ofstream(dir_ / name) << text;
        return (dir_ / name).string();
    }
    // Parses a task file with these tasks (a JSON list's inside) and returns the error.
    std::string error_of(const std::string& tasks) {
        const std::string path = write("tasks.json", "{\"tasks\": [" + tasks + "]}");
        Result<std::vector<EvalTask>> r = load_eval_tasks(path);
        EXPECT_FALSE(r.ok()) << tasks;
        return r.ok() ? "" : r.error();
    }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }

    fs::path dir_;
};

TEST_F(TasksTest, ReadsEveryKindWithOptionsAndDefaults) {
    const std::string file = write("tasks.json", R"({"schema": "slipway.eval/1", "comment": "c", "tasks": [
        {"name": "mc", "kind": "multiple_choice", "data": "mc.jsonl", "target_delimiter": ""},
        {"name": "gen", "kind": "generation", "data": "gen.jsonl", "max_new_tokens": 5, "stop": ["\n"],
         "strip": false},
        {"name": "ppl", "kind": "perplexity", "data": "ppl.jsonl", "limit": 2, "add_bos_token": false}]})");
    Result<std::vector<EvalTask>> r = load_eval_tasks(file);
    ASSERT_TRUE(r.ok()) << r.error();
    ASSERT_EQ(r->size(), 3u);
    const EvalTask& mc = (*r)[0];
    EXPECT_EQ(mc.kind, TaskKind::kMultipleChoice);
    EXPECT_EQ(mc.data_path, path("mc.jsonl"));
    EXPECT_EQ(mc.target_delimiter, "");
    ASSERT_EQ(mc.choice_samples.size(), 2u);  // the blank line is skipped
    EXPECT_EQ(mc.choice_samples[1].choices.size(), 3u);
    EXPECT_EQ(mc.choice_samples[1].line, 3u);
    EXPECT_EQ(mc.choice_samples[0].gold, 1);
    const EvalTask& gen = (*r)[1];
    EXPECT_EQ(gen.max_new_tokens, 5);
    EXPECT_EQ(gen.stop, std::vector<std::string>{"\n"});
    EXPECT_FALSE(gen.strip);
    EXPECT_EQ(gen.generation_samples[0].target, "x");
    EXPECT_EQ((*r)[2].text_samples.size(), 2u);  // limit 2
    EXPECT_EQ((*r)[2].add_bos_token, std::optional<bool>(false));

    Result<std::vector<EvalTask>> capped = load_eval_tasks(file, 1);
    ASSERT_TRUE(capped.ok()) << capped.error();
    for (const EvalTask& t : *capped)
        EXPECT_EQ(t.sample_count(), 1u) << t.name;
    EXPECT_EQ((*capped)[1].max_new_tokens, 5);
}

TEST_F(TasksTest, DefaultsAreLmEvalsDelimiterAndStrippedComparison) {
    Result<std::vector<EvalTask>> r = load_eval_tasks(write("tasks.json", R"({"tasks": [
        {"name": "mc", "kind": "multiple_choice", "data": "mc.jsonl"},
        {"name": "gen", "kind": "generation", "data": "gen.jsonl"}]})"));
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ((*r)[0].target_delimiter, " ");
    EXPECT_EQ((*r)[1].max_new_tokens, 64);
    EXPECT_TRUE((*r)[1].stop.empty());
    EXPECT_TRUE((*r)[1].strip);
    EXPECT_FALSE((*r)[0].add_bos_token.has_value());  // the tokenizer decides, as lm-eval's HFLM by default
}

TEST_F(TasksTest, TaskFieldErrorsNameTheFileTheTaskAndTheField) {
    const std::string file = path("tasks.json");
    EXPECT_EQ(
        error_of(R"({"name": "a", "kind": "mc", "data": "mc.jsonl"})"),
        file +
            R"(: tasks[0] "a": field "kind": must be multiple_choice | generation | perplexity, got "mc")");
    EXPECT_EQ(error_of(R"({"name": "a", "kind": "perplexity"})"),
              file + R"(: tasks[0] "a": field "data": missing (a JSONL file, relative to the task file))");
    EXPECT_EQ(error_of(R"({"kind": "perplexity", "data": "ppl.jsonl"})"),
              file + R"(: tasks[0]: field "name": missing)");
    EXPECT_EQ(error_of(R"({"name": "a", "kind": "perplexity", "data": "ppl.jsonl"},
                          {"name": "a", "kind": "perplexity", "data": "ppl.jsonl"})"),
              file + R"(: tasks[1] "a": field "name": another task already has this name)");
    EXPECT_EQ(
        error_of(R"({"name": "g", "kind": "generation", "data": "gen.jsonl", "max_new_token": 3})"),
        file +
            R"(: tasks[0] "g": field "max_new_token": unknown for a generation task (did you mean "max_new_tokens"?))");
    EXPECT_EQ(error_of(R"({"name": "p", "kind": "perplexity", "data": "ppl.jsonl", "stop": ["\n"]})"),
              file + R"(: tasks[0] "p": field "stop": unknown for a perplexity task)");
    EXPECT_EQ(
        error_of(R"({"name": "g", "kind": "generation", "data": "gen.jsonl", "max_new_tokens": 0})"),
        file + R"(: tasks[0] "g": field "max_new_tokens": must be an integer from 1 to 1000000, got 0)");
    EXPECT_EQ(error_of(R"({"name": "g", "kind": "generation", "data": "gen.jsonl", "stop": ["", "x"]})"),
              file + R"(: tasks[0] "g": field "stop": entry 0 must be a non-empty string, got "")");
    EXPECT_EQ(
        error_of(R"({"name": "p", "kind": "perplexity", "data": "ppl.jsonl", "add_bos_token": "yes"})"),
        file +
            R"(: tasks[0] "p": field "add_bos_token": must be true, false or null (the tokenizer decides), got "yes")");
    EXPECT_EQ(error_of(R"({"name": "p", "kind": "perplexity", "data": "ppl.jsonl", "limit": 1.5})"),
              file + R"(: tasks[0] "p": field "limit": must be an integer >= 1 or null, got 1.5)");
    EXPECT_EQ(error_of(R"({"name": "p", "kind": "perplexity", "data": "/dev/zero"})"),
              R"(/dev/zero: the data file of task "p" is not a regular file)");
    EXPECT_EQ(error_of(R"({"name": "p", "kind": "perplexity", "data": "missing.jsonl"})"),
              path("missing.jsonl") + R"(: cannot open the data file of task "p")");
}

TEST_F(TasksTest, DocumentErrors) {
    const std::string file = path("tasks.json");
    auto error = [&](const std::string& text) {
        Result<std::vector<EvalTask>> r = load_eval_tasks(write("tasks.json", text));
        EXPECT_FALSE(r.ok()) << text;
        return r.ok() ? "" : r.error();
    };
    EXPECT_EQ(error(R"({"tasks": []})"), file + R"(: field "tasks": must be a non-empty list of tasks)");
    EXPECT_EQ(error(R"({"task": []})"), file + R"(: field "task": unknown (did you mean "tasks"?))");
    EXPECT_EQ(error(R"({"schema": "slipway.eval/2", "tasks": []})"),
              file + R"(: field "schema": must be "slipway.eval/1", got "slipway.eval/2")");
    EXPECT_EQ(error("{\"tasks\": [}").rfind(file + ": ", 0), 0u);  // invalid JSON names the file
    EXPECT_EQ(load_eval_tasks(path("none.json")).error(), path("none.json") + ": cannot open the task file");
}

TEST_F(TasksTest, DataErrorsNameTheFileTheLineTheTaskAndTheField) {
    auto error_with = [&](const std::string& kind, const std::string& lines) {
        write("data.jsonl", lines);
        return error_of(R"({"name": "t", "kind": ")" + kind + R"(", "data": "data.jsonl"})");
    };
    const std::string data = path("data.jsonl");
    EXPECT_EQ(error_with("multiple_choice",
                         "{\"context\": \"Q\", \"choices\": [\"a\", \"b\"], \"gold\": 0}\n"
                         "{\"context\": \"Q\", \"choices\": [\"a\", \"b\"], \"gold\": 2}\n"),
              data + R"(:2: task "t": field "gold": must be the index of the right choice (0 to 1), got 2)");
    EXPECT_EQ(error_with("multiple_choice", "{\"context\": \"Q\", \"choices\": [\"a\"], \"gold\": 0}\n"),
              data + R"(:1: task "t": field "choices": must be a list of at least 2 strings, got ["a"])");
    EXPECT_EQ(error_with("multiple_choice", "{\"context\": \"Q\", \"choices\": [\"a\", 3], \"gold\": 0}\n"),
              data + R"(:1: task "t": field "choices"[1]: must be a non-empty string, got 3)");
    EXPECT_EQ(
        error_with("multiple_choice", "{\"context\": \"\", \"choices\": [\"a\", \"b\"], \"gold\": 0}\n"),
        data + R"(:1: task "t": field "context": must not be empty)");
    EXPECT_EQ(error_with("generation", "{\"prompt\": \"p\"}\n"),
              data + R"(:1: task "t": missing field "target")");
    EXPECT_EQ(error_with("perplexity", "{\"text\": 5}\n"),
              data + R"(:1: task "t": field "text": must be a string, got 5)");
    EXPECT_EQ(error_with("perplexity", "[1]\n"), data + R"(:1: task "t": expected a JSON object, got [1])");
    EXPECT_EQ(error_with("perplexity", "\n\n"), data + R"(: task "t" has no samples)");
    const std::string bad_json = error_with("perplexity", "{\"text\": \"a\"}\n{\"text\": \n");
    EXPECT_EQ(bad_json.rfind(data + ":2: ", 0), 0u) << bad_json;
    EXPECT_NE(bad_json.find("task \"t\""), std::string::npos) << bad_json;
}

}  // namespace
}  // namespace slipway::eval
