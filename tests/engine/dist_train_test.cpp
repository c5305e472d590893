// Distributed training through `slipway-engine launch` with real Gloo ranks: 2 ranks equal 1 rank at the
// same global batch (full, embeddings, LoRA; with and without accumulation), a 2-rank resume continues
// the curve, a killed (kill -9) or frozen (SIGSTOP) rank ends the run within timeout_s with a message
// naming it, a rank that fails on its own (a shape error, out of memory) is named with its cause by every
// rank within seconds (not as lost, not after the timeout), SIGTERM checkpoints and logs run_stop aborted,
// the launcher returns the failing rank's code, and an unreachable master is named. The rendezvous: a foreign
// client writing into a running job's store changes nothing, two jobs whose job ids gave the same port before
// both run, a rank without the job's secret (or with another) is refused, and ranks whose checkpoints differ
// on resume are stopped.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <future>
#include <thread>

#include "dist/rank_hosts.h"
#include "io/safetensors.h"
#include "store_intruder.h"
#include "test_paths.h"
#include "tiny_run_support.h"

extern char** environ;

namespace {

using namespace slipway::testing_support;
using Clock = std::chrono::steady_clock;

struct Finished {
    int exit_code = -1;
    std::string out, err;
    double seconds = 0;
};

// A child process with stdout and stderr in files; waited for with a deadline.
class Child {
public:
    Child(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err,
          const std::vector<std::string>& extra_env = {})
        : out_(out), err_(err), start_(Clock::now()) {
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        std::vector<std::string> env_strings(extra_env);
        for (char** e = environ; *e; ++e)
            env_strings.emplace_back(*e);
        std::vector<char*> args, env;
        for (const std::string& a : argv)
            args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        for (std::string& e : env_strings)
            env.push_back(e.data());
        env.push_back(nullptr);
        if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), env.data()) != 0) pid_ = -1;
        posix_spawn_file_actions_destroy(&actions);
    }
    ~Child() {
        if (pid_ > 0 && !done_) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }
    pid_t pid() const { return pid_; }

    // Waits until `text` appears in stdout or stderr (false at the deadline or when the child exited).
    bool wait_for_text(const std::string& text, double seconds) {
        const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
        while (Clock::now() < deadline) {
            if (slurp(out_).find(text) != std::string::npos || slurp(err_).find(text) != std::string::npos)
                return true;
            int status = 0;
            if (waitpid(pid_, &status, WNOHANG) == pid_) {
                done_ = true;
                finished_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                return false;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return false;
    }

    Finished wait(double seconds) {
        const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
        while (!done_ && Clock::now() < deadline) {
            int status = 0;
            if (waitpid(pid_, &status, WNOHANG) == pid_) {
                done_ = true;
                finished_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        finished_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
        finished_.out = slurp(out_);
        finished_.err = slurp(err_);
        return finished_;
    }

    // The launcher's child whose environment says RANK=<rank>.
    pid_t rank_pid(int rank) const {
        std::istringstream children(
            slurp("/proc/" + std::to_string(pid_) + "/task/" + std::to_string(pid_) + "/children"));
        for (pid_t child; children >> child;) {
            const std::string env = slurp("/proc/" + std::to_string(child) + "/environ");
            if (env.find(std::string("\0RANK=", 6) + std::to_string(rank) + '\0') != std::string::npos)
                return child;
        }
        return -1;
    }

private:
    pid_t pid_ = -1;
    fs::path out_, err_;
    Clock::time_point start_;
    bool done_ = false;
    Finished finished_;
};

class DistTrain : public TinyRunTest {
public:
    std::vector<std::string> launch_argv(int nproc, const std::string& config,
                                         const std::vector<std::string>& flags,
                                         const std::vector<std::string>& launch_flags = {}) {
        std::vector<std::string> argv{test_paths::engine_bin(), "launch", "--nproc", std::to_string(nproc),
                                      "--threads-per-rank",     "1"};
        argv.insert(argv.end(), launch_flags.begin(), launch_flags.end());
        argv.insert(argv.end(), {"--", "train", config});
        argv.insert(argv.end(), flags.begin(), flags.end());
        return argv;
    }
    Finished run(const std::vector<std::string>& argv, const std::string& tag, double seconds = 300) {
        Child child(argv, dir_ / (tag + ".out"), dir_ / (tag + ".err"));
        return child.wait(seconds);
    }
    Finished launch(int nproc, const std::string& config, const std::vector<std::string>& flags = {}) {
        return run(launch_argv(nproc, config, flags), "launch" + std::to_string(nproc));
    }
    Finished train_alone(const std::string& config, const std::vector<std::string>& flags = {}) {
        std::vector<std::string> argv{test_paths::engine_bin(), "train", "--threads", "1", config};
        argv.insert(argv.end(), flags.begin(), flags.end());
        return run(argv, "alone");
    }
    std::vector<double> values(const std::string& run_name, const std::string& key) {
        std::vector<double> out;
        for (const slipway::MllogEvent& e : mllog_events((dir_ / run_name / "mllog.txt").string(), key))
            out.push_back(e.value.get<double>());
        return out;
    }
    static void expect_close(const std::vector<double>& a, const std::vector<double>& b,
                             const std::string& what) {
        ASSERT_EQ(a.size(), b.size()) << what;
        ASSERT_FALSE(a.empty()) << what;
        for (size_t i = 0; i < a.size(); ++i)
            EXPECT_NEAR(a[i], b[i], 1e-5 * std::max(1.0, std::fabs(b[i]))) << what << " #" << i;
    }
    // `ranks` ranks train 8 steps straight, and again stopped after step 4 (checkpoint-4) and resumed from
    // it: the same 8 losses, bit for bit. Returns the resumed run's config.
    std::string expect_resume_continues_the_curve(const nlohmann::json& patch, int ranks = 2) {
        const std::string straight = write_config("straight", patch),
                          resumed = write_config("resumed", patch);
        EXPECT_EQ(launch(ranks, straight).exit_code, 0);
        const Finished first = launch(ranks, resumed, {"--stop-after-steps", "4"});
        EXPECT_EQ(first.exit_code, 0) << first.err;
        EXPECT_TRUE(fs::exists(dir_ / "resumed" / "checkpoint-4" / "DONE"));
        const Finished second = launch(ranks, resumed, {"--resume_from_checkpoint", "latest"});
        EXPECT_EQ(second.exit_code, 0) << second.err;
        EXPECT_NE(second.err.find("resumed from"), std::string::npos) << second.err;
        EXPECT_NE(second.err.find("0: every rank resumed at step 4"), std::string::npos) << second.err;
        const std::vector<double> a = values("straight", "train_loss"), b = values("resumed", "train_loss");
        EXPECT_EQ(a.size(), 8u);
        EXPECT_EQ(b.size(), 8u);
        for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
            EXPECT_DOUBLE_EQ(a[i], b[i]) << "step " << i + 1;
        return resumed;
    }

    // Every tensor of the two safetensors files (or HF folders, sharded or not): the difference within
    // `tolerance` of the tensor in norm, and no element off by more than 100 x `tolerance` of the tensor's
    // scale. Elementwise float noise is no bound for Adam, which divides each element's step by its own
    // sqrt(v): an element whose gradient sums to about zero steps visibly differently when the ranks add in
    // another order (measured: one element of the demo's "--" embedding row 2.4e-5 apart at a scale of 0.09,
    // every other element of every tensor within 2e-7).
    static void expect_same_weights(const fs::path& a_file, const fs::path& b_file, double tolerance = 1e-5) {
        auto open = [](const fs::path& p) {
            return fs::is_directory(p) ? slipway::io::Checkpoint::open_folder(p.string())
                                       : slipway::io::Checkpoint::open_file(p.string());
        };
        auto a = open(a_file);
        auto b = open(b_file);
        ASSERT_TRUE(a.ok()) << a.error();
        ASSERT_TRUE(b.ok()) << b.error();
        ASSERT_EQ(a->tensors().size(), b->tensors().size());
        for (const auto& [name, va] : a->tensors()) {
            const slipway::io::TensorView& vb = b->tensors().at(name);
            ASSERT_EQ(va.nbytes, vb.nbytes) << name;
            const auto* x = reinterpret_cast<const float*>(va.data);
            const auto* y = reinterpret_cast<const float*>(vb.data);
            double worst = 0, scale = 1e-3, difference_sq = 0, norm_sq = 0;
            for (size_t i = 0; i < va.nbytes / sizeof(float); ++i) {
                const double d = static_cast<double>(x[i]) - static_cast<double>(y[i]);
                worst = std::max(worst, std::fabs(d));
                scale = std::max(scale, static_cast<double>(std::fabs(y[i])));
                difference_sq += d * d;
                norm_sq += static_cast<double>(y[i]) * static_cast<double>(y[i]);
            }
            EXPECT_LE(std::sqrt(difference_sq), tolerance * std::max(std::sqrt(norm_sq), 1e-3)) << name;
            EXPECT_LE(worst, 100 * tolerance * scale) << name;
        }
    }
};

struct ModeCase {
    std::string name;
    nlohmann::json adapter;
    std::string weights_file;
    int64_t accumulation;
    bool gradient_checkpointing = false;  // the Reducer's hooks then fire inside recomputed backward passes
    double weight_tolerance = 1e-5;       // of the final weights, relative to their largest value
};

void PrintTo(const ModeCase& mode, std::ostream* os) {
    *os << mode.name;
}

class DistTrainModes : public DistTrain, public testing::WithParamInterface<ModeCase> {};

TEST_P(DistTrainModes, TwoRanksEqualOneRankAtTheSameGlobalBatch) {
    const ModeCase& mode = GetParam();
    const nlohmann::json common = {{"adapter", mode.adapter},
                                   {"training", {{"max_steps", 6}, {"eval_steps", 3}, {"warmup_steps", 1}}}};
    nlohmann::json one = common, two = common;
    one["training"]["gradient_checkpointing"] = two["training"]["gradient_checkpointing"] =
        mode.gradient_checkpointing;
    one["training"]["per_device_train_batch_size"] = 4;  // global batch 4 in both
    two["training"]["per_device_train_batch_size"] = 2 / mode.accumulation;
    two["training"]["gradient_accumulation_steps"] = mode.accumulation;
    const Finished alone = train_alone(write_config("one", one));
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    const Finished launched = launch(2, write_config("two", two));
    ASSERT_EQ(launched.exit_code, 0) << launched.err;
    EXPECT_NE(launched.err.find("0: gradients averaged over 2 ranks"), std::string::npos) << launched.err;
    for (const char* key : {"train_loss", "grad_norm", "eval_loss", "eval_token_accuracy"})
        expect_close(values("two", key), values("one", key), key);
    expect_same_weights(dir_ / "two" / mode.weights_file, dir_ / "one" / mode.weights_file);
    // Only rank 0 writes MLLOG; run.json records the world size.
    EXPECT_EQ(launched.out.find("1: :::MLLOG"), std::string::npos);
    EXPECT_NE(launched.out.find("0: :::MLLOG"), std::string::npos);
    EXPECT_EQ(nlohmann::json::parse(slurp((dir_ / "two" / "run.json").string()))["world_size"], 2);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, DistTrainModes,
    testing::Values(
        ModeCase{"full", {{"method", "full"}}, "model.safetensors", 1},
        ModeCase{"full_accumulated", {{"method", "full"}}, "model.safetensors", 2},
        ModeCase{"full_checkpointed", {{"method", "full"}}, "model.safetensors", 1, true},
        ModeCase{"embeddings", {{"method", "embeddings"}}, "model.safetensors", 1},
        ModeCase{"lora",
                 {{"method", "lora"}, {"r", 4}, {"lora_alpha", 8}, {"target_modules", {"q_proj", "v_proj"}}},
                 "adapter_model.safetensors",
                 1}),
    [](const testing::TestParamInfo<ModeCase>& info) { return info.param.name; });

// /eval/tasks on 2 ranks: rank 0 alone runs the tasks at each evaluation (rank 1 waits outside collectives),
// and the numbers equal a 1-rank run's at the same global batch.
TEST_F(DistTrain, EvalTasksRunOnRankZeroAndEqualOneRank) {
    std::ofstream(dir_ / "mc.jsonl") << R"({"context": "Win98", "choices": ["ошибка", "error"], "gold": 0})"
                                     << "\n";
    std::ofstream(dir_ / "ppl.jsonl") << R"({"text": "Win98 ошибка 001: загрузка выполнена."})"
                                      << "\n";
    const std::string tasks = (dir_ / "eval-tasks.json").string();
    std::ofstream(tasks) << R"({"tasks": [{"name": "mc", "kind": "multiple_choice", "data": "mc.jsonl"},
        {"name": "ppl", "kind": "perplexity", "data": "ppl.jsonl"}]})";
    nlohmann::json one = {
        {"eval", {{"tasks", tasks}}},
        {"training", {{"max_steps", 6}, {"eval_steps", 3}, {"per_device_train_batch_size", 4}}}};
    nlohmann::json two = one;
    two["training"]["per_device_train_batch_size"] = 2;
    const Finished alone = train_alone(write_config("one", one));
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    const Finished launched = launch(2, write_config("two", two));
    ASSERT_EQ(launched.exit_code, 0) << launched.err;
    EXPECT_NE(launched.err.find("0: eval tasks: mc acc"), std::string::npos) << launched.err;
    EXPECT_EQ(launched.err.find("1: eval tasks"), std::string::npos) << launched.err;
    const std::vector<double> tasks_two = values("two", "eval_task");
    EXPECT_EQ(tasks_two.size(), 8u);  // 2 evaluations x (acc, acc_norm, perplexity, nll)
    expect_close(tasks_two, values("one", "eval_task"), "eval_task");
}

