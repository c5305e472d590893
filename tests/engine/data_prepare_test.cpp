// Tests of prepare_token_cache() on a synthetic corpus: the cache holds exactly the documents' tokens
// (+EOS) in each split, blocks start at boundaries, the counts add up, concat equals group_texts, dedup,
// the output does not depend on threads, a second run is a cache hit and any input change a new cache.
#include <filesystem>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "data/prepare.h"
#include "data/prepare_plan.h"
#include "data/token_cache.h"
#include "data_test_support.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/tokenizer.h"

namespace fs = std::filesystem;

namespace slipway::data {
namespace {

using test::TestDoc;

class PrepareTest : public testing::Test {
protected:
    void SetUp() override {
        dir_ = test::fresh_dir(testing::UnitTest::GetInstance()->current_test_info()->name());
        docs_ = test::make_docs(300, 1);
        train_ = dir_ + "/train.jsonl";
        test::write_file(train_, test::to_jsonl(docs_));
        config_ = test::make_config(dir_, train_);
        Result<tokenizer::Tokenizer> tok = tokenizer::Tokenizer::from_file(test::demo_tokenizer());
        ASSERT_TRUE(tok.ok()) << tok.error();
        tok_ = std::make_unique<tokenizer::Tokenizer>(std::move(tok).value());
        eos_ = static_cast<uint32_t>(*tok_->token_to_id("<|end_of_text|>"));
    }

    PrepareReport prepare(const PrepareOptions& options = {}) {
        Result<PrepareReport> report = prepare_token_cache(config_, options);
        EXPECT_TRUE(report.ok()) << report.error();
        return report.ok() ? *report : PrepareReport{};
    }

    // As HF's tokenizer(text): the demo tokenizer's post-processor puts its BOS first.
    std::vector<uint32_t> encode(const std::string& text, bool add_special_tokens = true) const {
        const std::vector<int32_t> ids = tok_->encode(text, add_special_tokens);
        return {ids.begin(), ids.end()};
    }

