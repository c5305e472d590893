// summarize_trace on written traces: a GPU trace's kernels by category (GEMM dtypes from the launching
// operator's input types), memcpy, and the idle time as host gaps; a CPU trace's operators by self time.
#include <gtest/gtest.h>

#include "train/profile_summary.h"

namespace slipway::train {
namespace {

double row(const ProfileSummary& s, const std::string& category) {
    for (const ProfileRow& r : s.rows)
        if (r.category == category) return r.ms_per_step;
    ADD_FAILURE() << "no row " << category;
    return -1;
}

nlohmann::json kernel(const std::string& name, double ts, double dur, int64_t id) {
    return {{"cat", "kernel"}, {"name", name}, {"ts", ts}, {"dur", dur}, {"args", {{"External id", id}}}};
}

nlohmann::json op(const std::string& name, double ts, double dur, int64_t id, nlohmann::json types = nullptr,
                  int tid = 1) {
    nlohmann::json args = {{"External id", id}};
    if (!types.is_null()) args["Input type"] = types;
    return {{"cat", "cpu_op"}, {"name", name}, {"ts", ts}, {"dur", dur}, {"tid", tid}, {"args", args}};
}

TEST(ProfileSummary, GpuKernelsByCategoryAndTheIdleTimeAsHostGaps) {
    const nlohmann::json trace = {
        {"traceEvents",
         {op("aten::mm", 0, 5, 1, {"c10::BFloat16", "c10::BFloat16"}),
          op("aten::mm", 5, 5, 2, {"float", "float"}),
          kernel("nvjet_tst_128x256_64x4_v_bz_TNT", 10, 4000, 1),
          kernel("sm90_xmma_gemm_f32f32_f32f32", 4010, 1000, 2),
          kernel("pytorch_flash::flash_fwd_kernel", 5010, 2000, 3),
          kernel("void at::native::unrolled_elementwise_kernel<direct_copy_kernel>", 7010, 500, 4),
          kernel("void at::native::vectorized_elementwise_kernel<silu>", 7510, 250, 5),
          {{"cat", "gpu_memcpy"}, {"name", "Memcpy HtoD"}, {"ts", 7760}, {"dur", 250}},
          {{"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"ts", 0}, {"dur", 3}}}}};
    // 2 steps, 20 ms of wall time: 8 ms of device work, 12 ms idle.
    const ProfileSummary s = summarize_trace(trace, 2, 20.0);
    EXPECT_EQ(s.source, "GPU kernels");
    EXPECT_EQ(s.events, 6);
    EXPECT_DOUBLE_EQ(s.wall_ms_per_step, 10.0);
    EXPECT_DOUBLE_EQ(row(s, "bf16 GEMM"), 2.0);
    EXPECT_DOUBLE_EQ(row(s, "fp32 GEMM"), 0.5);
    EXPECT_DOUBLE_EQ(row(s, "attention"), 1.0);
    EXPECT_DOUBLE_EQ(row(s, "copies and casts"), 0.25);
    EXPECT_DOUBLE_EQ(row(s, "elementwise/reduction"), 0.125);
    EXPECT_DOUBLE_EQ(row(s, "memcpy"), 0.125);
    EXPECT_DOUBLE_EQ(row(s, "host gaps"), 6.0);
    ASSERT_EQ(s.top.size(), 6u);
    EXPECT_EQ(s.top[0].name, "nvjet_tst_128x256_64x4_v_bz_TNT");
    EXPECT_EQ(s.top[0].category, "bf16 GEMM");
    EXPECT_DOUBLE_EQ(s.top[0].ms_per_step, 2.0);
    const std::string table = profile_table(s);
    EXPECT_NE(table.find("| bf16 GEMM              |         2.00 |   20.0% |"), std::string::npos) << table;
}

TEST(ProfileSummary, CpuOperatorsBySelfTime) {
    // matmul (10 us) calls mm (8 us): matmul's own 2 us are GEMM glue, mm's 8 us the product; a cast and an
    // add on another thread; 100 us of wall time.
    const nlohmann::json trace = {
        {"traceEvents",
         {op("aten::matmul", 0, 10, 1, {"float", "float"}), op("aten::mm", 1, 8, 2, {"float", "float"}),
          op("aten::to", 20, 6, 3, nullptr, 2), op("aten::_to_copy", 21, 4, 4, nullptr, 2),
          op("aten::add", 30, 10, 5, nullptr, 2)}}};
    const ProfileSummary s = summarize_trace(trace, 1, 0.1);
    EXPECT_EQ(s.source, "CPU operators (self time)");
    EXPECT_EQ(s.events, 5);
    EXPECT_NEAR(row(s, "fp32 GEMM"), 0.010, 1e-12);
    EXPECT_NEAR(row(s, "copies and casts"), 0.006, 1e-12);
    EXPECT_NEAR(row(s, "elementwise/reduction"), 0.010, 1e-12);
    EXPECT_NEAR(row(s, "host gaps"), 0.074, 1e-12);
}

TEST(ProfileSummary, CategoriesOfNames) {
    EXPECT_EQ(profile_category("aten::scaled_dot_product_attention", {}), "attention");
    EXPECT_EQ(profile_category("fmha_cutlassF_bf16_aligned_64x128", {}), "attention");
    EXPECT_EQ(profile_category("ampere_bf16_s16816gemm_bf16_128x128", {}), "bf16 GEMM");
    EXPECT_EQ(profile_category("nvjet_tst_64x8_64x16", {}), "GEMM (other dtype)");
    EXPECT_EQ(profile_category("CatArrayBatchedCopy", {}), "copies and casts");
    EXPECT_EQ(profile_category("aten::cat", {}), "copies and casts");
    EXPECT_EQ(profile_category("aten::softmax", {}), "elementwise/reduction");
}

}  // namespace
}  // namespace slipway::train
