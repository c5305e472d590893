// Conversations as training data (data/conversation.h, data/conversation_encoder.h): the three JSONL shapes
// and their refusals, the format told by the first line, and the labels of real chat templates
// (tests/data/chat-templates) over real tokenizers (tests/data/tokenizers, from the tokenizer fixture): each
// trained span decodes to the assistant's content and the template's end-of-turn marker, nothing else; and
// `prepare` of a conversation file: one padded block a conversation, the untrained tokens marked, the long
// ones dropped or cut and counted, a bad line named by file and line.
// The ids are checked against transformers' apply_chat_template in the forky root (hf_reference.py).
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chat/chat_setup.h"
#include "data/conversation.h"
#include "data/conversation_encoder.h"
#include "data/prepare.h"
#include "data/token_cache.h"
#include "data_test_support.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"

namespace slipway::data {
namespace {

using nlohmann::json;

Conversation parsed(const std::string& line, DataFormat format) {
    Result<Conversation> c = parse_conversation(json::parse(line), format);
    EXPECT_TRUE(c.ok()) << c.error();
    return c.ok() ? *c : Conversation{};
}

std::string refusal(const std::string& line, DataFormat format) {
    Result<Conversation> c = parse_conversation(json::parse(line), format);
    EXPECT_FALSE(c.ok()) << line;
    return c.ok() ? "" : c.error();
}

TEST(Conversation, ReadsTheThreeShapesIntoOneListOfTurns) {
    const Conversation m = parsed(
        R"({"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},)"
        R"( {"role": "assistant", "content": "Hello."}]})",
        DataFormat::kMessages);
    ASSERT_EQ(m.turns.size(), 3u);
    EXPECT_EQ(m.turns[0].role, "system");
    EXPECT_EQ(m.turns[2].content, "Hello.");
    EXPECT_EQ(m.messages()[1], json({{"role", "user"}, {"content", "Hi"}}));

    const Conversation s = parsed(
        R"({"conversations": [{"from": "human", "value": "Привет"}, {"from": "gpt", "value": "Здравствуйте"}]})",
        DataFormat::kShareGpt);
    ASSERT_EQ(s.turns.size(), 2u);
    EXPECT_EQ(s.turns[0].role, "user");
    EXPECT_EQ(s.turns[1].role, "assistant");
    EXPECT_EQ(s.turns[1].content, "Здравствуйте");

    const Conversation a =
        parsed(R"({"instruction": "Translate", "input": "cat", "output": "кошка"})", DataFormat::kAlpaca);
    ASSERT_EQ(a.turns.size(), 2u);
    EXPECT_EQ(a.turns[0].content, "Translate\n\ncat");
    EXPECT_EQ(a.turns[1].content, "кошка");
    const Conversation no_input =
        parsed(R"({"instruction": "Say hi", "input": "", "output": "hi", "system": "You are kind."})",
               DataFormat::kAlpaca);
    ASSERT_EQ(no_input.turns.size(), 3u);
    EXPECT_EQ(no_input.turns[0].role, "system");
    EXPECT_EQ(no_input.turns[1].content, "Say hi");
}

TEST(Conversation, RefusesWhatCannotBeTrainedAndSaysWhere) {
    EXPECT_EQ(refusal(R"({"messages": []})", DataFormat::kMessages), "\"messages\" is empty");
    EXPECT_EQ(refusal(R"({"text": "hi"})", DataFormat::kMessages), "no \"messages\" list");
    EXPECT_EQ(
        refusal(R"({"messages": [{"role": "user", "content": "hi"}, {"role": "critic", "content": "meh"}]})",
                DataFormat::kMessages),
        "messages[1]: unknown role \"critic\" (expected system, user or assistant)");
    EXPECT_EQ(refusal(R"({"messages": [{"role": "user", "content": "hi"}]})", DataFormat::kMessages),
              "no assistant turn: nothing to learn from");
    EXPECT_EQ(
        refusal(
            R"({"messages": [{"role": "user", "content": ["a"]}, {"role": "assistant", "content": "b"}]})",
            DataFormat::kMessages),
        "messages[0]: \"content\" is not a string but array");
    EXPECT_EQ(refusal(R"({"messages": ["hi"]})", DataFormat::kMessages), "messages[0] is not an object");
    EXPECT_EQ(refusal(R"({"conversations": [{"from": "bot", "value": "x"}]})", DataFormat::kShareGpt),
              "conversations[0]: unknown from \"bot\" (expected human, gpt or system)");
    EXPECT_EQ(refusal(R"({"conversations": [{"from": "human"}]})", DataFormat::kShareGpt),
              "conversations[0]: no \"value\"");
    EXPECT_EQ(refusal(R"({"instruction": "x"})", DataFormat::kAlpaca), "no \"output\"");
    EXPECT_EQ(refusal(R"({"instruction": 5, "output": "y"})", DataFormat::kAlpaca),
              "\"instruction\" is not a string but number");
    EXPECT_EQ(refusal(R"([1, 2])", DataFormat::kMessages), "not a JSON object");
}