// /eval/tasks sharded on 2 and 3 ranks: every rank runs the tasks together, each unit gathered as the
// KV-cache forward reaches it, and rank 0's greedy picks taken by all (a generation task decodes in step, or
// the ranks would wait on each other's gathers); every metric equals a 1-rank unsharded run's.
TEST_F(DistTrain, EvalTasksRunShardedOnEveryRankAndEqualOneRank) {
    const fs::path eval = fs::path(test_paths::source_dir()) / "resources" / "eval";
    const std::string tasks = (dir_ / "eval-tasks.json").string();
    std::ofstream(tasks) << R"({"tasks": [{"name": "mc", "kind": "multiple_choice", "data": ")"
                         << (eval / "mc-ru-en.jsonl").string() << R"("},
        {"name": "copy", "kind": "generation", "data": ")"
                         << (eval / "copy.jsonl").string() << R"(", "max_new_tokens": 8},
        {"name": "ppl", "kind": "perplexity", "data": ")"
                         << (eval / "perplexity.jsonl").string() << R"("}]})";
    nlohmann::json one = {
        {"eval", {{"tasks", tasks}}},
        {"training", {{"max_steps", 4}, {"eval_steps", 2}, {"per_device_train_batch_size", 6}}}};
    const Finished alone = train_alone(write_config("one", one));
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    for (int ranks : {2, 3}) {
        nlohmann::json sharded = one;
        sharded["training"]["per_device_train_batch_size"] = 6 / ranks;
        sharded["distributed"] = {{"sharding", "full"}};
        const std::string name = "sharded" + std::to_string(ranks);
        const Finished launched = launch(ranks, write_config(name, sharded));
        ASSERT_EQ(launched.exit_code, 0) << launched.err;
        EXPECT_NE(launched.err.find("0: eval tasks: mc acc"), std::string::npos) << launched.err;
        const std::vector<double> got = values(name, "eval_task");
        EXPECT_EQ(got.size(),
                  12u);  // 2 evaluations x (acc, acc_norm, exact_match, prefix_match, perplexity, nll)
        expect_close(got, values("one", "eval_task"), "eval_task " + name);
    }
}

