// Generation in parts: the sampler against transformers' warper rules and the softmax it draws from (counts
// over many draws with fixed seeds), the streamed text against whole-sequence decoding (UTF-8 split across
// tokens, stop strings held back and cut), the KV cache against full recomputation in chunks, generate()'s
// finish reasons and errors, the chat setup's sources, and the command's line-by-line errors. Greedy tokens
// against the independent reference: generate_reference_* (check_generate.sh).
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "chat/chat_setup.h"
#include "generate/generator.h"
#include "generate/sampling.h"
#include "generate/text_stream.h"
#include "model/weights.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"

namespace slipway::generate {
namespace {

namespace fs = std::filesystem;
const std::string kSource = test_paths::source_dir();

std::vector<int64_t> draws(const SamplingOptions& options, const std::vector<float>& logits, int n) {
    TokenSampler sampler(options);
    std::vector<int64_t> out;
    for (int i = 0; i < n; ++i)
        out.push_back(sampler.next(logits.data(), static_cast<int64_t>(logits.size())));
    return out;
}

std::map<int64_t, double> frequencies(const std::vector<int64_t>& ids) {
    std::map<int64_t, double> f;
    for (int64_t id : ids)
        f[id] += 1.0 / static_cast<double>(ids.size());
    return f;
}

TEST(Sampler, GreedyIsTheFirstMaximum) {
    const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f};
    EXPECT_EQ(draws({}, logits, 3), (std::vector<int64_t>{1, 1, 1}));
}

TEST(Sampler, DrawsFollowTheWarpedSoftmax) {
    // Probabilities 0.5, 0.3, 0.15, 0.05 at temperature 1.
    const std::vector<double> p = {0.5, 0.3, 0.15, 0.05};
    std::vector<float> logits;
    for (double x : p)
        logits.push_back(static_cast<float>(std::log(x)));
    constexpr int kDraws = 200000;  // the standard error of a frequency is below 0.0012
    SamplingOptions plain;
    plain.temperature = 1.0;
    plain.seed = 11;
    std::map<int64_t, double> f = frequencies(draws(plain, logits, kDraws));
    for (int i = 0; i < 4; ++i)
        EXPECT_NEAR(f[i], p[i], 0.005) << i;

    // Temperature 0.5 squares the probabilities before normalizing.
    SamplingOptions cold = plain;
    cold.temperature = 0.5;
    f = frequencies(draws(cold, logits, kDraws));
    const double z = 0.25 + 0.09 + 0.0225 + 0.0025;
    for (int i = 0; i < 4; ++i)
        EXPECT_NEAR(f[i], p[i] * p[i] / z, 0.005) << i;

    // top_k 2: the two most likely, renormalized.
    SamplingOptions top_k = plain;
    top_k.top_k = 2;
    f = frequencies(draws(top_k, logits, kDraws));
    EXPECT_EQ(f.size(), 2u);
    EXPECT_NEAR(f[0], 0.5 / 0.8, 0.005);

    // top_p 0.7: from the least likely up, 0.05 and 0.2 are at most 0.3 and go; 0.5 is not and stays.
    SamplingOptions top_p = plain;
    top_p.top_p = 0.7;
    f = frequencies(draws(top_p, logits, kDraws));
    EXPECT_EQ(f.size(), 2u);
    EXPECT_NEAR(f[1], 0.3 / 0.8, 0.005);
}

TEST(Sampler, SeedsRepeatAndNarrowWarpersAreGreedy) {
    std::vector<float> logits(1000);
    for (size_t i = 0; i < logits.size(); ++i)
        logits[i] = static_cast<float>(std::sin(static_cast<double>(i) * 0.37) * 3.0);
    SamplingOptions a;
    a.temperature = 0.9;
    a.seed = 42;
    EXPECT_EQ(draws(a, logits, 50), draws(a, logits, 50));
    SamplingOptions b = a;
    b.seed = 43;
    EXPECT_NE(draws(a, logits, 50), draws(b, logits, 50));
    const int64_t argmax = std::max_element(logits.begin(), logits.end()) - logits.begin();
    SamplingOptions k1 = a;
    k1.top_k = 1;
    EXPECT_EQ(draws(k1, logits, 20), std::vector<int64_t>(20, argmax));
    SamplingOptions p0 = a;
    p0.top_p = 1e-9;
    EXPECT_EQ(draws(p0, logits, 20), std::vector<int64_t>(20, argmax));
}

class TextStreamTest : public ::testing::Test {
protected:
    void SetUp() override {
        Result<tokenizer::Tokenizer> t =
            tokenizer::Tokenizer::from_file(kSource + "/resources/demo/tokenizer.json");
        ASSERT_TRUE(t.ok()) << t.error();
        tokenizer_ = std::make_unique<tokenizer::Tokenizer>(std::move(*t));
    }
    std::vector<int64_t> ids(const std::string& text) const {
        const std::vector<int32_t> e = tokenizer_->encode(text);
        return {e.begin(), e.end()};
    }
    std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
};

bool valid_utf8_without_replacement(const std::string& s) {
    return s.find("\xEF\xBF\xBD") == std::string::npos;
}

TEST_F(TextStreamTest, DeltasAddUpToTheDecodedText) {
    const std::string text = "Привет, мир. Ёлка — 3,5 км! 😀 end";
    const std::vector<int64_t> prompt = ids("Вопрос:");
    TextStream stream(*tokenizer_, prompt, {});
    std::string joined;
    for (int64_t id : ids(text)) {
        Result<TextStream::Update> u = stream.push(id);
        ASSERT_TRUE(u.ok()) << u.error();
        EXPECT_TRUE(valid_utf8_without_replacement(u->delta)) << u->delta;
        joined += u->delta;
    }
    joined += stream.finish();
    EXPECT_EQ(joined, text);
    EXPECT_EQ(stream.text(), text);
}

TEST_F(TextStreamTest, StopStringCutsTheTextAndIsNeverStreamed) {
    const std::string text = "Да. ### Ответ: нет";
    TextStream stream(*tokenizer_, ids("Q"), {"###", "Никогда"});
    std::string joined;
    bool stopped = false;
    for (int64_t id : ids(text)) {
        Result<TextStream::Update> u = stream.push(id);
        ASSERT_TRUE(u.ok());
        EXPECT_EQ(u->delta.find('#'), std::string::npos) << "a stop string's start was streamed";
        joined += u->delta;
        if (u->stopped) {
            stopped = true;
            break;
        }
    }
    EXPECT_TRUE(stopped);
    EXPECT_EQ(stream.stop_string(), "###");
    EXPECT_EQ(joined + stream.finish(), "Да. ");
    EXPECT_EQ(stream.text(), "Да. ");
}

TEST_F(TextStreamTest, HeldBackPrefixIsReleasedWhenItIsNotAStop) {
    TextStream stream(*tokenizer_, ids("Q"), {"##!"});
    std::string joined;
    for (int64_t id : ids("a ## b")) {
        Result<TextStream::Update> u = stream.push(id);
        ASSERT_TRUE(u.ok());
        EXPECT_FALSE(u->stopped);
        joined += u->delta;
    }
    EXPECT_EQ(joined + stream.finish(), "a ## b");
}

model::LlamaForCausalLM tiny_model(const std::string& model_type, int64_t window = 0) {
    nlohmann::json j = {{"model_type", model_type}, {"vocab_size", 4096},
                        {"hidden_size", 32},        {"intermediate_size", 64},
                        {"num_hidden_layers", 2},   {"num_attention_heads", 4},
                        {"num_key_value_heads", 2}, {"max_position_embeddings", 64}};
    if (model_type == "mistral") j["sliding_window"] = window;
    Result<model::LlamaConfig> c = model::LlamaConfig::from_json(j);
    EXPECT_TRUE(c.ok()) << c.error();
    model::LlamaForCausalLM m(*c);
    model::init_weights(m, 3);
    m->eval();
    return m;
}

// Positions fed in chunks of 5, 1, 3, 1 through the cache give the logits of the whole sequence at once.
TEST(KvCache, ChunkedDecodingEqualsFullRecomputation) {
    for (const auto& [family, window] : std::vector<std::pair<std::string, int64_t>>{
             {"llama", 0}, {"qwen2", 0}, {"qwen3", 0}, {"mistral", 4}}) {
        model::LlamaForCausalLM m = tiny_model(family, window);
        torch::NoGradGuard no_grad;
        const torch::Tensor ids = torch::randint(4096, {1, 10}, torch::kInt64);
        const torch::Tensor full = m->logits(ids)[0];  // (10, V)
        model::KvCache cache = m->make_cache(1, 16);
        int64_t at = 0;
        for (int64_t chunk : {5, 1, 3, 1}) {
            const torch::Tensor next = m->next_token_logits(ids.slice(1, at, at + chunk), cache)[0];  // (V)
            at += chunk;
            EXPECT_TRUE(torch::allclose(next, full[at - 1], 1e-5, 1e-5))
                << family << " after " << at << ": max diff "
                << (next - full[at - 1]).abs().max().item<float>();
        }
        EXPECT_EQ(cache.length, 10);
    }
}

TEST_F(TextStreamTest, GenerateEndsOnEosLengthOrTheContextLimit) {
    model::LlamaForCausalLM m = tiny_model("llama");
    const std::vector<int64_t> prompt = ids("Однажды");
    GenerateOptions options;
    options.max_new_tokens = 6;
    Result<Generation> g = generate(m, *tokenizer_, prompt, options);
    ASSERT_TRUE(g.ok()) << g.error();
    EXPECT_EQ(g->finish_reason, "length");
    EXPECT_EQ(g->ids.size(), 6u);
    EXPECT_EQ(g->prompt_tokens, static_cast<int64_t>(prompt.size()));

    options.eos_ids = {g->ids[2]};  // greedy repeats itself: the third token now ends the text
    Result<Generation> eos = generate(m, *tokenizer_, prompt, options);
    ASSERT_TRUE(eos.ok());
    EXPECT_EQ(eos->finish_reason, "eos");
    EXPECT_LE(eos->ids.size(), 3u);
    EXPECT_EQ(eos->ids.back(), g->ids[2]);

    options.eos_ids.clear();
    options.max_new_tokens = 1000;  // past max_position_embeddings (64): stops there
    Result<Generation> capped = generate(m, *tokenizer_, prompt, options);
    ASSERT_TRUE(capped.ok());
    EXPECT_EQ(capped->finish_reason, "length");
    EXPECT_EQ(static_cast<int64_t>(capped->ids.size() + prompt.size()), 64);

    Result<Generation> too_long = generate(m, *tokenizer_, std::vector<int64_t>(64, 5), options);
    ASSERT_FALSE(too_long.ok());
    EXPECT_NE(too_long.error().find("max_position_embeddings (64)"), std::string::npos) << too_long.error();
    EXPECT_FALSE(generate(m, *tokenizer_, {}, options).ok());
}

TEST(ChatSetup, TemplateFromConfigOrJinjaFileAndTokensAsAddedTokens) {
    const fs::path dir = fs::temp_directory_path() / ("slipway_chat_setup_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    Result<chat::ChatSetup> none = chat::read_chat_setup(dir.string());
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.error().find("no chat template"), std::string::npos) << none.error();
    EXPECT_EQ(none.code(), StatusCode::kNotFound);  // generate --chat exits chat::kExitNoChatTemplate on it

    std::ofstream(dir / "chat_template.jinja")
        << "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
           "{% if add_generation_prompt %}<assistant>{% endif %}";
    std::ofstream(dir / "tokenizer_config.json") << R"({"bos_token": {"content": "<s>", "lstrip": false},
                                                       "eos_token": "</s>"})";
    Result<chat::ChatSetup> setup = chat::read_chat_setup(dir.string());
    ASSERT_TRUE(setup.ok()) << setup.error();
    EXPECT_EQ(setup->bos_token, "<s>");
    EXPECT_EQ(setup->eos_token, "</s>");
    Result<std::string> text =
        chat::render_conversation(*setup, nlohmann::json::parse(R"([{"role": "user", "content": "hi"}])"));
    ASSERT_TRUE(text.ok()) << text.error();
    EXPECT_EQ(*text, "<s><user>hi<assistant>");
    EXPECT_FALSE(chat::render_conversation(*setup, nlohmann::json::parse(R"([{"content": "hi"}])")).ok());

    // tokenizer_config.json's own template wins; a list of named templates gives "default".
    std::ofstream(dir / "tokenizer_config.json")
        << R"({"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D{{ messages|length }}"}]})";
    setup = chat::read_chat_setup(dir.string());
    ASSERT_TRUE(setup.ok()) << setup.error();
    text = chat::render_conversation(*setup, nlohmann::json::parse(R"([{"role": "user", "content": "x"}])"));
    EXPECT_EQ(*text, "D1");
    std::ofstream(dir / "tokenizer_config.json") << R"({"chat_template": "{% if %}"})";
    Result<chat::ChatSetup> bad = chat::read_chat_setup(dir.string());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("tokenizer_config.json: chat_template:"), std::string::npos) << bad.error();
    fs::remove_all(dir);
}

