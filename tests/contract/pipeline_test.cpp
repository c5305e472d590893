// Pipeline files: parsing, references (unknown, forward, self), step fields, and the engine command lines a
// step resolves to; the demo and seed presets parse.
#include "contract/pipeline.h"
#include "test_paths.h"

#include <gtest/gtest.h>

namespace slipway {
namespace {

using json = nlohmann::json;

json minimal() {
    return json::parse(R"({
      "schema": "slipway.pipeline/1", "name": "p",
      "vars": {"corpus": "/data/ru.jsonl", "work": "${run}/w"},
      "steps": [
        {"name": "tok", "kind": "tokenizer", "corpus": "${vars.corpus}", "vocab_size": 3000, "out": "${vars.work}/tok.json"},
        {"name": "adapt", "kind": "adapt-vocab", "model": "/m/base", "old_tokenizer": "/m/base/tokenizer.json",
         "new_tokenizer": "${steps.tok.out}", "out": "adapted"},
        {"name": "emb", "kind": "train", "config": {
          "schema": "slipway.run/1", "name": "emb",
          "model": {"path": "${steps.adapt.out}"},
          "data": {"train_file": "${vars.corpus}", "block_size": 128},
          "training": {"learning_rate": 1e-3, "max_steps": 5, "output_dir": "${run}/emb"},
          "adapter": {"method": "embeddings"},
          "slurm": {"nodes": 1, "gpus_per_node": 0, "time": "00:10:00"}}},
        {"name": "lep", "kind": "lep", "base": "/m/base", "instruct": "/m/instruct", "adapted": "${steps.emb.out}",
         "method": "swap", "out": "${run}/lep"},
        {"name": "eval", "kind": "eval", "model": "${steps.lep.out}", "tasks": "/t.json", "out": "eval.json"}
      ]})");
}

std::vector<std::string> pointers(const ConfigProblems& problems) {
    std::vector<std::string> out;
    for (const ConfigProblem& p : problems)
        out.push_back(p.pointer);
    return out;
}

bool mentions(const ConfigProblems& problems, const std::string& pointer, const std::string& part) {
    for (const ConfigProblem& p : problems)
        if (p.pointer == pointer && p.message.find(part) != std::string::npos) return true;
    return false;
}

TEST(Pipeline, ParsesAndRecordsWhatEachStepUses) {
    ParsedPipeline parsed = parse_pipeline(minimal(), "");
    ASSERT_TRUE(parsed.problems.empty()) << format_problems(parsed.problems);
    const Pipeline& p = parsed.pipeline;
    ASSERT_EQ(p.steps.size(), 5u);
    EXPECT_EQ(p.steps[1].uses, std::vector<std::string>{"tok"});
    EXPECT_EQ(p.steps[3].uses, std::vector<std::string>{"emb"});
    EXPECT_TRUE(p.steps[2].is_training());
    EXPECT_TRUE(is_pipeline_document(minimal()));
}

TEST(Pipeline, ResolvesStepsToEngineCommands) {
    const Pipeline p = parse_pipeline(minimal(), "").pipeline;
    StepContext c;
    c.run_dir = "/runs/p1";
    Result<ResolvedStep> tok = resolve_step(p, 0, c);
    ASSERT_TRUE(tok.ok()) << tok.error();
    EXPECT_EQ(tok->engine_args,
              (std::vector<std::string>{"tokenizer", "train", "--corpus", "/data/ru.jsonl", "--vocab-size",
                                        "3000", "--out", "/runs/p1/w/tok.json"}));
    EXPECT_EQ(tok->out, "/runs/p1/w/tok.json");
    c.outs["tok"] = tok->out;
    Result<ResolvedStep> adapt = resolve_step(p, 1, c);
    ASSERT_TRUE(adapt.ok()) << adapt.error();
    EXPECT_EQ(adapt->out, "/runs/p1/adapted");  // a relative out is inside the run folder
    EXPECT_EQ(adapt->engine_args[6], "/runs/p1/w/tok.json");
    c.outs["adapt"] = adapt->out;
    Result<ResolvedStep> emb = resolve_step(p, 2, c);
    ASSERT_TRUE(emb.ok()) << emb.error();
    ASSERT_TRUE(emb->config.has_value());
    EXPECT_EQ(emb->config->model.path, "/runs/p1/adapted");
    EXPECT_EQ(emb->config->training.output_dir, "/runs/p1/emb");
    c.outs["emb"] = "/runs/p1/emb";
    Result<ResolvedStep> lep = resolve_step(p, 3, c);
    ASSERT_TRUE(lep.ok()) << lep.error();
    EXPECT_EQ(lep->engine_args,
              (std::vector<std::string>{"lep", "--base", "/m/base", "--instruct", "/m/instruct", "--adapted",
                                        "/runs/p1/emb", "--method", "swap", "--out", "/runs/p1/lep"}));
    c.outs["lep"] = lep->out;
    Result<ResolvedStep> eval = resolve_step(p, 4, c);
    ASSERT_TRUE(eval.ok()) << eval.error();
    EXPECT_EQ(eval->stdout_file, "/runs/p1/eval.json");
    EXPECT_EQ(eval->engine_args.back(), "/t.json");
}

TEST(Pipeline, ExtendAndUnigramPassThrough) {
    json doc = minimal();
    doc["steps"][0] = json::parse(R"({"name": "tok", "kind": "tokenizer", "mode": "extend", "base": "/b.json",
        "corpus": "/c.jsonl", "add": 500, "out": "/o.json", "args": ["--min-frequency", "3"]})");
    const ParsedPipeline parsed = parse_pipeline(doc, "");
    ASSERT_TRUE(parsed.problems.empty()) << format_problems(parsed.problems);
    Result<ResolvedStep> r = resolve_step(parsed.pipeline, 0, StepContext{"/r", {}, {}});
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->engine_args,
              (std::vector<std::string>{"tokenizer", "extend", "--base", "/b.json", "--corpus", "/c.jsonl",
                                        "--add", "500", "--out", "/o.json", "--min-frequency", "3"}));
    doc["steps"][0] =
        json::parse(R"({"name": "tok", "kind": "tokenizer", "type": "unigram", "corpus": "/c.jsonl",
        "out": "/o.json"})");
    r = resolve_step(parse_pipeline(doc, "").pipeline, 0, StepContext{"/r", {}, {}});
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->engine_args, (std::vector<std::string>{"tokenizer", "train", "--type", "unigram", "--corpus",
                                                        "/c.jsonl", "--out", "/o.json"}));
}