// Sharded (/distributed/sharding: full) on 2 and 3 ranks against 1 unsharded rank at the same global batch:
// the same train_loss, grad_norm, eval metrics and final weights within 1e-5.
struct ShardedCase {
    ModeCase mode;
    int ranks;
};

void PrintTo(const ShardedCase& c, std::ostream* os) {
    *os << c.mode.name << " on " << c.ranks << " ranks";
}

class ShardedTrainModes : public DistTrain, public testing::WithParamInterface<ShardedCase> {};

TEST_P(ShardedTrainModes, ShardedRanksEqualOneUnshardedRankAtTheSameGlobalBatch) {
    const ModeCase& mode = GetParam().mode;
    const int ranks = GetParam().ranks;
    // Hidden size 64: the embeddings and the head are 1 MiB units, large enough for the ring collectives
    // of Gloo; the layers are small ones, gathered and reduced by single collectives.
    std::ofstream(dir_ / "model" / "config.json")
        << R"({"vocab_size": 4096, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 2, "max_position_embeddings": 128, "tie_word_embeddings": false})";
    const nlohmann::json common = {{"adapter", mode.adapter},
                                   {"training", {{"max_steps", 6}, {"eval_steps", 3}, {"warmup_steps", 1}}}};
    nlohmann::json one = common, sharded = common;
    one["training"]["gradient_checkpointing"] = sharded["training"]["gradient_checkpointing"] =
        mode.gradient_checkpointing;
    one["training"]["per_device_train_batch_size"] = 6;  // global batch 6 in both
    sharded["training"]["per_device_train_batch_size"] = 6 / ranks / mode.accumulation;
    sharded["training"]["gradient_accumulation_steps"] = mode.accumulation;
    // The 3-rank cases also prefetch the next unit's gather (on NCCL by default; here on Gloo to check it).
    sharded["distributed"] = {{"sharding", "full"}, {"prefetch", ranks == 3 ? "on" : "auto"}};
    const Finished alone = train_alone(write_config("one", one));
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    const Finished launched = launch(ranks, write_config("sharded", sharded));
    ASSERT_EQ(launched.exit_code, 0) << launched.err;
    EXPECT_NE(launched.err.find("0: sharded over " + std::to_string(ranks) + " rank(s)"), std::string::npos)
        << launched.err;
    for (const char* key : {"train_loss", "grad_norm", "eval_loss", "eval_token_accuracy"})
        expect_close(values("sharded", key), values("one", key), key);
    // A full model comes out as an HF folder with one file per unit (never gathered whole); an adapter as is.
    if (mode.weights_file == "model.safetensors") {
        EXPECT_TRUE(fs::exists(dir_ / "sharded" / "model.safetensors.index.json"));
        // 5e-4: the embedding rows of rare tokens have gradients that nearly cancel, whose last bits depend
        // on how the batch is split over ranks, and AdamW scales every element's step to about lr. DDP on 3
        // ranks differs from 1 rank by the same amount (2.8e-5 of 0.095 on embed_tokens, as sharded).
        expect_same_weights(dir_ / "sharded", dir_ / "one" / mode.weights_file, 5e-4);
    } else {
        expect_same_weights(dir_ / "sharded" / mode.weights_file, dir_ / "one" / mode.weights_file,
                            mode.weight_tolerance);
    }
}

const ModeCase kLora{
    "lora",
    {{"method", "lora"}, {"r", 4}, {"lora_alpha", 8}, {"target_modules", {"q_proj", "v_proj"}}},
    "adapter_model.safetensors",
    1};
const ModeCase kFull{"full", {{"method", "full"}}, "model.safetensors", 1};
const ModeCase kFullAccumulated{"full_accumulated", {{"method", "full"}}, "model.safetensors", 3};
const ModeCase kFullCheckpointed{"full_checkpointed", {{"method", "full"}}, "model.safetensors", 1, true};
const ModeCase kEmbeddings{"embeddings", {{"method", "embeddings"}}, "model.safetensors", 1};
const ModeCase kLoraCheckpointed{"lora_checkpointed", kLora.adapter, "adapter_model.safetensors", 1, true};
// QLoRA: each rank keeps 1/N of the NF4 codes and block scales and gathers a layer's before using them. fp32
// compute, so that sharded and unsharded dequantize to the same numbers.
nlohmann::json qlora_adapter(bool double_quant) {
    nlohmann::json adapter = kLora.adapter;
    adapter["method"] = "qlora";
    adapter["target_modules"] = {"q_proj", "k_proj", "v_proj", "o_proj"};
    adapter["bnb_4bit_compute_dtype"] = "float32";
    adapter["bnb_4bit_use_double_quant"] = double_quant;
    return adapter;
}
// 5e-5: AdamW moves an element whose gradient nearly cancels by about lr either way, and the last bits of
// such a gradient depend on how the batch is split: unsharded DDP on 3 ranks differs from 1 rank by 5.0e-6
// of 0.13 on layers.0 v_proj's lora_A, and sharded by 5.5e-6.
const ModeCase kQlora{"qlora", qlora_adapter(true), "adapter_model.safetensors", 1, false, 5e-5};
const ModeCase kQloraCheckpointed{"qlora_checkpointed", qlora_adapter(false), "adapter_model.safetensors", 1,
                                  true};