    std::string dir_, train_;
    std::vector<TestDoc> docs_;
    RunConfig config_;
    std::unique_ptr<tokenizer::Tokenizer> tok_;
    uint32_t eos_ = 0;
};

void expect_identity(const SplitCounts& c, uint64_t block_size) {
    EXPECT_EQ(c.blocks * block_size, c.tokens - c.tokens_dropped + c.tokens_repeated);
}

TEST_F(PrepareTest, CacheHoldsEveryDocumentAndBlocksStartAtParagraphs) {
    const PrepareReport report = prepare();
    EXPECT_FALSE(report.cache_hit);
    Result<TokenCache> cache = TokenCache::open(report.cache_path);
    ASSERT_TRUE(cache.ok()) << cache.error();

    // Expected: per split, BOS, the pieces' tokens and EOS of each document in order, and the boundaries (the
    // first piece's before its BOS).
    std::vector<uint32_t> tokens[2];
    std::set<uint64_t> boundaries[2];
    uint64_t documents[2] = {0, 0};
    for (size_t i = 0; i < docs_.size(); ++i) {
        const int s = held_out_for_validation(i + 1, 42, 10) ? 1 : 0;
        ++documents[s];
        for (const std::string& piece : docs_[i].pieces) {
            boundaries[s].insert(tokens[s].size());
            const std::vector<uint32_t> ids = encode(piece, &piece == &docs_[i].pieces.front());
            tokens[s].insert(tokens[s].end(), ids.begin(), ids.end());
        }
        tokens[s].push_back(eos_);
    }
    ASSERT_GT(documents[1], 10u);  // about 10 % of 300
    ASSERT_LT(documents[1], 60u);
    for (const Split split : {Split::kTrain, Split::kValidation}) {
        const int s = static_cast<int>(split);
        const TokenSpan all = cache->tokens(split);
        EXPECT_EQ(std::vector<uint32_t>(all.begin(), all.end()), tokens[s]) << split_name(split);
        const SplitCounts& c = cache->meta().counts(split);
        EXPECT_EQ(c.documents, documents[s]);
        EXPECT_EQ(c.tokens, tokens[s].size());
        ASSERT_GT(c.blocks, 0u);
        expect_identity(c, 32);
        for (size_t b = 0; b < cache->num_blocks(split); ++b) {
            EXPECT_TRUE(boundaries[s].count(cache->block_offset(split, b))) << "block " << b;
            EXPECT_EQ(cache->block(split, b).size, 32u);
        }
    }
    EXPECT_EQ(cache->meta().documents_read, 300u);
    EXPECT_EQ(cache->meta().eos_token_id, static_cast<int64_t>(eos_));
    EXPECT_EQ(cache->meta().vocab_size, tok_->vocab_size());
    EXPECT_EQ(cache->meta().split_mode, "paragraph");
    EXPECT_NE(report.eos_source.find("<|end_of_text|>"), std::string::npos);
    EXPECT_EQ(cache->meta().document_prefix_ids,
              (std::vector<int64_t>{*tok_->token_to_id("<|begin_of_text|>")}));
    EXPECT_EQ(cache->meta().document_prefix_source, "post_processor TemplateProcessing");
}

// tokenizer_config.json beside the tokenizer decides the special tokens (as for HF's tokenizer), so it is one
// of the cache's inputs: add_bos_token false there gives documents without BOS, in a cache of their own.
TEST_F(PrepareTest, TheTokenizerConfigDecidesTheBosAndIsAnInputOfTheKey) {
    config_.data.split = "document";
    config_.data.validation_split_percentage = 0;
    const std::string tokenizer_dir = dir_ + "/tokenizer";
    std::filesystem::create_directories(tokenizer_dir);
    std::filesystem::copy_file(test::demo_tokenizer(), tokenizer_dir + "/tokenizer.json");
    config_.tokenizer.path = tokenizer_dir + "/tokenizer.json";
    const PrepareReport with_bos = prepare();
    test::write_file(tokenizer_dir + "/tokenizer_config.json", R"({"add_bos_token": false})");
    const PrepareReport without_bos = prepare();
    EXPECT_FALSE(without_bos.cache_hit);
    EXPECT_NE(without_bos.cache_path, with_bos.cache_path);
    Result<TokenCache> cache = TokenCache::open(without_bos.cache_path);
    ASSERT_TRUE(cache.ok()) << cache.error();
    std::vector<uint32_t> expected = encode(docs_[0].text(), false);
    expected.push_back(eos_);
    const TokenSpan all = cache->tokens(Split::kTrain);
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), all.begin()));
    EXPECT_TRUE(cache->meta().document_prefix_ids.empty());
    EXPECT_EQ(cache->meta().document_prefix_source, "tokenizer_config.json add_bos_token");
}

TEST_F(PrepareTest, DocumentModeTokenizesWholeDocumentsAndStartsBlocksAtThem) {
    config_.data.split = "document";
    config_.data.validation_split_percentage = 0;
    Result<TokenCache> cache = TokenCache::open(prepare().cache_path);
    ASSERT_TRUE(cache.ok()) << cache.error();
    std::vector<uint32_t> tokens;
    std::set<uint64_t> starts;
    for (const TestDoc& doc : docs_) {
        starts.insert(tokens.size());
        const std::vector<uint32_t> ids = encode(doc.text());
        tokens.insert(tokens.end(), ids.begin(), ids.end());
        tokens.push_back(eos_);
    }
    const TokenSpan all = cache->tokens(Split::kTrain);
    EXPECT_EQ(std::vector<uint32_t>(all.begin(), all.end()), tokens);
    EXPECT_EQ(cache->num_tokens(Split::kValidation), 0u);
    for (size_t b = 0; b < cache->num_blocks(Split::kTrain); ++b) {
        EXPECT_TRUE(starts.count(cache->block_offset(Split::kTrain, b)));
    }
    expect_identity(cache->meta().train, 32);
}

