// slipway-engine on a full disk and a torn checkpoint, without root: SLIPWAY_FS_FAULT
// (contract/faulty_file_system.h) fills the disk for chosen files. A full disk at the final config.json is
// exit 1 naming the file, never exit 0 with a truncated file; one during a checkpoint keeps the previous
// checkpoint; a torn newest checkpoint is skipped on resume, naming it; `tokenizer train` fails cleanly.
// (TrainCli.FullDiskKeepsThePreviousCheckpoint is the same with a real tmpfs, as root.)
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "tiny_run_support.h"

namespace {

namespace fs = std::filesystem;
using slipway::testing_support::kSource;
using slipway::testing_support::slurp;

class DurableFilesCli : public slipway::testing_support::TinyRunTest {
protected:
    EngineRun engine(const std::string& args, const std::string& env = "") { return run_engine(args, env); }
    EngineRun train(const std::string& config, const std::string& env = "") {
        return engine("train --threads 1 " + config, env);
    }
    // Files under `dir` a failed write could have left: temporaries.
    static std::vector<std::string> temporaries(const fs::path& dir) {
        std::vector<std::string> left;
        for (const auto& entry : fs::recursive_directory_iterator(dir))
            if (entry.path().filename().string().find(".tmp") != std::string::npos)
                left.push_back(entry.path().string());
        return left;
    }

    const nlohmann::json patch_ = {
        {"training", {{"max_steps", 6}, {"save_steps", 2}, {"eval_steps", nullptr}}},
        {"data", {{"validation_split_percentage", 0}}}};
};

TEST_F(DurableFilesCli, FullDiskAtTheFinalConfigJsonFailsNamingIt) {
    const fs::path out = dir_ / "outputs";
    const EngineRun run =
        train(write_config("outputs", patch_), "SLIPWAY_FS_FAULT=enospc_after_bytes:0:outputs/config.json");
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_NE(run.err.find((out / "config.json").string() + ": not written ("), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("No space left on device"), std::string::npos) << run.err;
    EXPECT_FALSE(fs::exists(out / "config.json")) << "no truncated config.json";
    EXPECT_TRUE(temporaries(out).empty()) << testing::PrintToString(temporaries(out));
    EXPECT_TRUE(fs::exists(out / "checkpoint-6" / "DONE")) << "the run's state is still saved";
}

TEST_F(DurableFilesCli, FullDiskDuringACheckpointKeepsThePreviousOne) {
    const fs::path out = dir_ / "ckpt";
    const EngineRun run =
        train(write_config("ckpt", patch_), "SLIPWAY_FS_FAULT=enospc_after_bytes:1000:checkpoint-4");
    EXPECT_EQ(run.exit_code, 0) << "training goes on after a failed checkpoint:\n" << run.err;
    EXPECT_NE(run.err.find("checkpoint at step 4 not written: "), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("No space left on device"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("the previous checkpoint " + (out / "checkpoint-2").string() + " is intact"),
              std::string::npos)
        << run.err;
    EXPECT_TRUE(fs::exists(out / "checkpoint-2" / "DONE"));
    EXPECT_FALSE(fs::exists(out / "checkpoint-4"));
    EXPECT_FALSE(fs::exists(out / "checkpoint-4.tmp"));
    EXPECT_TRUE(temporaries(out).empty()) << testing::PrintToString(temporaries(out));
}

TEST_F(DurableFilesCli, TornLatestCheckpointResumesFromThePreviousOne) {
    const std::string config = write_config("torn", patch_);
    const EngineRun first = train(config + " --stop-after-steps 4");
    ASSERT_EQ(first.exit_code, 0) << first.err;
    const fs::path torn = dir_ / "torn" / "checkpoint-4";
    ASSERT_TRUE(fs::exists(torn / "DONE"));
    fs::resize_file(torn / "state.safetensors", fs::file_size(torn / "state.safetensors") / 2);
    const EngineRun resumed = train(config + " --resume_from_checkpoint latest");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    const std::string previous = (dir_ / "torn" / "checkpoint-2").string();
    EXPECT_NE(resumed.err.find("skipping a torn checkpoint (" + (torn / "state.safetensors").string() + ": "),
              std::string::npos)
        << resumed.err;
    EXPECT_NE(resumed.err.find("resumed from " + previous + " at step 2"), std::string::npos) << resumed.err;
    EXPECT_TRUE(fs::exists(torn / "DONE")) << "step 4 saved again";
    const EngineRun asked = train(config + " --resume_from_checkpoint " + previous);
    EXPECT_EQ(asked.exit_code, 0) << asked.err;
}

TEST_F(DurableFilesCli, FullDiskUnderTheMllogCopySaysSoOnceAndStdoutKeepsEveryLine) {
    const fs::path out = dir_ / "mllog";
    const EngineRun run =
        train(write_config("mllog", patch_), "SLIPWAY_FS_FAULT=enospc_after_bytes:3000:mllog.txt$");
    EXPECT_EQ(run.exit_code, 0) << "the copy is not the run:\n" << run.err;
    const std::string warning = (out / "mllog.txt").string() +
                                ": write: No space left on device; the MLLOG copy "
                                "stops before the '";
    const size_t said = run.err.find(warning);
    EXPECT_NE(said, std::string::npos) << run.err;
    EXPECT_EQ(run.err.find(warning, said + 1), std::string::npos) << "said once:\n" << run.err;
    const std::string copy = slurp(out / "mllog.txt");
    const std::string all = slurp(dir_ / "stdout.txt");
    EXPECT_LE(copy.size(), 3000u);
    EXPECT_GT(copy.size(), 0u);
    EXPECT_EQ(all.substr(0, copy.size()), copy) << "the copy is the start of the full log";
    EXPECT_NE(all.find("\"run_stop\""), std::string::npos);
    EXPECT_EQ(copy.find("\"run_stop\""), std::string::npos);
}

TEST_F(DurableFilesCli, TokenizerTrainOnAFullDisk) {
    const fs::path out = dir_ / "tokenizer.json";
    const std::string args = "tokenizer train --corpus " + kSource +
                             "/tests/data/tokenizer/corpus.jsonl --vocab-size 300 --out " + out.string();
    const EngineRun full = engine(args, "SLIPWAY_FS_FAULT=enospc_after_bytes:100");
    EXPECT_EQ(full.exit_code, 1) << full.err;
    EXPECT_NE(full.err.find(out.string() + ": not written ("), std::string::npos) << full.err;
    EXPECT_NE(full.err.find("No space left on device"), std::string::npos) << full.err;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_TRUE(temporaries(dir_).empty()) << testing::PrintToString(temporaries(dir_));
    const EngineRun bad = engine(args, "SLIPWAY_FS_FAULT=enospc_after:1");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("SLIPWAY_FS_FAULT: \"enospc_after:1\" is not"), std::string::npos) << bad.err;
    EXPECT_EQ(engine(args).exit_code, 0);
    EXPECT_TRUE(fs::exists(out));
}

}  // namespace