INSTANTIATE_TEST_SUITE_P(Sharded, ShardedTrainModes,
                         testing::Values(ShardedCase{kFull, 2}, ShardedCase{kFull, 3},
                                         ShardedCase{kFullAccumulated, 2}, ShardedCase{kFullCheckpointed, 2},
                                         ShardedCase{kFullCheckpointed, 3}, ShardedCase{kEmbeddings, 2},
                                         ShardedCase{kEmbeddings, 3}, ShardedCase{kLora, 2},
                                         ShardedCase{kLora, 3}, ShardedCase{kLoraCheckpointed, 2},
                                         ShardedCase{kQlora, 2}, ShardedCase{kQlora, 3},
                                         ShardedCase{kQloraCheckpointed, 2}),
                         [](const testing::TestParamInfo<ShardedCase>& info) {
                             return info.param.mode.name + "_" + std::to_string(info.param.ranks) + "ranks";
                         });

TEST_F(DistTrain, ShardedResumeContinuesTheCurveAndRefusesAnotherWorldSize) {
    const nlohmann::json patch = {
        {"training",
         {{"max_steps", 8}, {"save_steps", 4}, {"eval_steps", nullptr}, {"per_device_train_batch_size", 2}}},
        {"adapter", kLora.adapter},
        {"distributed", {{"sharding", "full"}, {"prefetch", "on"}}},
        {"data", {{"validation_split_percentage", 0}}}};
    const std::string resumed = expect_resume_continues_the_curve(patch);
    const fs::path checkpoint = dir_ / "resumed" / "checkpoint-4";
    EXPECT_TRUE(fs::exists(checkpoint / "shard-0-of-2.safetensors"));  // each rank wrote its own shards
    EXPECT_TRUE(fs::exists(checkpoint / "shard-1-of-2.safetensors"));
    // 3 ranks cannot take a 2-rank sharded checkpoint: the message names both world sizes.
    const Finished wrong =
        launch(3, resumed, {"--resume_from_checkpoint", checkpoint.string(), "--max_steps", "12"});
    EXPECT_NE(wrong.exit_code, 0);
    EXPECT_NE(wrong.err.find("saved with world size 2, this run has 3"), std::string::npos) << wrong.err;
}

// bf16 autocast with gradient checkpointing, sharded on 2 ranks against 1 unsharded rank at the same global
// batch (the recomputation in backward runs under bf16 as its forward did).
TEST_F(DistTrain, ShardedBf16CheckpointedEqualsUnsharded) {
    for (const ModeCase& mode : {kFull, kLora}) {
        const nlohmann::json common = {
            {"adapter", mode.adapter},
            {"training",
             {{"max_steps", 4}, {"eval_steps", 2}, {"bf16", true}, {"gradient_checkpointing", true}}}};
        nlohmann::json one = common, sharded = common;
        one["training"]["per_device_train_batch_size"] = 6;
        sharded["training"]["per_device_train_batch_size"] = 3;
        sharded["distributed"] = {{"sharding", "full"}};
        const std::string one_name = "one_" + mode.name, sharded_name = "sharded_" + mode.name;
        const Finished alone = train_alone(write_config(one_name, one));
        ASSERT_EQ(alone.exit_code, 0) << alone.err;
        const Finished launched = launch(2, write_config(sharded_name, sharded));
        ASSERT_EQ(launched.exit_code, 0) << launched.err;
        for (const char* key : {"train_loss", "grad_norm", "eval_loss"}) {
            const std::vector<double> a = values(sharded_name, key), b = values(one_name, key);
            ASSERT_EQ(a.size(), b.size()) << key;
            for (size_t i = 0; i < a.size(); ++i) {
                // The weight gradients are bf16 products summed over 3 or 6 sequences: their norm moves in
                // bf16's 8-bit mantissa, two of whose steps are 2^-7 = 7.8e-3 (seen: 3.5e-4, 1.1e-3 on a Xeon
                // with AVX512-BF16 and AMX, 4.5e-3 on an AMD EPYC); losses stay within 1e-5 (seen: 2.6e-6).
                const double tolerance = std::string(key) == "grad_norm" ? 7.8e-3 : 1e-5;
                EXPECT_NEAR(a[i], b[i], tolerance * std::fabs(b[i])) << mode.name << " " << key << " #" << i;
            }
        }
    }
}

// A sharded full run writes an HF folder one file per unit (with its index); LoRA on that folder, with each
// rank reading only its slices from the mapped files, equals LoRA on it without sharding. So does QLoRA, on
// that folder (each rank quantizing a layer at a time from the mapped bytes) and on the "-bnb-4bit" copy that
// `quantize` writes of it (4-bit tensors taken as they are).
TEST_F(DistTrain, ShardedRunsLoadTheirSlicesFromAnHfFolder) {
    const Finished base =
        launch(2, write_config("base", {{"training", {{"max_steps", 2}, {"eval_steps", nullptr}}},
                                        {"distributed", {{"sharding", "full"}}}}));
    ASSERT_EQ(base.exit_code, 0) << base.err;
    ASSERT_TRUE(fs::exists(dir_ / "base" / "model.safetensors.index.json"));
    const Finished quantized = run({test_paths::engine_bin(), "quantize", "--model", (dir_ / "base").string(),
                                    "--out", (dir_ / "base-bnb-4bit").string(), "--double-quant"},
                                   "quantize");
    ASSERT_EQ(quantized.exit_code, 0) << quantized.err;
    struct Case {
        std::string name, model;
        nlohmann::json adapter;
    };
    for (const Case& c : {Case{"lora", "base", kLora.adapter}, Case{"qlora", "base", kQlora.adapter},
                          Case{"qlora_bnb", "base-bnb-4bit", kQlora.adapter}}) {
        const nlohmann::json lora = {
            {"model", {{"path", (dir_ / c.model).string()}, {"init", "pretrained"}}},
            {"adapter", c.adapter},
            {"training", {{"max_steps", 4}, {"eval_steps", 2}, {"per_device_train_batch_size", 4}}}};
        nlohmann::json sharded = lora;
        sharded["training"]["per_device_train_batch_size"] = 2;
        sharded["distributed"] = {{"sharding", "full"}};
        const std::string one_name = "one_" + c.name, sharded_name = "sharded_" + c.name;
        const Finished alone = train_alone(write_config(one_name, lora));
        ASSERT_EQ(alone.exit_code, 0) << alone.err;
        const Finished launched = launch(2, write_config(sharded_name, sharded));
        ASSERT_EQ(launched.exit_code, 0) << launched.err;
        for (const char* key : {"train_loss", "grad_norm", "eval_loss"})
            expect_close(values(sharded_name, key), values(one_name, key), key);
        expect_same_weights(dir_ / sharded_name / kLora.weights_file, dir_ / one_name / kLora.weights_file);
    }
    // The folder's 4-bit model starts where the quantized base does: the same first loss.
    EXPECT_EQ(values("one_qlora_bnb", "train_loss").front(), values("one_qlora", "train_loss").front());
}

