// Checkpoints in-process on a tiny model, through the fault-injecting FileSystem: every file and folder is
// fsynced before DONE (a crash right after a save loses nothing); a save that fails at any point (full
// disk, failing fsync, rename, folder fsync, DONE) leaves nothing complete-looking and the earlier
// checkpoint loadable; a torn newest checkpoint is skipped by "latest" with a message naming it; pruning
// never removes the newest intact checkpoint; the first DONE format still loads; RNG state round-trips.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "contract/faulty_file_system.h"
#include "contract/run_config.h"
#include "model/llama.h"
#include "model/torch_compat.h"
#include "train/checkpoint.h"
#include "train/flat_adamw.h"

namespace {

namespace fs = std::filesystem;
using slipway::FaultyFileSystem;
using Operation = slipway::FaultyFileSystem::Operation;
namespace train = slipway::train;

class CheckpointTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = (fs::temp_directory_path() / ("slipway_checkpoint_test_" + std::to_string(getpid()) + "_" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                   .string();
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        slipway::model::LlamaConfig config;
        config.vocab_size = 64;
        config.hidden_size = 16;
        config.intermediate_size = 32;
        config.num_hidden_layers = 1;
        config.num_attention_heads = 2;
        config.num_key_value_heads = 2;
        config.head_dim = 8;
        config.max_position_embeddings = 32;
        torch::manual_seed(1);
        model_ = slipway::model::LlamaForCausalLM(config);
        std::vector<torch::Tensor> params;
        for (auto& item : model_->named_parameters()) {
            names_.push_back(item.key());
            params.push_back(item.value());
        }
        optimizer_ = std::make_unique<train::FlatAdamW>(
            names_, params, std::vector<bool>(params.size(), true), slipway::TrainingConfig{});
    }
    void TearDown() override { fs::remove_all(dir_); }

    slipway::Result<std::string> save(int64_t step, slipway::FileSystem& fs = slipway::posix_file_system(),
                                      std::vector<std::vector<size_t>> gradient_buckets = {}) {
        train::LoopPosition position;
        position.gradient_buckets = std::move(gradient_buckets);
        position.step = step;
        position.cursor = static_cast<uint64_t>(step) * 8;
        return train::save_checkpoint(dir_, model_, *optimizer_, names_, position, fs);
    }
    slipway::Result<train::LoopPosition> load(const std::string& dir) {
        return train::load_checkpoint(dir, model_, *optimizer_, names_);
    }
    std::string checkpoint(int64_t step) const { return train::checkpoint_dir(dir_, step); }
    uint64_t bytes_of(const std::string& dir) const {
        uint64_t total = 0;
        for (const auto& entry : fs::directory_iterator(dir))
            total += fs::file_size(entry.path());
        return total;
    }

    std::string dir_;
    slipway::model::LlamaForCausalLM model_{nullptr};
    std::vector<std::string> names_;
    std::unique_ptr<train::FlatAdamW> optimizer_;
};

TEST_F(CheckpointTest, EverythingIsDurableBeforeDone) {
    FaultyFileSystem faulty;
    const auto saved = save(2, faulty);
    ASSERT_TRUE(saved.ok()) << saved.error();
    const std::vector<std::string> ops = faulty.operations();
    // The first operation that starts with `prefix` (is `prefix` itself when `whole`).
    auto first = [&](const std::string& prefix, bool whole = false) {
        for (size_t i = 0; i < ops.size(); ++i)
            if (whole ? ops[i] == prefix : ops[i].rfind(prefix, 0) == 0) return i;
        ADD_FAILURE() << "no operation " << prefix << " in " << testing::PrintToString(ops);
        return ops.size();
    };
    const std::string tmp = train::checkpoint_tmp_dir(dir_, 2);
    const size_t folder_renamed = first("rename " + tmp + " " + checkpoint(2));
    const size_t parent_synced = first("sync_dir " + dir_, /*whole=*/true);
    const size_t done_created = first("create " + checkpoint(2) + "/DONE");
    EXPECT_LT(first("sync " + tmp + "/state.safetensors"), folder_renamed);
    EXPECT_LT(first("sync " + tmp + "/state.json"), folder_renamed);
    EXPECT_LT(first("sync_dir " + tmp, /*whole=*/true), folder_renamed);
    EXPECT_LT(folder_renamed, parent_synced);
    EXPECT_LT(parent_synced, done_created);
    EXPECT_TRUE(faulty.unsynced_renames().empty()) << testing::PrintToString(faulty.unsynced_renames());
    // A power cut right after the save: nothing that was not fsynced, and the checkpoint is intact.
    faulty.crash();
    EXPECT_TRUE(train::verify_checkpoint(*saved).ok()) << train::verify_checkpoint(*saved).message();
    const auto loaded = load(*saved);
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    EXPECT_EQ(loaded->step, 2);
    EXPECT_EQ(loaded->cursor, 16u);
}

// The gradient reducer's bucket layout comes back as it was saved; one that does not place every trainable
// parameter exactly once is refused, naming the file and the field.
TEST_F(CheckpointTest, TheGradientBucketLayoutRoundTripsAndABadOneIsRefused) {
    std::vector<std::vector<size_t>> layout;
    for (size_t i = names_.size(); i-- > 0;) {  // pairs, last parameter first
        if (layout.empty() || layout.back().size() == 2) layout.emplace_back();
        layout.back().push_back(i);
    }
    const auto saved = save(2, slipway::posix_file_system(), layout);
    ASSERT_TRUE(saved.ok()) << saved.error();
    const auto loaded = load(*saved);
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    EXPECT_EQ(loaded->gradient_buckets, layout);
    EXPECT_TRUE(load(*save(3)).ok());  // none recorded: an empty layout
    EXPECT_TRUE(load(*save(3))->gradient_buckets.empty());

    const std::vector<std::pair<std::string, std::vector<std::vector<size_t>>>> bad = {
        {"names " + std::to_string(names_.size()), {{names_.size()}}},
        {"names 0", {{0, 0}}},
        {"leaves a trainable parameter out", {{0}}},
    };
    for (const auto& [why, buckets] : bad) {
        const auto saved_bad = save(4, slipway::posix_file_system(), buckets);
        ASSERT_TRUE(saved_bad.ok()) << saved_bad.error();
        const auto refused = load(*saved_bad);
        ASSERT_FALSE(refused.ok()) << why;
        EXPECT_NE(refused.error().find(checkpoint(4) + "/state.json: gradient_buckets " + why),
                  std::string::npos)
            << refused.error();
    }
}

TEST_F(CheckpointTest, FailedSaveKeepsTheEarlierOneLoadable) {
    ASSERT_TRUE(save(2).ok());
    const uint64_t size = bytes_of(checkpoint(2));
    std::vector<std::pair<std::string, std::function<void(FaultyFileSystem&)>>> faults = {
        {"full disk at once", [](FaultyFileSystem& f) { f.fill_disk_after(0); }},
        {"full disk in the tensors", [&](FaultyFileSystem& f) { f.fill_disk_after(size / 2); }},
        {"full disk in state.json", [&](FaultyFileSystem& f) { f.fill_disk_after(0, "state.json"); }},
        {"full disk at DONE", [&](FaultyFileSystem& f) { f.fill_disk_after(0, "DONE"); }},
        {"fsync of the tensors", [](FaultyFileSystem& f) { f.fail(Operation::kSync, "state.safetensors"); }},
        {"close of state.json", [](FaultyFileSystem& f) { f.fail(Operation::kClose, "state.json"); }},
        {"rename of the folder", [](FaultyFileSystem& f) { f.fail(Operation::kRename, "/checkpoint-4$"); }},
        {"fsync of the folder", [](FaultyFileSystem& f) { f.fail(Operation::kSyncDir, "checkpoint-4.tmp"); }},
        {"fsync of output_dir", [&](FaultyFileSystem& f) { f.fail(Operation::kSyncDir, dir_ + "$"); }},
        {"fsync of DONE", [](FaultyFileSystem& f) { f.fail(Operation::kSync, "DONE"); }},
    };
    for (const auto& [what, inject] : faults) {
        FaultyFileSystem faulty;
        inject(faulty);
        const auto saved = save(4, faulty);
        ASSERT_FALSE(saved.ok()) << what;
        EXPECT_NE(saved.error().find("checkpoint at step 4 not written"), std::string::npos) << saved.error();
        EXPECT_NE(saved.error().find("the previous checkpoint " + checkpoint(2) + " is intact"),
                  std::string::npos)
            << saved.error();
        EXPECT_FALSE(fs::exists(checkpoint(4))) << what;
        EXPECT_FALSE(fs::exists(train::checkpoint_tmp_dir(dir_, 4))) << what;
        const auto latest = train::resolve_checkpoint("latest", dir_);
        ASSERT_TRUE(latest.ok()) << what << ": " << latest.error();
        EXPECT_EQ(*latest, checkpoint(2)) << what;
        const auto loaded = load(*latest);
        ASSERT_TRUE(loaded.ok()) << what << ": " << loaded.error();
        EXPECT_EQ(loaded->step, 2) << what;
    }
}

TEST_F(CheckpointTest, TornLatestFallsBackToThePreviousOne) {
    ASSERT_TRUE(save(2).ok());
    ASSERT_TRUE(save(4).ok());
    const std::string tensors = checkpoint(4) + "/state.safetensors";
    fs::resize_file(tensors, fs::file_size(tensors) / 2);  // torn after DONE
    std::ostringstream notes;
    auto latest = train::resolve_checkpoint("latest", dir_, &notes);
    ASSERT_TRUE(latest.ok()) << latest.error();
    EXPECT_EQ(*latest, checkpoint(2));
    EXPECT_NE(notes.str().find("skipping a torn checkpoint (" + tensors + ": "), std::string::npos)
        << notes.str();
    EXPECT_NE(notes.str().find("resuming from the previous complete one, " + checkpoint(2)),
              std::string::npos)
        << notes.str();
    const auto asked = train::resolve_checkpoint(checkpoint(4), dir_);
    ASSERT_FALSE(asked.ok());
    EXPECT_NE(asked.error().find(tensors + ": "), std::string::npos) << asked.error();
    EXPECT_NE(asked.error().find("the checkpoint is torn"), std::string::npos) << asked.error();

    // The same size but other bytes in state.json: its XXH64 tells.
    const std::string state = checkpoint(2) + "/state.json";
    std::string text = slipway::read_file(state).value();
    text[text.find("\"cursor\": 16")] = ' ';
    ASSERT_TRUE(slipway::write_file_atomically(state, text).ok());
    latest = train::resolve_checkpoint("latest", dir_);
    ASSERT_FALSE(latest.ok());
    EXPECT_NE(latest.error().find("no complete checkpoint under " + dir_), std::string::npos)
        << latest.error();
    EXPECT_NE(latest.error().find(state + ": its content differs from the XXH64 DONE records"),
              std::string::npos)
        << latest.error();
}

TEST_F(CheckpointTest, PruneNeverRemovesTheNewestIntactOne) {
    ASSERT_TRUE(save(2).ok());
    ASSERT_TRUE(save(4).ok());
    fs::remove(checkpoint(4) + "/state.json");  // torn: DONE there, a file missing
    EXPECT_TRUE(train::prune_checkpoints(dir_, 1).empty()) << "checkpoint-2 is the newest intact one";
    EXPECT_TRUE(fs::exists(checkpoint(2) + "/DONE"));
    ASSERT_TRUE(save(6).ok());
    EXPECT_EQ(train::prune_checkpoints(dir_, 1), (std::vector<std::string>{checkpoint(2), checkpoint(4)}));
    EXPECT_TRUE(train::verify_checkpoint(checkpoint(6)).ok());
}

// A removal that fails halfway leaves no complete-looking folder and is not reported as removed.
TEST_F(CheckpointTest, PruneRemovesDoneFirstAndReportsOnlyWhatWentAway) {
    ASSERT_TRUE(save(2).ok());
    ASSERT_TRUE(save(4).ok());
    FaultyFileSystem faulty;
    faulty.fail(Operation::kSyncDir, "checkpoint-2");
    EXPECT_TRUE(train::prune_checkpoints(dir_, 1, faulty).empty());
    EXPECT_FALSE(fs::exists(checkpoint(2) + "/DONE")) << "DONE went first";
    const auto after = train::resolve_checkpoint("latest", dir_);
    ASSERT_TRUE(after.ok()) << after.error();
    EXPECT_EQ(*after, checkpoint(4));
    EXPECT_EQ(train::prune_checkpoints(dir_, 1),
              std::vector<std::string>{});  // checkpoint-2 is no longer complete
    EXPECT_TRUE(train::verify_checkpoint(checkpoint(4)).ok());
}

TEST_F(CheckpointTest, FirstDoneFormatStillLoads) {
    const auto saved = save(2);
    ASSERT_TRUE(saved.ok());
    std::ofstream(*saved + "/DONE") << "step 2\n";
    EXPECT_TRUE(train::verify_checkpoint(*saved).ok());
    const auto loaded = load(*train::resolve_checkpoint("latest", dir_));
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    EXPECT_EQ(loaded->step, 2);
}

// A sharded checkpoint must hold every rank's shard, whatever its DONE lists (the first format lists
// nothing; on NFS rank 0's listing can lag another node's write).
TEST_F(CheckpointTest, ShardedCheckpointWithoutEveryShardIsTorn) {
    const fs::path dir = fs::path(dir_) / "checkpoint-3";
    fs::create_directories(dir);
    std::ofstream(dir / "state.json") << R"({"step": 3, "sharding": "full", "world_size": 2})";
    std::ofstream(dir / "shard-0-of-2.safetensors") << "x";
    std::ofstream(dir / "DONE") << "step 3\n";
    const slipway::Status missing = train::verify_checkpoint(dir.string());
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.message().find((dir / "shard-1-of-2.safetensors").string() + ": missing"),
              std::string::npos)
        << missing.message();
    std::ofstream(dir / "shard-1-of-2.safetensors") << "x";
    EXPECT_TRUE(train::verify_checkpoint(dir.string()).ok());
    std::ofstream(dir / "state.json") << R"({"step": 3, "sharding": "full", "world_size": 1000000000000})";
    EXPECT_FALSE(train::verify_checkpoint(dir.string()).ok()) << "no loop over 10^12 ranks";
}

TEST_F(CheckpointTest, RngStateRoundTrips) {
    torch::manual_seed(7);
    (void)torch::rand({3});
    const auto saved = save(2);
    ASSERT_TRUE(saved.ok());
    const torch::Tensor expected = torch::rand({5});
    (void)torch::rand({11});  // move on
    ASSERT_TRUE(load(*saved).ok());
    EXPECT_TRUE(torch::equal(torch::rand({5}), expected));
}

}  // namespace