TEST_F(PrepareTest, ConcatModeEqualsGroupTexts) {
    config_.data.split = "concat";
    config_.data.validation_split_percentage = 0;
    Result<TokenCache> cache = TokenCache::open(prepare().cache_path);
    ASSERT_TRUE(cache.ok()) << cache.error();
    std::vector<uint32_t> concatenated;
    for (const TestDoc& doc : docs_) {
        const std::vector<uint32_t> ids = encode(doc.text());
        concatenated.insert(concatenated.end(), ids.begin(), ids.end());
        concatenated.push_back(eos_);
    }
    const size_t total = concatenated.size() / 32 * 32;  // group_texts drops the remainder
    ASSERT_EQ(cache->num_blocks(Split::kTrain), total / 32);
    for (size_t b = 0; b < total / 32; ++b) {
        const TokenSpan block = cache->block(Split::kTrain, b);
        EXPECT_TRUE(std::equal(block.begin(), block.end(),
                               concatenated.begin() + static_cast<std::ptrdiff_t>(b * 32)));
    }
    EXPECT_EQ(cache->meta().train.tokens_dropped, concatenated.size() - total);
    EXPECT_EQ(cache->meta().train.tokens_repeated, 0u);
}

TEST_F(PrepareTest, DedupRemovesExactAndWhitespaceDuplicates) {
    std::vector<TestDoc> docs = docs_;
    docs.push_back(docs_[3]);                                      // exact copy
    docs.push_back(TestDoc{{"  " + docs_[5].text() + " \n\n "}});  // differs in whitespace only
    docs.push_back(TestDoc{{docs_[7].text() + " (edited)"}});      // a different document
    test::write_file(train_, test::to_jsonl(docs));
    config_.data.dedup = true;
    PrepareReport report = prepare();
    EXPECT_EQ(report.meta.documents_read, 303u);
    EXPECT_EQ(report.meta.duplicates_removed, 2u);
    EXPECT_EQ(report.meta.train.documents + report.meta.validation.documents, 301u);
    config_.data.dedup = false;
    report = prepare();
    EXPECT_EQ(report.meta.duplicates_removed, 0u);
    EXPECT_EQ(report.meta.train.documents + report.meta.validation.documents, 303u);
}

TEST_F(PrepareTest, BytesAreIdenticalForAnyThreadCountAndBatching) {
    std::string paths[3];
    const int64_t threads[3] = {1, 4, 2};
    const size_t batches[3] = {1024, 7, 1};
    for (int i = 0; i < 3; ++i) {
        config_.data.cache_dir = dir_ + "/cache" + std::to_string(i);
        PrepareOptions options;
        options.threads = threads[i];
        options.batch_documents = batches[i];
        const PrepareReport report = prepare(options);
        EXPECT_EQ(report.threads, static_cast<unsigned>(threads[i]));
        paths[i] = report.cache_path;
    }
    EXPECT_EQ(fs::path(paths[0]).filename(), fs::path(paths[1]).filename());  // same key
    for (const char* file : {"train.tokens", "train.blocks", "validation.tokens", "validation.blocks"}) {
        const std::string first = test::read_file(paths[0] + "/" + file);
        EXPECT_FALSE(first.empty()) << file;
        for (int i = 1; i < 3; ++i)
            EXPECT_EQ(test::read_file(paths[i] + "/" + file), first) << file << " run " << i;
    }
}

TEST_F(PrepareTest, SecondRunIsACacheHit) {
    const PrepareReport first = prepare();
    const PrepareReport second = prepare();
    EXPECT_FALSE(first.cache_hit);
    EXPECT_TRUE(second.cache_hit);
    EXPECT_EQ(second.cache_path, first.cache_path);
    EXPECT_EQ(second.meta.train.blocks, first.meta.train.blocks);
}