TEST_F(DistTrain, ResumeOfTwoRanksContinuesTheCurve) {
    const nlohmann::json patch = {
        {"training",
         {{"max_steps", 8}, {"save_steps", 4}, {"eval_steps", nullptr}, {"per_device_train_batch_size", 2}}},
        {"data", {{"validation_split_percentage", 0}}}};
    const std::string resumed = expect_resume_continues_the_curve(patch);
    // A 1-rank resume of a 2-rank checkpoint is refused: its data position belongs to 2 ranks.
    const Finished wrong = train_alone(resumed, {"--resume_from_checkpoint", "latest", "--max_steps", "12"});
    EXPECT_EQ(wrong.exit_code, 1);
    EXPECT_NE(wrong.err.find("saved with world size 2, this run has 1"), std::string::npos) << wrong.err;
}

// On 3 or more ranks the order in which a gradient's ranks are added up depends on where it lies in its
// bucket (a ring allreduce starts each chunk at another rank), and the buckets are laid out again after the
// first step: the resumed run reduces in the layout its checkpoint recorded. Without it, this run's step 8
// differed from the straight run's in its last bits (4 ranks; 3 happened to agree on this tiny model).
TEST_F(DistTrain, ResumeOfFourRanksContinuesTheCurveBitForBit) {
    const nlohmann::json patch = {
        {"training",
         {{"max_steps", 8}, {"save_steps", 4}, {"eval_steps", nullptr}, {"per_device_train_batch_size", 2}}},
        {"data", {{"validation_split_percentage", 0}}}};
    expect_resume_continues_the_curve(patch, 4);
    const std::string state = slurp(dir_ / "resumed" / "checkpoint-4" / "state.json");
    EXPECT_NE(state.find("\"gradient_buckets\""), std::string::npos) << state;
    EXPECT_NE(slurp(dir_ / "launch4.err").find("buckets of <= 25 MiB, as the checkpoint's run had them"),
              std::string::npos);
}

// A long run that the tests below interrupt.
std::vector<std::string> long_run_flags(int timeout_s) {
    return {"--max_steps", "5000", "--save_steps", "1000000", "--ddp_timeout", std::to_string(timeout_s)};
}

TEST_F(DistTrain, KilledRankEndsTheRunWithAMessageNamingIt) {
    const int timeout_s = 20;
    Child launcher(launch_argv(2, write_config("killed", {{"training", {{"eval_steps", nullptr}}}}),
                               long_run_flags(timeout_s), {"--grace-s", "120"}),
                   dir_ / "killed.out", dir_ / "killed.err");
    ASSERT_TRUE(launcher.wait_for_text("\"step_num\": 3}", 120)) << slurp((dir_ / "killed.err").string());
    const pid_t rank1 = launcher.rank_pid(1);
    ASSERT_GT(rank1, 0);
    const auto killed_at = Clock::now();
    kill(rank1, SIGKILL);
    const Finished f = launcher.wait(timeout_s + 30);
    const double seconds = std::chrono::duration<double>(Clock::now() - killed_at).count();
    EXPECT_NE(f.exit_code, 0);
    EXPECT_LT(seconds, timeout_s + 10) << "rank 0 must not wait past the timeout";
    EXPECT_NE(f.err.find("0: train: rank 0: the run lost rank 1"), std::string::npos) << f.err;
    EXPECT_NE(f.err.find("during step"), std::string::npos) << f.err;
    EXPECT_NE(f.err.find("launch: rank 1 exited with code 137"), std::string::npos) << f.err;
}

// Freezes `frozen` (SIGSTOP) in a running 2-rank job; the other rank must exit on its own within the
// timeout (plus the heartbeat watch and store deadlines) with `message`; the launcher then stops the frozen
// rank.
void expect_freeze_ends_the_run(DistTrain& test, const fs::path& dir, int frozen, const std::string& message,
                                const std::string& detail, const std::string& sharding = "none") {
    const int timeout_s = 5;
    const std::string name = "frozen" + std::to_string(frozen);
    const nlohmann::json patch = {{"training", {{"eval_steps", nullptr}}},
                                  {"distributed", {{"sharding", sharding}}}};
    Child launcher(
        test.launch_argv(2, test.write_config(name, patch), long_run_flags(timeout_s), {"--grace-s", "1"}),
        dir / (name + ".out"), dir / (name + ".err"));
    ASSERT_TRUE(launcher.wait_for_text("\"step_num\": 3}", 120)) << slurp((dir / (name + ".err")).string());
    const pid_t pid = launcher.rank_pid(frozen);
    ASSERT_GT(pid, 0);
    const auto frozen_at = Clock::now();
    kill(pid, SIGSTOP);
    ASSERT_TRUE(launcher.wait_for_text(message, timeout_s + 20)) << slurp((dir / (name + ".err")).string());
    const double seconds = std::chrono::duration<double>(Clock::now() - frozen_at).count();
    EXPECT_GE(seconds, timeout_s - 1);  // it did wait for the collective's timeout
    EXPECT_LT(seconds, timeout_s + 15);
    const Finished f = launcher.wait(30);
    EXPECT_EQ(f.exit_code, 1) << f.err;
    EXPECT_NE(f.err.find(detail), std::string::npos) << f.err;
}

TEST_F(DistTrain, FrozenRankEndsTheRunWithinTheTimeout) {
    expect_freeze_ends_the_run(*this, dir_, 1, "0: train: rank 0: the run lost rank 1",
                               "frozen or on a dead node");
}

// Sharded, a rank's gathers and reductions wait on the frozen rank's sends (a ring on Gloo).
TEST_F(DistTrain, ShardedFrozenRankEndsTheRunWithinTheTimeout) {
    expect_freeze_ends_the_run(*this, dir_, 1, "0: train: rank 0: the run lost rank 1",
                               "frozen or on a dead node", "full");
}

// Sharded: a killed rank is named, and SIGTERM makes every rank write its shards into one checkpoint.
TEST_F(DistTrain, ShardedKilledRankIsNamedAndSigtermCheckpointsEveryShard) {
    const nlohmann::json patch = {{"training", {{"eval_steps", nullptr}}},
                                  {"distributed", {{"sharding", "full"}}}};
    {
        Child launcher(
            launch_argv(2, write_config("killed", patch), long_run_flags(20), {"--grace-s", "120"}),
            dir_ / "killed.out", dir_ / "killed.err");
        ASSERT_TRUE(launcher.wait_for_text("\"step_num\": 3}", 120)) << slurp((dir_ / "killed.err").string());
        const pid_t rank1 = launcher.rank_pid(1);
        ASSERT_GT(rank1, 0);
        kill(rank1, SIGKILL);
        const Finished f = launcher.wait(50);
        EXPECT_NE(f.exit_code, 0);
        EXPECT_NE(f.err.find("0: train: rank 0: the run lost rank 1"), std::string::npos) << f.err;
    }
    Child launcher(launch_argv(2, write_config("term", patch), long_run_flags(60)), dir_ / "term.out",
                   dir_ / "term.err");
    ASSERT_TRUE(launcher.wait_for_text("\"step_num\": 3}", 120)) << slurp((dir_ / "term.err").string());
    kill(launcher.pid(), SIGTERM);
    const Finished f = launcher.wait(60);
    EXPECT_EQ(f.exit_code, 128 + SIGTERM) << f.err;
    const std::vector<slipway::MllogEvent> stops =
        mllog_events((dir_ / "term" / "mllog.txt").string(), "run_stop");
    ASSERT_EQ(stops.size(), 1u);
    EXPECT_EQ(stops[0].metadata["status"], "aborted");
    const fs::path checkpoint =
        dir_ / "term" / ("checkpoint-" + std::to_string(stops[0].metadata["step_num"].get<int64_t>()));
    EXPECT_TRUE(fs::exists(checkpoint / "DONE"));
    EXPECT_TRUE(fs::exists(checkpoint / "shard-0-of-2.safetensors"));
    EXPECT_TRUE(fs::exists(checkpoint / "shard-1-of-2.safetensors"));
}

