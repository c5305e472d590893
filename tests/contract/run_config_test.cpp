// RunConfig JSON round trip, defaults, unknown keys with "did you mean", type errors and derived values.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "contract/run_config.h"
#include "contract/run_config_schema.h"

namespace slipway {
namespace {

RunConfig sample_config() {
    RunConfig c;
    c.name = "round-trip";
    c.comment = "all sections changed";
    c.model.path = "/models/llama";
    c.model.dtype = "float16";
    c.tokenizer.path = "/models/llama/tokenizer.json";
    c.data.train_file = "train.jsonl";
    c.data.validation_file = "val.jsonl";
    c.data.block_size = 4096;
    c.data.split = "paragraph";
    c.data.dedup = true;
    c.training.learning_rate = 1.5e-4;
    c.training.max_steps = 1024;
    c.training.eval_steps = 48;
    c.training.save_total_limit = 3;
    c.training.lr_scheduler_type = "cosine";
    c.adapter.r = 16;
    c.adapter.lora_alpha = 32;
    c.adapter.target_modules = {"q_proj", "k_proj"};
    c.adapter.modules_to_save = {"embed_tokens"};
    c.adapter.rank_pattern = {{"layers.0.self_attn.q_proj", 4}};
    c.adapter.alpha_pattern = {{"layers.0.self_attn.q_proj", 8.5}};
    c.eval.target = 0.925;
    c.eval.stop_at_target = true;
    c.distributed.backend = "nccl";
    c.slurm.nodes = 8;
    c.slurm.gpus_per_node = 8;
    c.slurm.cpus_per_task = 12;
    c.slurm.extra = {"--mail-type=END"};
    c.container.pip_packages = {"peft==0.9.0"};
    c.container.env = {{"NCCL_DEBUG", "WARN"}};
    return c;
}

TEST(RunConfig, RoundTripKeepsEveryField) {
    const RunConfig original = sample_config();
    const nlohmann::ordered_json first = to_json(original);
    const ParsedRunConfig parsed = parse_run_config(nlohmann::json::parse(first.dump()));
    ASSERT_TRUE(parsed.problems.empty()) << format_problems(parsed.problems);
    EXPECT_EQ(to_json(parsed.config), first);
    EXPECT_EQ(parsed.config.training.max_steps, 1024);
    EXPECT_EQ(parsed.config.adapter.alpha_pattern.at("layers.0.self_attn.q_proj"), 8.5);
    EXPECT_EQ(parsed.config.container.env.at("NCCL_DEBUG"), "WARN");
}

TEST(RunConfig, SaveWritesEveryFieldInSchemaOrder) {
    const nlohmann::ordered_json json = to_json(RunConfig{});
    std::vector<std::string> keys;
    for (const auto& [key, value] : json.items())
        keys.push_back(key);
    const std::vector<std::string> expected = {"schema", "name",     "comment",  "model", "tokenizer",
                                               "data",   "training", "adapter",  "eval",  "distributed",
                                               "mlperf", "slurm",    "container"};
    EXPECT_EQ(keys, expected);
    size_t leaves = 0;
    for (const auto& [key, value] : json.items())
        leaves += value.is_object() ? value.size() : 1;
    EXPECT_EQ(leaves, run_config_fields().size());
    EXPECT_EQ(json["training"].begin().key(), "learning_rate");
    EXPECT_TRUE(json["training"]["max_steps"].is_null());
}

TEST(RunConfig, EmptyObjectGivesDocumentedDefaults) {
    const ParsedRunConfig parsed = parse_run_config(nlohmann::json::object());
    ASSERT_TRUE(parsed.problems.empty());
    const RunConfig& c = parsed.config;
    EXPECT_EQ(c.schema, "slipway.run/1");
    EXPECT_DOUBLE_EQ(c.training.learning_rate, 5e-5);
    EXPECT_DOUBLE_EQ(c.training.adam_beta2, 0.999);
    EXPECT_EQ(c.training.lr_scheduler_type, "linear");
    EXPECT_EQ(c.adapter.method, "lora");
    EXPECT_EQ(c.adapter.r, 8);
    EXPECT_EQ(c.distributed.bucket_mb, 25.0);
    EXPECT_FALSE(c.training.max_steps.has_value());
}

TEST(RunConfig, SaveAndLoadFile) {
    const std::string path = testing::TempDir() + "/slipway_round_trip.json";
    RunConfig config = sample_config();
    ASSERT_TRUE(save_run_config(config, path).ok());
    const Result<RunConfig> loaded = load_run_config(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    EXPECT_EQ(to_json(*loaded), to_json(config));
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(RunConfig, LoadNamesFileAndSyntaxErrorPosition) {
    const std::string path = testing::TempDir() + "/slipway_broken.json";
    std::ofstream(path) << "{\n  \"name\": \"x\",\n  \"training\": {,}\n}\n";
    const Result<RunConfig> loaded = load_run_config(path);
    ASSERT_FALSE(loaded.ok());
    EXPECT_NE(loaded.error().find(path), std::string::npos) << loaded.error();
    EXPECT_NE(loaded.error().find("line 3"), std::string::npos) << loaded.error();
}

TEST(RunConfig, LoadListsEveryProblemWithPointers) {
    const std::string path = testing::TempDir() + "/slipway_invalid.json";
    std::ofstream(path) << R"({"model": {"path": "/m"}, "data": {"train_file": "t.jsonl"},
        "training": {"learning_rate": -1, "per_device_train_batch_size": 0}})";
    const Result<RunConfig> loaded = load_run_config(path);
    ASSERT_FALSE(loaded.ok());
    EXPECT_NE(loaded.error().find("/training/learning_rate: must be > 0, got -1"), std::string::npos)
        << loaded.error();
    EXPECT_NE(loaded.error().find("/training/per_device_train_batch_size: must be >= 1, got 0"),
              std::string::npos);
}

TEST(RunConfig, MissingFileIsAnErrorNamingIt) {
    const Result<RunConfig> loaded = load_run_config("/nonexistent/run.json");
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.error(), "/nonexistent/run.json: cannot open file");
}

struct UnknownKeyCase {
    std::string json;
    std::string pointer;
    std::string message;
};

void PrintTo(const UnknownKeyCase& c, std::ostream* os) {
    *os << c.json;
}

class UnknownKeys : public testing::TestWithParam<UnknownKeyCase> {};

TEST_P(UnknownKeys, AreErrorsWithSuggestions) {
    const ParsedRunConfig parsed = parse_run_config(nlohmann::json::parse(GetParam().json));
    ASSERT_EQ(parsed.problems.size(), 1u) << format_problems(parsed.problems);
    EXPECT_EQ(parsed.problems[0].pointer, GetParam().pointer);
    EXPECT_EQ(parsed.problems[0].message, GetParam().message);
    EXPECT_TRUE(parsed.problems[0].is_error());
}

INSTANTIATE_TEST_SUITE_P(
    RunConfig, UnknownKeys,
    testing::Values(
        UnknownKeyCase{R"({"training": {"lerning_rate": 1e-4}})", "/training/lerning_rate",
                       "unknown field (did you mean \"learning_rate\"?)"},
        UnknownKeyCase{R"({"traning": {}})", "/traning", "unknown field (did you mean \"training\"?)"},
        UnknownKeyCase{R"({"learning_rate": 1e-4})", "/learning_rate",
                       "unknown field (did you mean /training/learning_rate?)"},
        UnknownKeyCase{R"({"adapter": {"lora_rank": 16}})", "/adapter/lora_rank",
                       "unknown field (did you mean /adapter/r? the script flag --lora_rank sets it)"},
        UnknownKeyCase{R"({"slurm": {"gpus": 8}})", "/slurm/gpus",
                       "unknown field (did you mean \"gpus_per_node\"?)"},
        UnknownKeyCase{R"({"slurm": {"zzzzzz": 8}})", "/slurm/zzzzzz", "unknown field"},
        UnknownKeyCase{R"({"slurm": {"a/b~c": 1}})", "/slurm/a~1b~0c", "unknown field"},
        UnknownKeyCase{R"({"data": {"warmup_steps": 5}})", "/data/warmup_steps",
                       "unknown field (did you mean /training/warmup_steps?)"}));

struct TypeCase {
    std::string json;
    std::string pointer;
    std::string message;
};

void PrintTo(const TypeCase& c, std::ostream* os) {
    *os << c.json;
}

class TypeErrors : public testing::TestWithParam<TypeCase> {};

TEST_P(TypeErrors, NameThePointerAndTheValue) {
    const ParsedRunConfig parsed = parse_run_config(nlohmann::json::parse(GetParam().json));
    ASSERT_EQ(parsed.problems.size(), 1u) << format_problems(parsed.problems);
    EXPECT_EQ(parsed.problems[0].to_string(), GetParam().pointer + ": " + GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    RunConfig, TypeErrors,
    testing::Values(TypeCase{R"({"training": {"learning_rate": "1e-4"}})", "/training/learning_rate",
                             "must be a number, got \"1e-4\""},
                    TypeCase{R"({"training": {"bf16": 1}})", "/training/bf16", "must be a boolean, got 1"},
                    TypeCase{R"({"adapter": {"r": 8.5}})", "/adapter/r", "must be an integer, got 8.5"},
                    TypeCase{R"({"training": {"learning_rate": null}})", "/training/learning_rate",
                             "must be a number, got null"},
                    TypeCase{R"({"adapter": {"target_modules": "q_proj"}})", "/adapter/target_modules",
                             "must be a list of strings, got \"q_proj\""},
                    TypeCase{R"({"adapter": {"rank_pattern": {"q": "4"}}})", "/adapter/rank_pattern",
                             "must be a object of integers, got {\"q\":\"4\"}"},
                    TypeCase{R"({"training": []})", "/training", "must be an object, got []"},
                    TypeCase{R"([1, 2])", "/", "a run config must be a JSON object, got [1,2]"}));

TEST(RunConfig, IntegralFloatIsAcceptedForIntegers) {
    const ParsedRunConfig parsed = parse_run_config(nlohmann::json::parse(R"({"adapter": {"r": 16.0}})"));
    ASSERT_TRUE(parsed.problems.empty());
    EXPECT_EQ(parsed.config.adapter.r, 16);
}

TEST(RunConfig, NullUnsetsNullableFields) {
    const ParsedRunConfig parsed =
        parse_run_config(nlohmann::json::parse(R"({"training": {"max_steps": null, "eval_steps": 10}})"));
    ASSERT_TRUE(parsed.problems.empty());
    EXPECT_FALSE(parsed.config.training.max_steps.has_value());
    EXPECT_EQ(parsed.config.training.eval_steps, 10);
}

TEST(RunConfig, DerivedValues) {
    RunConfig c;
    c.training.per_device_train_batch_size = 1;
    c.training.gradient_accumulation_steps = 4;
    c.slurm.nodes = 8;
    c.slurm.gpus_per_node = 8;
    c.data.block_size = 4096;
    EXPECT_EQ(c.tasks_per_node(), 8);
    EXPECT_EQ(c.world_size(), 64);
    EXPECT_EQ(c.global_batch_size(), 256);  // 1 x 4 x 8 x 8
    EXPECT_EQ(c.tokens_per_step(), 256 * 4096);

    c.slurm.gpus_per_node = 0;  // CPU: one task per node unless told otherwise
    EXPECT_EQ(c.world_size(), 8);
    c.slurm.ntasks_per_node = 2;
    EXPECT_EQ(c.world_size(), 16);
    EXPECT_EQ(c.global_batch_size(), 64);

    EXPECT_FALSE(c.eval_higher_is_better());
    c.eval.metric = "token_accuracy";
    EXPECT_TRUE(c.eval_higher_is_better());
}

TEST(RunConfig, ValidationContextReadsModelMaxPositions) {
    const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "slipway_model_ctx";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "config.json") << R"({"max_position_embeddings": 2048, "hidden_size": 64})";
    RunConfig c;
    c.model.path = dir.string();
    EXPECT_EQ(validation_context_for(c).model_max_positions, 2048);
    c.model.path = "/nonexistent/model";
    EXPECT_FALSE(validation_context_for(c).model_max_positions.has_value());
}

TEST(RunConfigSchema, EveryFieldIsDocumented) {
    for (const FieldSpec& f : run_config_fields()) {
        EXPECT_FALSE(f.help.empty()) << f.pointer();
        EXPECT_TRUE(f.get && f.set) << f.pointer();
    }
    const std::string doc = run_config_schema_markdown();
    for (const FieldSpec& f : run_config_fields())
        EXPECT_NE(doc.find("`" + f.pointer() + "`"), std::string::npos);
    EXPECT_NE(doc.find("| `/training/learning_rate` | number | `5e-05` | (0, 1] |"), std::string::npos)
        << doc;
}

// The editor shows these; a label is for people, so it is not the field's snake_case key.
TEST(RunConfigSchema, EveryFieldHasAHumanLabelAndAGroup) {
    for (const FieldSpec& f : run_config_fields()) {
        EXPECT_FALSE(f.label.empty()) << f.pointer();
        EXPECT_FALSE(f.group.empty()) << f.pointer();
        EXPECT_EQ(f.label.find('_'), std::string::npos) << f.pointer() << ": " << f.label;
        EXPECT_NE(f.label, f.key) << f.pointer();
    }
    EXPECT_NE(run_config_schema_markdown().find("**Learning rate.** Peak learning rate"), std::string::npos);
}

TEST(RunConfigSchema, DidYouMeanNeedsACloseWord) {
    EXPECT_EQ(closest_match("cosin", {"linear", "cosine", "constant"}), "cosine");
    EXPECT_EQ(closest_match("banana", {"linear", "cosine", "constant"}), "");
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

}  // namespace
}  // namespace slipway