// The command: one output line per input line, a bad line named by file and line without stopping the rest.
TEST(GenerateCommand, BadLinesAreNamedAndTheOthersStillAnswer) {
    const fs::path dir = fs::temp_directory_path() / ("slipway_generate_cli_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    model::LlamaForCausalLM m = tiny_model("qwen2");
    ASSERT_TRUE(model::save_hf_model(m, (dir / "model").string(), "float32").ok());
    fs::copy_file(kSource + "/resources/demo/tokenizer.json", dir / "model" / "tokenizer.json");
    std::ofstream(dir / "prompts.jsonl") << R"({"text": "Однажды"})"
                                         << "\n"
                                         << R"({"ids": [1, 99999]})"
                                         << "\n"
                                         << "not json\n"
                                         << R"({"messages": [{"role": "user", "content": "x"}]})"
                                         << "\n"
                                         << R"({"ids": [5, 6, 7]})"
                                         << "\n";
    const std::string command = std::string(test_paths::engine_bin()) + " generate --model " +
                                (dir / "model").string() + " --prompts " + (dir / "prompts.jsonl").string() +
                                " --max-new-tokens 4 --stream --echo-prompt >" +
                                (dir / "out.jsonl").string() + " 2>" + (dir / "err.txt").string();
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1);
    std::ifstream out(dir / "out.jsonl");
    std::vector<nlohmann::json> results;
    std::string streamed;
    for (std::string line; std::getline(out, line);) {
        const nlohmann::json j = nlohmann::json::parse(line);
        if (j.contains("delta")) {
            streamed += j["delta"].get<std::string>();
        } else {
            results.push_back(j);
        }
    }
    ASSERT_EQ(results.size(), 5u);
    EXPECT_EQ(results[0]["new_tokens"], 4);
    EXPECT_NE(results[1]["error"].get<std::string>().find("prompts.jsonl:2: id 99999 is not a token"),
              std::string::npos)
        << results[1];
    EXPECT_NE(results[2]["error"].get<std::string>().find("prompts.jsonl:3:"), std::string::npos)
        << results[2];
    EXPECT_NE(results[3]["error"].get<std::string>().find("prompts.jsonl:4: \"messages\" needs --chat"),
              std::string::npos)
        << results[3];
    EXPECT_EQ(results[4]["prompt_tokens"], 3);
    // --echo-prompt: the tokens fed, and the text where the line had one.
    EXPECT_EQ(results[0]["prompt"].get<std::string>(), "Однажды");
    EXPECT_EQ(results[0]["prompt_ids"].size(), results[0]["prompt_tokens"].get<size_t>());
    EXPECT_EQ(results[4]["prompt_ids"], nlohmann::json::parse("[5, 6, 7]"));
    EXPECT_FALSE(results[4].contains("prompt"));
    EXPECT_EQ(streamed, results[0]["text"].get<std::string>() + results[4]["text"].get<std::string>());
    fs::remove_all(dir);
}

}  // namespace
}  // namespace slipway::generate