// Rank 0 holds the store too: every request to it goes unanswered, which must not hang the diagnosis.
TEST_F(DistTrain, FrozenMasterEndsTheRunWithinTheTimeout) {
    expect_freeze_ends_the_run(*this, dir_, 0, "1: train: rank 1: the run lost rank 0", "does not answer");
}

// A training thread that hangs while the process lives on (its heartbeat thread keeps beating): the
// others name it from its progress, which lags theirs.
TEST_F(DistTrain, HungTrainingThreadIsNamedWhileItsHeartbeatBeats) {
    const int timeout_s = 5;
    Child launcher(launch_argv(2, write_config("hung", {{"training", {{"eval_steps", nullptr}}}}),
                               long_run_flags(timeout_s), {"--grace-s", "1"}),
                   dir_ / "hung.out", dir_ / "hung.err", {"SLIPWAY_FAULT_HANG_AT=1:4"});
    const std::string message = "0: train: rank 0: the run lost rank 1 on " + slipway::dist::this_host() +
                                " during step 4: its heartbeat still beats";
    ASSERT_TRUE(launcher.wait_for_text(message, 120)) << slurp((dir_ / "hung.err").string());
    const Finished f = launcher.wait(30);
    EXPECT_EQ(f.exit_code, 1) << f.err;
    EXPECT_NE(f.err.find("1: rank 1: SLIPWAY_FAULT_HANG_AT: the training thread hangs at step 4"),
              std::string::npos)
        << f.err;
}

// With three ranks, the rank that was killed is the one named by every survivor, also by a survivor that
// diagnoses after another survivor already gave up and stopped beating.
TEST_F(DistTrain, ThreeRanksNameTheRankThatFailedFirst) {
    const int timeout_s = 20;
    Child launcher(launch_argv(3, write_config("three", {{"training", {{"eval_steps", nullptr}}}}),
                               long_run_flags(timeout_s), {"--grace-s", "120"}),
                   dir_ / "three.out", dir_ / "three.err");
    ASSERT_TRUE(launcher.wait_for_text("\"step_num\": 3}", 180)) << slurp((dir_ / "three.err").string());
    const pid_t rank2 = launcher.rank_pid(2);
    ASSERT_GT(rank2, 0);
    kill(rank2, SIGKILL);
    const Finished f = launcher.wait(timeout_s + 40);
    EXPECT_NE(f.exit_code, 0);
    EXPECT_NE(f.err.find("0: train: rank 0: the run lost rank 2 "), std::string::npos) << f.err;
    EXPECT_NE(f.err.find("1: train: rank 1: the run lost rank 2 "), std::string::npos) << f.err;
    for (const char* wrong : {"lost rank 0", "lost rank 1", "lost ranks"})
        EXPECT_EQ(f.err.find(wrong), std::string::npos) << wrong << " in\n" << f.err;
}

// A rank whose step throws its own error (not a collective's) tells the others why: every rank exits 1 within
// seconds (far below timeout_s and the launcher's grace), the other rank names it and its cause, and run_stop
// is fail with the cause in its metadata. Rank 0 failing is the hard case: it hosts the store.
TEST_F(DistTrain, ARankThatFailsOnItsOwnIsNamedWithItsCauseNotAsLost) {
    struct Case {
        int failing;
        std::string kind, cause, sharding;
    };
    for (const Case& c : {Case{1, "shape", "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)", "none"},
                          Case{0, "shape", "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)", "none"},
                          Case{1, "oom", "out of memory (std::bad_alloc)", "full"}}) {
        const std::string name = "fail" + std::to_string(c.failing) + "_" + c.sharding;
        const int other = 1 - c.failing;
        Child launcher(launch_argv(2,
                                   write_config(name, {{"training", {{"eval_steps", nullptr}}},
                                                       {"distributed", {{"sharding", c.sharding}}}}),
                                   long_run_flags(60), {"--grace-s", "60"}),
                       dir_ / (name + ".out"), dir_ / (name + ".err"),
                       {"SLIPWAY_FAULT_THROW_AT=" + std::to_string(c.failing) + ":4:" + c.kind});
        const Finished f = launcher.wait(120);
        EXPECT_EQ(f.exit_code, 1) << f.err;
        // Seen: 1.4 s from the start (rank 0 failing), 2.9 s (rank 1: rank 0 watches the heartbeats 2 s).
        EXPECT_LT(f.seconds, 30) << "the other rank must stop on its own, not at the timeout or the grace";
        const std::string failed = "rank " + std::to_string(c.failing) + " failed during step 4: " + c.cause;
        EXPECT_NE(f.err.find(std::to_string(c.failing) + ": train: " + failed), std::string::npos) << f.err;
        EXPECT_NE(f.err.find(std::to_string(other) + ": train: rank " + std::to_string(other) +
                             ": stopping: " + failed),
                  std::string::npos)
            << f.err;
        EXPECT_EQ(f.err.find("lost rank"), std::string::npos) << f.err;
        EXPECT_EQ(f.err.find("terminate"), std::string::npos) << f.err;
        expect_failed_run_stop((dir_ / name / "mllog.txt").string(), 4, failed);
    }
}

TEST_F(DistTrain, SigtermSavesACheckpointAndLogsAborted) {
    Child launcher(
        launch_argv(2, write_config("term", {{"training", {{"eval_steps", nullptr}}}}), long_run_flags(60)),
        dir_ / "term.out", dir_ / "term.err");
    ASSERT_TRUE(launcher.wait_for_text("\"step_num\": 3}", 120)) << slurp((dir_ / "term.err").string());
    kill(launcher.pid(), SIGTERM);  // as scancel does to the job step
    const Finished f = launcher.wait(60);
    EXPECT_EQ(f.exit_code, 128 + SIGTERM) << f.err;
    EXPECT_NE(f.err.find("stop requested (SIGTERM): saving a checkpoint"), std::string::npos) << f.err;
    const std::vector<slipway::MllogEvent> stops =
        mllog_events((dir_ / "term" / "mllog.txt").string(), "run_stop");
    ASSERT_EQ(stops.size(), 1u);
    EXPECT_EQ(stops[0].metadata["status"], "aborted");
    const int64_t step = stops[0].metadata["step_num"].get<int64_t>();
    EXPECT_TRUE(fs::exists(dir_ / "term" / ("checkpoint-" + std::to_string(step)) / "DONE")) << step;
}