TEST(Conversation, TheFirstLineTellsTheFormat) {
    std::string found;
    Result<DataFormat> f = detect_data_format(json::parse(R"({"messages": []})"), "text", &found);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(*f, DataFormat::kMessages);
    EXPECT_EQ(found, "a \"messages\" list (OpenAI/HF chat)");
    EXPECT_EQ(*detect_data_format(json::parse(R"({"conversations": []})"), "text"), DataFormat::kShareGpt);
    EXPECT_EQ(*detect_data_format(json::parse(R"({"instruction": "a", "output": "b"})"), "text"),
              DataFormat::kAlpaca);
    EXPECT_EQ(*detect_data_format(json::parse(R"({"body": "a"})"), "body", &found), DataFormat::kText);
    EXPECT_EQ(found, "a \"body\" field (plain text)");
    EXPECT_EQ(*detect_data_format(json::parse(R"({"prompt": "a", "answer": "b"})"), "text", &found),
              DataFormat::kText)
        << "the text reader then refuses the lines, naming the missing field";
    EXPECT_FALSE(detect_data_format(json::parse("[1]"), "text").ok());
    EXPECT_EQ(data_format_named("alpaca").value(), DataFormat::kAlpaca);
    EXPECT_FALSE(data_format_named("auto").ok());
    EXPECT_EQ(train_on_named("last_assistant").value(), TrainOn::kLastAssistant);
    EXPECT_FALSE(train_on_named("user").ok());
}