TEST(Pipeline, ReferenceErrorsNameThePointer) {
    json doc = minimal();
    doc["steps"][1]["new_tokenizer"] = "${steps.nope.out}";
    doc["steps"][0]["corpus"] = "${steps.lep.out}";                   // forward
    doc["steps"][3]["adapted"] = "${steps.lep.out}";                  // itself
    doc["steps"][4]["tasks"] = "${vars.missing}";                     // unknown variable
    doc["steps"][2]["config"]["training"]["output_dir"] = "${oops}";  // unknown form
    const ConfigProblems problems = parse_pipeline(doc, "").problems;
    EXPECT_TRUE(mentions(problems, "/steps/1/new_tokenizer", "no step named \"nope\""))
        << format_problems(problems);
    EXPECT_TRUE(mentions(problems, "/steps/0/corpus", "runs later")) << format_problems(problems);
    EXPECT_TRUE(mentions(problems, "/steps/3/adapted", "its own output")) << format_problems(problems);
    EXPECT_TRUE(mentions(problems, "/steps/4/tasks", "no variable \"missing\"")) << format_problems(problems);
    EXPECT_TRUE(mentions(problems, "/steps/2/config/training/output_dir", "unknown reference"))
        << format_problems(problems);
}

TEST(Pipeline, StepFieldErrorsNameThePointer) {
    json doc = minimal();
    doc["steps"][0].erase("out");
    doc["steps"][0]["vocab_size"] = -3;
    doc["steps"][1]["colour"] = "red";
    doc["steps"][3]["method"] = "magic";
    doc["steps"][4]["name"] = "tok";
    doc["steps"][4]["time"] = "soon; rm -rf ~";
    doc["vars"]["bad name"] = "x";
    doc["extra"] = 1;
    const ConfigProblems problems = parse_pipeline(doc, "").problems;
    for (const char* p : {"/steps/0/out", "/steps/0/vocab_size", "/steps/1/colour", "/steps/3/method",
                          "/steps/4/name", "/steps/4/time", "/vars/bad name", "/extra"}) {
        const auto all = pointers(problems);
        EXPECT_NE(std::find(all.begin(), all.end(), p), all.end()) << p << "\n" << format_problems(problems);
    }
    doc = minimal();
    doc["steps"][2]["kind"] = "bake";
    doc["steps"][0]["mode"] = "extend";
    EXPECT_TRUE(mentions(parse_pipeline(doc, "").problems, "/steps/2/kind", "must be one of"));
    EXPECT_TRUE(mentions(parse_pipeline(doc, "").problems, "/steps/0/base", "required when mode"));
    EXPECT_TRUE(mentions(parse_pipeline(doc, "").problems, "/steps/0/add", "required when mode"));
}

TEST(Pipeline, TrainConfigErrorsNameTheStepsPointer) {
    json doc = minimal();
    doc["steps"][2]["config"]["training"]["learning_rate"] = -1;
    ConfigProblems problems = parse_pipeline(doc, "").problems;
    ASSERT_FALSE(problems.empty());
    EXPECT_EQ(problems[0].pointer, "/steps/2/config");
    EXPECT_NE(problems[0].message.find("/steps/2/config/training/learning_rate"), std::string::npos)
        << problems[0].message;
    doc = minimal();
    doc["steps"][2]["config"] = 7;
    EXPECT_TRUE(mentions(parse_pipeline(doc, "").problems, "/steps/2/config", "run config object"));
    doc["steps"][2]["config"] = "/does/not/exist.json";
    EXPECT_TRUE(mentions(parse_pipeline(doc, "").problems, "/steps/2/config", "exist.json"));
}

TEST(Pipeline, TopLevelErrors) {
    EXPECT_TRUE(
        mentions(parse_pipeline(json::parse(R"({"schema": "slipway.pipeline/1", "name": "x"})"), "").problems,
                 "/steps", "required"));
    EXPECT_TRUE(mentions(parse_pipeline(json::parse(R"({"name": "x y", "steps": []})"), "").problems, "/name",
                         "required"));
    EXPECT_FALSE(is_pipeline_document(json::parse(R"({"schema": "slipway.run/1", "name": "x"})")));
}

TEST(Pipeline, PresetsParse) {
    for (const char* name : {"ruadapt-demo.json", "ruadapt-llama3-8b.json"}) {
        Result<Pipeline> p =
            load_pipeline(std::string(test_paths::source_dir("/resources/presets/pipelines/")) + name);
        ASSERT_TRUE(p.ok()) << p.error();
        EXPECT_GE(p->steps.size(), 6u) << name;
    }
}

}  // namespace
}  // namespace slipway