TEST_F(DistTrain, LauncherReturnsTheFailingRanksCode) {
    const Finished f =
        run({test_paths::engine_bin(), "launch", "--nproc", "3", "--grace-s", "1", "--", "/bin/sh", "-c",
             "echo \"hello from $RANK of $WORLD_SIZE\"; if [ \"$RANK\" = 2 ]; then exit 7; fi; sleep 60"},
            "sh", 60);
    EXPECT_EQ(f.exit_code, 7) << f.err;
    EXPECT_LT(f.seconds, 30);
    for (int r = 0; r < 3; ++r)
        EXPECT_NE(f.out.find(std::to_string(r) + ": hello from " + std::to_string(r) + " of 3"),
                  std::string::npos)
            << f.out;
    EXPECT_NE(f.err.find("launch: rank 2 exited with code 7"), std::string::npos) << f.err;
    EXPECT_NE(f.err.find("stopping 2 remaining rank(s)"), std::string::npos) << f.err;
}

TEST_F(DistTrain, UnreachableMasterIsNamed) {
    const std::string config = write_config("lonely", {{"distributed", {{"timeout_s", 3}}}});
    Child child({test_paths::engine_bin(), "train", "--threads", "1", config}, dir_ / "lonely.out",
                dir_ / "lonely.err",
                {"RANK=1", "WORLD_SIZE=2", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1",
                 "MASTER_PORT=1", "SLIPWAY_RDZV_SECRET=0123456789abcdef"});
    const Finished f = child.wait(60);
    EXPECT_EQ(f.exit_code, 1);
    EXPECT_NE(f.err.find("rendezvous with the master 127.0.0.1:1 failed within /distributed/timeout_s = 3 s"),
              std::string::npos)
        << f.err;
}

// The port rank 0 published in a launcher's private folder under `tmpdir` (0 while there is none).
int published_port(const fs::path& tmpdir) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(tmpdir, ec)) {
        if (entry.path().filename().string().rfind("slipway-launch-", 0) != 0) continue;
        int port = 0;
        if (std::ifstream(entry.path() / "port") >> port) return port;
    }
    return 0;
}