// A chat template of tests/data/chat-templates over one of the fixture's real tokenizers.
struct Template {
    const char* file;
    const char* tokenizer;  // tests/data/tokenizers/NAME
    const char* bos;
    const char* eos;
    const char* marker;  // what ends an assistant turn
    // What the template prints before the content of the conversation's last assistant turn (Qwen3: the
    // empty reasoning block its generation starts with), trained with it.
    const char* last_turn_prefix = "";
    bool system = true;  // takes a system turn (Mistral v0.2's raises on one, as in transformers)
};
void PrintTo(const Template& t, std::ostream* os) {
    *os << t.file << " over " << t.tokenizer;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

class ChatLabels : public testing::TestWithParam<Template> {
protected:
    void SetUp() override {
        const std::string tokenizer_file =
            std::string(test_paths::reference_dir("/tokenizers/")) + GetParam().tokenizer + "/tokenizer.json";
        Result<tokenizer::Tokenizer> t = tokenizer::Tokenizer::from_file(tokenizer_file);
        ASSERT_TRUE(t.ok()) << t.error();
        tok_ = std::make_unique<tokenizer::Tokenizer>(std::move(*t));
        Result<chat::ChatTemplate> parsed = chat::parse_chat_template(
            read_file(std::string(test_paths::source_dir("/tests/data/chat-templates/")) + GetParam().file));
        ASSERT_TRUE(parsed.ok()) << parsed.error();
        setup_.chat_template = *parsed;
        setup_.bos_token = GetParam().bos;
        setup_.eos_token = GetParam().eos;
        setup_.source = GetParam().file;
    }

    EncodedConversation encode(const std::vector<Turn>& turns, TrainOn train_on = TrainOn::kAssistant) {
        Result<EncodedConversation> e = encode_conversation(Conversation{turns}, setup_, *tok_, train_on);
        EXPECT_TRUE(e.ok()) << e.error();
        return e.ok() ? *e : EncodedConversation{};
    }

    // The trained spans, decoded (special tokens kept), in order.
    std::vector<std::string> spans(const EncodedConversation& e) {
        std::vector<std::string> out;
        EXPECT_EQ(e.ids.size(), e.labels.size());
        for (size_t i = 0; i < e.labels.size();) {
            if (e.labels[i] == kIgnoredLabel) {
                ++i;
                continue;
            }
            std::vector<int32_t> span;
            for (; i < e.labels.size() && e.labels[i] != kIgnoredLabel; ++i) {
                EXPECT_EQ(e.labels[i], e.ids[i]) << "a trained label is its token's id";
                span.push_back(e.ids[i]);
            }
            Result<std::string> text = tok_->decode(span, false);
            EXPECT_TRUE(text.ok());
            // SentencePiece decoders drop a word's leading space at the start of a decode.
            out.push_back(text.ok() ? (text->rfind(' ', 0) == 0 ? text->substr(1) : *text) : "");
        }
        return out;
    }

    std::unique_ptr<tokenizer::Tokenizer> tok_;
    chat::ChatSetup setup_;
};

TEST_P(ChatLabels, EachAssistantTurnThroughItsEndOfTurnMarker) {
    const std::string marker = GetParam().marker, last = GetParam().last_turn_prefix;
    std::vector<Turn> turns{{"user", "Hi"},
                            {"assistant", "Hello."},
                            {"user", "Почему трава зелёная?"},
                            {"assistant", "Из-за хлорофилла."}};
    if (GetParam().system) turns.insert(turns.begin(), Turn{"system", "Be brief."});
    const EncodedConversation e = encode(turns);
    Result<std::string> whole = chat::render_messages(setup_, Conversation{turns}.messages(), false);
    ASSERT_TRUE(whole.ok()) << whole.error();
    EXPECT_EQ(e.ids, tok_->encode(*whole, false))
        << "the ids are the rendered conversation's, as HF tokenizes it";
    EXPECT_EQ(spans(e), (std::vector<std::string>{"Hello." + marker, last + "Из-за хлорофилла." + marker}));
    EXPECT_LT(e.trained(), e.ids.size() / 2) << "the prompt, system text and headers are not trained";

    const EncodedConversation last_only =
        encode({{"user", "Hi"}, {"assistant", "Hello."}, {"user", "Bye"}, {"assistant", "Goodbye."}},
               TrainOn::kLastAssistant);
    EXPECT_EQ(spans(last_only), (std::vector<std::string>{last + "Goodbye." + marker}));
    const EncodedConversation all = encode({{"user", "Hi"}, {"assistant", "Hello."}}, TrainOn::kAll);
    EXPECT_EQ(all.labels, all.ids);
}

TEST_P(ChatLabels, AnEmptyAnswerTrainsItsMarkerOnly) {
    const EncodedConversation e = encode({{"user", "Hi"}, {"assistant", ""}});
    EXPECT_EQ(spans(e),
              (std::vector<std::string>{std::string(GetParam().last_turn_prefix) + GetParam().marker}));
}

INSTANTIATE_TEST_SUITE_P(
    Templates, ChatLabels,
    testing::Values(
        Template{"llama-3-instruct.jinja", "llama3", "<|begin_of_text|>", "<|eot_id|>", "<|eot_id|>"},
        Template{"qwen2.5-instruct.jinja", "qwen3", "", "<|im_end|>", "<|im_end|>"},
        Template{"qwen3.jinja", "qwen3", "", "<|im_end|>", "<|im_end|>", "<think>\n\n</think>\n\n"},
        Template{"mistral-instruct-v0.2.jinja", "llama2", "<s>", "</s>", "</s>", "", false},
        // Puts the system prompt into the last user turn: earlier prompts are not prefixes.
        Template{"mistral-nemo-instruct-2407.jinja", "llama2", "<s>", "</s>", "</s>"}),
    [](const testing::TestParamInfo<Template>& info) {
        std::string name = info.param.file;
        name = name.substr(0, name.find(".jinja"));
        for (char& c : name)
            if (!isalnum(static_cast<unsigned char>(c))) c = '_';
        return name;
    });

// A model folder as HF writes one for chat: Qwen's tokenizer and the Qwen2.5 template in
// tokenizer_config.json.
class PrepareConversations : public testing::Test {
protected:
    void SetUp() override {
        dir_ = test::fresh_dir(testing::UnitTest::GetInstance()->current_test_info()->name());
        const std::string model = dir_ + "/model";
        std::filesystem::create_directories(model);
        std::filesystem::copy_file(std::string(test_paths::reference_dir("/tokenizers/qwen3/tokenizer.json")),
                                   model + "/tokenizer.json");
        const json tokenizer_config = {
            {"chat_template", read_file(std::string(test_paths::source_dir()) +
                                        "/tests/data/chat-templates/qwen2.5-instruct.jinja")},
            {"eos_token", "<|im_end|>"}};
        test::write_file(model + "/tokenizer_config.json", tokenizer_config.dump());
        Result<tokenizer::Tokenizer> t = tokenizer::Tokenizer::from_file(model + "/tokenizer.json");
        ASSERT_TRUE(t.ok()) << t.error();
        tok_ = std::make_unique<tokenizer::Tokenizer>(std::move(*t));
        config_ = test::make_config(dir_, dir_ + "/train.jsonl");
        config_.tokenizer.path = "";  // the model's
        config_.data.validation_split_percentage = 0;
        config_.data.block_size = 64;
        config_.data.format = "messages";
    }

    static std::string line(const std::string& user, const std::string& assistant) {
        return json{
                   {"messages",
                    {{{"role", "user"}, {"content", user}}, {{"role", "assistant"}, {"content", assistant}}}}}
                   .dump() +
               "\n";
    }

    // The trained tokens of each block, decoded.
    std::vector<std::string> trained_text(const TokenCache& cache) {
        std::vector<std::string> out;
        for (size_t b = 0; b < cache.num_blocks(Split::kTrain); ++b) {
            std::vector<int32_t> ids;
            for (const uint32_t id : cache.block(Split::kTrain, b)) {
                if ((id & kUntrainedTokenBit) == 0) ids.push_back(static_cast<int32_t>(id));
            }
            out.push_back(tok_->decode(ids, false).value());
        }
        return out;
    }

    std::string dir_;
    RunConfig config_;
    std::unique_ptr<tokenizer::Tokenizer> tok_;
};

TEST_F(PrepareConversations, OnePaddedBlockAConversationWithItsAnswersMarkedTrained) {
    std::string long_answer;
    for (int i = 0; i < 80; ++i)
        long_answer += "word ";
    test::write_file(config_.data.train_file,
                     line("Hi", "Hello.") + line("Tell me more", long_answer) + line("Как дела?", "Хорошо."));
    Result<PrepareReport> report = prepare_token_cache(config_);
    ASSERT_TRUE(report.ok()) << report.error();
    const CacheMeta& m = report->meta;
    EXPECT_EQ(m.data_format, "messages");
    EXPECT_EQ(m.train_on, "assistant");
    EXPECT_EQ(m.conversations_dropped, 1u) << "longer than the 64-token block: dropped and counted";
    EXPECT_EQ(m.conversations_truncated, 0u);
    EXPECT_EQ(m.train.documents, 2u);
    EXPECT_EQ(m.train.blocks, 2u);
    EXPECT_EQ(m.train.tokens, 2u * 64u) << "each conversation padded to the block";
    Result<TokenCache> cache = TokenCache::open(report->cache_path);
    ASSERT_TRUE(cache.ok()) << cache.error();
    EXPECT_EQ(trained_text(*cache), (std::vector<std::string>{"Hello.<|im_end|>", "Хорошо.<|im_end|>"}));
    EXPECT_EQ(m.train.trained_tokens, tok_->encode("Hello.").size() + tok_->encode("Хорошо.").size() + 2);

    // The same file cut instead of dropped: three blocks, the long answer's start trained.
    config_.data.truncation = "truncate_right";
    Result<PrepareReport> cut = prepare_token_cache(config_);
    ASSERT_TRUE(cut.ok()) << cut.error();
    EXPECT_NE(cut->cache_path, report->cache_path) << "truncation is part of the cache key";
    EXPECT_EQ(cut->meta.conversations_truncated, 1u);
    EXPECT_EQ(cut->meta.conversations_dropped, 0u);
    EXPECT_EQ(cut->meta.train.blocks, 3u);
}

TEST_F(PrepareConversations, AutoTellsTheFormatAndABadLineIsNamed) {
    config_.data.format = "auto";
    test::write_file(config_.data.train_file, line("Hi", "Hello.") + "{\"messages\": []}\n");
    Result<PrepareReport> bad = prepare_token_cache(config_);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error(), config_.data.train_file + ":2: \"messages\" is empty");

    test::write_file(config_.data.train_file, line("Hi", "Hello.") + line("Bye", "Goodbye."));
    Result<PrepareReport> report = prepare_token_cache(config_);
    ASSERT_TRUE(report.ok()) << report.error();
    EXPECT_EQ(report->meta.data_format, "messages");
    EXPECT_EQ(report->format_found, "a \"messages\" list (OpenAI/HF chat)");
    config_.data.train_on = "all";
    Result<PrepareReport> all = prepare_token_cache(config_);
    ASSERT_TRUE(all.ok()) << all.error();
    Result<chat::ChatSetup> setup = chat::read_chat_setup(dir_ + "/model");
    ASSERT_TRUE(setup.ok()) << setup.error();
    size_t rendered = 0;
    for (const auto& [user, assistant] :
         {std::pair<std::string, std::string>{"Hi", "Hello."}, {"Bye", "Goodbye."}}) {
        const json messages = json::parse(line(user, assistant))["messages"];
        rendered += tok_->encode(chat::render_messages(*setup, messages, false).value()).size();
    }
    EXPECT_EQ(all->meta.train.trained_tokens, rendered) << "every rendered token trained, the padding not";
    EXPECT_EQ(all->meta.train.tokens, 2u * 64u);
}

}  // namespace
}  // namespace slipway::data