TEST_F(PrepareTest, EveryInputChangeGivesANewKeyAndNothingElseDoes) {
    auto key = [&](const RunConfig& c) {
        Result<PreparePlan> plan = make_prepare_plan(c);
        EXPECT_TRUE(plan.ok()) << plan.error();
        return plan.ok() ? plan->key : std::string();
    };
    std::set<std::string> keys;
    const std::string base = key(config_);
    EXPECT_EQ(key(config_), base);
    EXPECT_EQ(base.size(), 16u);
    keys.insert(base);
    auto expect_new = [&](const RunConfig& c, const char* what) {
        EXPECT_TRUE(keys.insert(key(c)).second) << what;
    };
    RunConfig c = config_;
    c.data.block_size = 64;
    expect_new(c, "block_size");
    c = config_;
    c.data.split = "document";
    expect_new(c, "split");
    c = config_;
    c.data.dedup = true;
    expect_new(c, "dedup");
    c = config_;
    c.data.text_field = "body";
    expect_new(c, "text_field");
    c = config_;
    c.data.validation_split_percentage = 20;
    expect_new(c, "validation_split_percentage");
    c = config_;
    c.training.seed = 7;
    expect_new(c, "seed");
    const std::string tokenizer_copy = dir_ + "/tokenizer.json";
    fs::copy_file(test::demo_tokenizer(), tokenizer_copy);
    c = config_;
    c.tokenizer.path = tokenizer_copy;
    EXPECT_EQ(key(c), base) << "the same tokenizer bytes elsewhere";
    test::write_file(tokenizer_copy, test::read_file(test::demo_tokenizer()) + "\n");
    expect_new(c, "tokenizer content");
    fs::create_directories(dir_ + "/model");
    test::write_file(dir_ + "/model/config.json", R"({"eos_token_id": 2})");
    expect_new(config_, "eos id from the model");
    fs::remove_all(dir_ + "/model");
    fs::last_write_time(train_, fs::last_write_time(train_) + std::chrono::seconds(2));
    expect_new(config_, "train file touched");
    std::string text = test::read_file(train_);
    const size_t at = text.find(" the ");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 5, " thy ");  // same size
    test::write_file(train_, text);
    expect_new(config_, "train file modified");
    c = config_;
    c.data.validation_file = train_;
    expect_new(c, "validation file");
    RunConfig other_seed = c;
    other_seed.training.seed = 1234;
    EXPECT_EQ(key(other_seed), key(c)) << "the seed does not matter with a validation file";

    // And a full run after a change makes a second cache folder.
    const PrepareReport first = prepare();
    config_.data.block_size = 16;
    const PrepareReport second = prepare();
    EXPECT_FALSE(second.cache_hit);
    EXPECT_NE(first.cache_path, second.cache_path);
    EXPECT_TRUE(TokenCache::open(first.cache_path).ok());
}

TEST_F(PrepareTest, EosComesFromTheModelConfigWhenThere) {
    fs::create_directories(dir_ + "/model");
    test::write_file(dir_ + "/model/config.json",
                     R"({"eos_token_id": [3, 4], "max_position_embeddings": 64})");
    const PrepareReport report = prepare();
    EXPECT_EQ(report.meta.eos_token_id, 3);
    Result<TokenCache> cache = TokenCache::open(report.cache_path);
    ASSERT_TRUE(cache.ok());
    const TokenSpan all = cache->tokens(Split::kTrain);
    EXPECT_EQ(all[all.size - 1], 3u);
    test::write_file(dir_ + "/model/config.json", R"({"eos_token_id": 999999})");
    Result<PrepareReport> bad = prepare_token_cache(config_);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("outside the tokenizer's vocabulary"), std::string::npos) << bad.error();
}

TEST_F(PrepareTest, NoEosAnywhereIsAnError) {
    tokenizer::BpeTrainerOptions options;
    options.vocab_size = 300;
    options.special_tokens = {"<pad>"};
    options.bos_token = "";
    tokenizer::BpeTrainer trainer(options);
    for (const TestDoc& doc : docs_)
        ASSERT_TRUE(trainer.add_text(doc.text()).ok());
    Result<nlohmann::ordered_json> trained = trainer.train();
    ASSERT_TRUE(trained.ok()) << trained.error();
    test::write_file(dir_ + "/no-eos.json", trained->dump());
    config_.tokenizer.path = dir_ + "/no-eos.json";
    Result<PrepareReport> report = prepare_token_cache(config_);
    ASSERT_FALSE(report.ok());
    EXPECT_NE(report.error().find("no EOS token"), std::string::npos) << report.error();
    EXPECT_TRUE(fs::is_empty(dir_ + "/cache"));
}

}  // namespace
}  // namespace slipway::data