TEST_F(DistTrain, AForeignStoreClientChangesNothing) {
    const Finished quiet = launch(2, write_config("quiet", {}));
    ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
    const fs::path tmpdir = dir_ / "tmp";
    fs::create_directories(tmpdir);
    Child launcher(launch_argv(2, write_config("attacked", {}), {}), dir_ / "attacked.out",
                   dir_ / "attacked.err", {"TMPDIR=" + tmpdir.string()});
    // In as soon as rank 0 publishes the port: before the Gloo rendezvous and the first step.
    int port = 0;
    for (int i = 0; i < 1200 && port == 0; ++i) {
        port = published_port(tmpdir);
        if (port == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_GT(port, 0) << slurp(dir_ / "attacked.err");
    std::atomic<bool> stop{false};
    auto intruder = std::async(
        std::launch::async, [&] { return slipway::testing_support::intrude_store("127.0.0.1", port, stop); });
    const Finished attacked = launcher.wait(300);
    stop = true;
    const int64_t accepted = intruder.get();
    ASSERT_EQ(attacked.exit_code, 0) << attacked.err;
    EXPECT_GT(accepted, 100) << "the intruder reached the store";
    const std::vector<double> a = values("quiet", "train_loss"), b = values("attacked", "train_loss");
    ASSERT_EQ(a.size(), 12u);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
        EXPECT_DOUBLE_EQ(a[i], b[i]) << "step " << i + 1;
    EXPECT_EQ(values("quiet", "eval_accuracy"), values("attacked", "eval_accuracy"));
}

// Slurm's variables for rank `rank` of a 2-task step of job `job` on this machine, port published by rank 0.
std::vector<std::string> slurm_rank_env(int rank, const std::string& job, const fs::path& port_file,
                                        const std::string& secret) {
    return {"SLURM_PROCID=" + std::to_string(rank),
            "SLURM_NTASKS=2",
            "SLURM_LOCALID=" + std::to_string(rank),
            "SLURM_NODEID=0",
            "SLURM_TASKS_PER_NODE=2",
            "SLURM_JOB_NODELIST=localhost",
            "SLURM_JOB_ID=" + job,
            "SLURM_STEP_ID=0",
            "MASTER_ADDR=127.0.0.1",
            "SLIPWAY_RDZV_FILE=" + port_file.string(),
            "SLIPWAY_RDZV_SECRET=" + secret};
}

TEST_F(DistTrain, TwoJobsWhoseJobIdsGaveTheSamePortBothRun) {
    // Before, both would have listened on 20000 + id % 20000 = 20007.
    const std::vector<std::string> jobs = {"7", "20007"};
    std::vector<std::unique_ptr<Child>> ranks;
    for (const std::string& job : jobs) {
        const std::string config =
            write_config("job" + job, {{"data", {{"cache_dir", (dir_ / ("cache" + job)).string()}}},
                                       {"training", {{"max_steps", 6}, {"eval_steps", nullptr}}}});
        for (int rank = 0; rank < 2; ++rank) {
            const std::string tag = "job" + job + "_" + std::to_string(rank);
            ranks.push_back(std::make_unique<Child>(
                std::vector<std::string>{test_paths::engine_bin(), "train", "--threads", "1", config},
                dir_ / (tag + ".out"), dir_ / (tag + ".err"),
                slurm_rank_env(rank, job, dir_ / ("job" + job + ".rdzv"),
                               "secret-of-job-" + job + "-0123456789")));
        }
    }
    std::vector<std::string> masters;
    for (auto& rank : ranks) {
        const Finished f = rank->wait(300);
        EXPECT_EQ(f.exit_code, 0) << f.err;
        const size_t at = f.err.find("process group via 127.0.0.1:");
        if (at != std::string::npos) masters.push_back(f.err.substr(at, f.err.find('\n', at) - at));
    }
    ASSERT_EQ(masters.size(), 2u) << "rank 0 of each job names its master";
    EXPECT_NE(masters[0], masters[1]);
    EXPECT_EQ(values("job7", "train_loss"), values("job20007", "train_loss"));
    EXPECT_EQ(values("job7", "train_loss").size(), 6u);
}

TEST_F(DistTrain, ARankWithoutTheJobsSecretIsRefused) {
    const std::string config = write_config("secret", {{"distributed", {{"timeout_s", 4}}}});
    const std::vector<std::string> argv{test_paths::engine_bin(), "train", "--threads", "1", config};
    const fs::path port_file = dir_ / ".rdzv";
    auto rank_env = [&](int rank, const std::string& secret, const std::string& port) {
        std::vector<std::string> env{"RANK=" + std::to_string(rank), "WORLD_SIZE=2", "LOCAL_RANK=0",
                                     "LOCAL_WORLD_SIZE=1", "MASTER_ADDR=127.0.0.1"};
        if (!secret.empty()) env.push_back("SLIPWAY_RDZV_SECRET=" + secret);
        env.push_back(port.empty() ? "SLIPWAY_RDZV_FILE=" + port_file.string() : "MASTER_PORT=" + port);
        return env;
    };
    Child missing(argv, dir_ / "missing.out", dir_ / "missing.err", rank_env(1, "", "29999"));
    const Finished m = missing.wait(60);
    EXPECT_EQ(m.exit_code, 1);
    EXPECT_NE(
        m.err.find("rank 1: SLIPWAY_RDZV_SECRET is not set: every rank of a multi-process run needs the "
                   "job's rendezvous secret"),
        std::string::npos)
        << m.err;

    // Rank 0 waits for a rank 1 with its secret far longer than the refused ones take.
    const std::vector<std::string> patient{test_paths::engine_bin(), "train", "--threads", "1", config,
                                           "--ddp_timeout",          "60"};
    Child rank0(patient, dir_ / "rank0.out", dir_ / "rank0.err", rank_env(0, "the-right-secret-0123", ""));
    int port = 0;
    for (int i = 0; i < 1200 && !(std::ifstream(port_file) >> port); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_GT(port, 0) << slurp(dir_ / "rank0.err");
    Child wrong_file(argv, dir_ / "wrong_file.out", dir_ / "wrong_file.err",
                     rank_env(1, "a-wrong-secret-0123", ""));
    const Finished f = wrong_file.wait(60);
    EXPECT_EQ(f.exit_code, 1);
    EXPECT_NE(f.err.find("holds a port published with another secret or by another job step (is "
                         "SLIPWAY_RDZV_SECRET the same on every rank?)"),
              std::string::npos)
        << f.err;
    Child wrong_store(argv, dir_ / "wrong_store.out", dir_ / "wrong_store.err",
                      rank_env(1, "a-wrong-secret-0123", std::to_string(port)));
    const Finished w = wrong_store.wait(60);
    EXPECT_EQ(w.exit_code, 1);
    EXPECT_NE(w.err.find("rank 1: the master 127.0.0.1:" + std::to_string(port) +
                         " answers but holds no key of this job"),
              std::string::npos)
        << w.err;
    EXPECT_NE(w.err.find("its SLIPWAY_RDZV_SECRET differs from this rank's"), std::string::npos) << w.err;
}

TEST_F(DistTrain, RanksThatResumeFromDifferentCheckpointsAreStopped) {
    const nlohmann::json patch = {{"training", {{"save_steps", 2}, {"eval_steps", nullptr}}}};
    const std::string a = write_config("a", patch);
    nlohmann::json other = patch;
    other["training"]["learning_rate"] = 1e-3;
    ASSERT_EQ(launch(2, a, {"--stop-after-steps", "4"}).exit_code, 0);
    ASSERT_EQ(launch(2, write_config("b", other), {"--stop-after-steps", "4"}).exit_code, 0);
    // Rank 1 sees another folder than rank 0's "latest" (a/checkpoint-4).
    auto resume_with_rank1_at = [&](const fs::path& checkpoint, const std::string& tag) {
        return run({test_paths::engine_bin(), "launch", "--nproc", "2", "--threads-per-rank", "1",
                    "--grace-s", "30", "--", "/bin/sh", "-c",
                    "if [ \"$RANK\" = 1 ]; then c=\"$2\"; else c=latest; fi; exec \"$0\" train \"$1\" "
                    "--resume_from_checkpoint \"$c\"",
                    test_paths::engine_bin(), a, checkpoint.string()},
                   tag, 120);
    };
    const Finished weights = resume_with_rank1_at(dir_ / "b" / "checkpoint-4", "weights");
    EXPECT_EQ(weights.exit_code, 1) << weights.err;
    for (const char* rank : {"0: ", "1: "})
        EXPECT_NE(
            weights.err.find(std::string(rank) + "train: rank " + rank[0] +
                             ": rank 1's parameters after loading step 4 differ from rank 0's (checksum "),
            std::string::npos)
            << weights.err;
    const Finished steps = resume_with_rank1_at(dir_ / "a" / "checkpoint-2", "steps");
    EXPECT_EQ(steps.exit_code, 1) << steps.err;
    EXPECT_NE(steps.err.find("the ranks resumed at different steps: rank 0 at step 4, rank 1 at step 2"),
              std::string::npos)
        << steps.err;
}

}  // namespace

namespace {

TEST_F(DistTrain, BenchCommPrintsOneCheckedRowPerSize) {
    const Finished f = run({test_paths::engine_bin(), "launch", "--nproc", "3", "--", "bench-comm", "--sizes",
                            "4K,1M", "--iters", "3"},
                           "bench", 120);
    ASSERT_EQ(f.exit_code, 0) << f.err;
    EXPECT_NE(f.out.find("0: # bench-comm: allreduce (sum, float32) over 3 ranks, gloo process group"),
              std::string::npos)
        << f.out;
    std::istringstream lines(f.out);
    int rows = 0;
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("0: #", 0) == 0 || line.rfind("0: ", 0) != 0) continue;
        std::istringstream fields(line.substr(3));
        std::string size, check;
        double count = 0, micros = 0, algbw = 0, busbw = 0;
        fields >> size >> count >> micros >> algbw >> busbw >> check;
        EXPECT_EQ(check, "ok") << line;
        EXPECT_GT(micros, 0) << line;
        EXPECT_NEAR(busbw, algbw * 4 / 3, 2e-3 * algbw + 2e-3) << "3 ranks: busbw = algbw x 2(n-1)/n";
        ++rows;
    }
    EXPECT_EQ(rows, 2) << f.out;
    EXPECT_EQ(f.out.find("1: "), std::string::npos) << "only rank 0 prints";
    EXPECT_EQ(f.out.find("2: "), std::string::npos) << "only rank 0 prints";
}

// The ranks agree on the path before measuring: NCCL asked for without a GPU on every rank is refused by
// every rank, each saying how many ranks have one, instead of one rank leaving the others waiting.
TEST_F(DistTrain, BenchCommNcclWithoutAGpuOnEveryRankIsRefusedByAll) {
    const Finished f = run({test_paths::engine_bin(), "launch", "--nproc", "2", "--grace-s", "30", "--",
                            "bench-comm", "--backend", "nccl", "--sizes", "4K", "--iters", "1"},
                           "bench_nccl", 120);
    if (f.exit_code == 0) GTEST_SKIP() << "every rank has a GPU here";
    EXPECT_EQ(f.exit_code, 1) << f.err;
    for (const char* rank : {"0: bench-comm: rank 0: ", "1: bench-comm: rank 1: "})
        EXPECT_NE(f.err.find(std::string(rank) + "--backend nccl needs a GPU on every rank"),
                  std::string::npos)
            << f.err;
    EXPECT_NE(f.err.find("0 of 2 ranks have one (this rank does not)"), std::string::npos) << f.err;
}

}  // namespace
