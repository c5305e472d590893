// LrSchedule against HF transformers' formulas (get_linear_schedule_with_warmup, get_cosine_schedule_
// with_warmup, get_constant_schedule[_with_warmup]) at chosen steps, and the step counting of a run.
#include <gtest/gtest.h>

#include <cmath>

#include "train/schedule.h"

namespace slipway::train {
namespace {

double lr_at(const std::string& kind, int64_t step, int64_t warmup = 10, int64_t total = 100) {
    Result<LrSchedule> s = LrSchedule::create(kind, 1e-3, warmup, total);
    EXPECT_TRUE(s.ok());
    return s->lr(step);
}

TEST(LrSchedule, Linear) {
    EXPECT_DOUBLE_EQ(lr_at("linear", 0), 0.0);
    EXPECT_DOUBLE_EQ(lr_at("linear", 5), 0.5e-3);
    EXPECT_DOUBLE_EQ(lr_at("linear", 10), 1e-3);
    EXPECT_DOUBLE_EQ(lr_at("linear", 55), 1e-3 * 45.0 / 90.0);
    EXPECT_DOUBLE_EQ(lr_at("linear", 99), 1e-3 * 1.0 / 90.0);
    EXPECT_DOUBLE_EQ(lr_at("linear", 100), 0.0);
    EXPECT_DOUBLE_EQ(lr_at("linear", 120), 0.0);  // never negative
}

TEST(LrSchedule, Cosine) {
    const double pi = 3.14159265358979323846;
    EXPECT_DOUBLE_EQ(lr_at("cosine", 3), 0.3e-3);
    EXPECT_DOUBLE_EQ(lr_at("cosine", 10), 1e-3);
    EXPECT_NEAR(lr_at("cosine", 55), 0.5e-3, 1e-15);
    EXPECT_DOUBLE_EQ(lr_at("cosine", 40), 1e-3 * 0.5 * (1 + std::cos(pi * 30.0 / 90.0)));
    EXPECT_NEAR(lr_at("cosine", 100), 0.0, 1e-18);
    // MLPerf llama2_70b_lora: no warmup, 1024 steps, lr 4e-4.
    Result<LrSchedule> mlperf = LrSchedule::create("cosine", 4e-4, 0, 1024);
    EXPECT_DOUBLE_EQ(mlperf->lr(0), 4e-4);
    EXPECT_DOUBLE_EQ(mlperf->lr(512), 2e-4);
}

TEST(LrSchedule, ConstantAndConstantWithWarmup) {
    EXPECT_DOUBLE_EQ(lr_at("constant", 0), 1e-3);  // constant ignores warmup, as HF's does
    EXPECT_DOUBLE_EQ(lr_at("constant", 99), 1e-3);
    EXPECT_DOUBLE_EQ(lr_at("constant_with_warmup", 0), 0.0);
    EXPECT_DOUBLE_EQ(lr_at("constant_with_warmup", 4), 0.4e-3);
    EXPECT_DOUBLE_EQ(lr_at("constant_with_warmup", 50), 1e-3);
}

TEST(LrSchedule, NoWarmupStartsAtTheBaseRate) {
    EXPECT_DOUBLE_EQ(lr_at("linear", 0, 0), 1e-3);
    EXPECT_FALSE(LrSchedule::create("polynomial", 1e-3, 0, 10).ok());
}

TEST(Steps, EpochsAccumulationAndWarmupRatio) {
    TrainingConfig t;
    t.num_train_epochs = 1.5;
    t.gradient_accumulation_steps = 4;
    EXPECT_EQ(total_training_steps(t, 10), 3);  // ceil(1.5 x floor(10 / 4))
    EXPECT_EQ(total_training_steps(t, 3), 2);   // at least one step an epoch: ceil(1.5 x 1)
    t.max_steps = 7;
    EXPECT_EQ(total_training_steps(t, 10), 7);
    t.warmup_ratio = 0.1;
    EXPECT_EQ(warmup_steps_for(t, 95), 10);  // ceil(9.5)
    t.warmup_steps = 3;
    EXPECT_EQ(warmup_steps_for(t, 95), 3);
}

}  // namespace
}  // namespace slipway::train
