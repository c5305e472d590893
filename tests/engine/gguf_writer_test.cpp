// The GGUF writer and the HF -> GGUF mapping (engine/io/gguf_writer.h, gguf_metadata.h), no torch:
// fp16 / bf16 / Q8_0 conversions against hand-worked bit patterns (round to nearest even, subnormals,
// inf, NaN); the file layout read back by a small reader here (magic, version 3, counts, dims reversed,
// offsets aligned to 32); a full disk leaving no file; the Q/K row permutation checked against RoPE
// itself; and the tokenizer.* metadata of three real tokenizers (Llama 3, Llama 2, Qwen3), which the
// tokenizer_reference fixture installs (skipped when they are absent).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <variant>

#include <nlohmann/json.hpp>

#include "contract/faulty_file_system.h"
#include "io/gguf_metadata.h"
#include "io/gguf_writer.h"
#include "test_paths.h"

namespace slipway::io {
namespace {

namespace fs = std::filesystem;

constexpr double kPi = 3.14159265358979323846;

float from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// ---------------------------------------------------------------------------------------------------
// fp16

TEST(GgufConversion, Fp16ExactValues) {
    EXPECT_EQ(fp32_to_fp16(0.0f), 0x0000);
    EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
    EXPECT_EQ(fp32_to_fp16(1.0f), 0x3c00);
    EXPECT_EQ(fp32_to_fp16(-2.0f), 0xc000);
    EXPECT_EQ(fp32_to_fp16(0.5f), 0x3800);
    EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7bff);               // the largest half
    EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -14)), 0x0400);  // the smallest normal half
}

TEST(GgufConversion, Fp16RoundsToNearestEven) {
    // Between 1 (0x3c00) and 1 + 2^-10 (0x3c01): the halfway point goes to the even 0x3c00.
    EXPECT_EQ(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
    // Just above halfway: up.
    EXPECT_EQ(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
    // Between 0x3c01 (odd) and 0x3c02: halfway goes up to the even one.
    EXPECT_EQ(fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
    // A carry out of the mantissa moves into the exponent: 2 - 2^-12 is halfway between 0x3fff and 2.0.
    EXPECT_EQ(fp32_to_fp16(2.0f - std::ldexp(1.0f, -12)), 0x4000);
    // 65519.99 stays 65504; 65520 is halfway to 65536 whose even neighbour is inf.
    EXPECT_EQ(fp32_to_fp16(65519.0f), 0x7bff);
    EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00);
    EXPECT_EQ(fp32_to_fp16(-1e6f), 0xfc00);
}

TEST(GgufConversion, Fp16Subnormals) {
    EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -24)), 0x0001);  // the smallest subnormal half
    EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // halfway to 0: even
    EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -25) * 1.0001f), 0x0001);
    EXPECT_EQ(fp32_to_fp16(1.5f * std::ldexp(1.0f, -24)), 0x0002);     // halfway 1..2: even 2
    EXPECT_EQ(fp32_to_fp16(2.5f * std::ldexp(1.0f, -24)), 0x0002);     // halfway 2..3: even 2
    EXPECT_EQ(fp32_to_fp16(1023.0f * std::ldexp(1.0f, -24)), 0x03ff);  // the largest subnormal
    EXPECT_EQ(fp32_to_fp16(1023.5f * std::ldexp(1.0f, -24)), 0x0400);  // rounds up into the normals
    EXPECT_EQ(fp32_to_fp16(-3.0f * std::ldexp(1.0f, -24)), 0x8003);
    EXPECT_EQ(fp32_to_fp16(from_bits(0x00000001)), 0x0000);  // an fp32 subnormal
    EXPECT_EQ(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));
    EXPECT_EQ(fp16_to_fp32(0x83ff), -1023.0f * std::ldexp(1.0f, -24));
}

TEST(GgufConversion, Fp16InfAndNan) {
    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_EQ(fp32_to_fp16(inf), 0x7c00);
    EXPECT_EQ(fp32_to_fp16(-inf), 0xfc00);
    const uint16_t nan = fp32_to_fp16(std::numeric_limits<float>::quiet_NaN());
    EXPECT_EQ(nan & 0x7c00, 0x7c00);
    EXPECT_NE(nan & 0x03ff, 0);
    // A NaN whose payload lies only in the low bits must not become inf.
    EXPECT_TRUE(std::isnan(fp16_to_fp32(fp32_to_fp16(from_bits(0x7f800001)))));
    EXPECT_EQ(fp32_to_fp16(from_bits(0xff800001)) & 0x8000, 0x8000);
    EXPECT_TRUE(std::isinf(fp16_to_fp32(0x7c00)));
}

TEST(GgufConversion, Fp16RoundTripsEveryHalf) {
    for (uint32_t h = 0; h < 0x10000; ++h) {
        const float f = fp16_to_fp32(static_cast<uint16_t>(h));
        if (std::isnan(f)) continue;
        ASSERT_EQ(fp32_to_fp16(f), h) << std::hex << h;
    }
}

// ---------------------------------------------------------------------------------------------------
// bf16

TEST(GgufConversion, Bf16RoundsToNearestEven) {
    EXPECT_EQ(fp32_to_bf16(1.0f), 0x3f80);
    EXPECT_EQ(fp32_to_bf16(-2.0f), 0xc000);
    EXPECT_EQ(fp32_to_bf16(from_bits(0x3f808000)), 0x3f80);  // halfway, 0x3f80 even: down
    EXPECT_EQ(fp32_to_bf16(from_bits(0x3f818000)), 0x3f82);  // halfway, 0x3f81 odd: up
    EXPECT_EQ(fp32_to_bf16(from_bits(0x3f808001)), 0x3f81);  // above halfway: up
    EXPECT_EQ(fp32_to_bf16(from_bits(0x3f807fff)), 0x3f80);  // below halfway: down
    EXPECT_EQ(fp32_to_bf16(from_bits(0x7f7fffff)), 0x7f80);  // the largest float rounds to inf
    EXPECT_EQ(fp32_to_bf16(from_bits(0x00008000)), 0x0000);  // subnormal, halfway to even 0
    EXPECT_EQ(fp32_to_bf16(from_bits(0x00018000)), 0x0002);  // subnormal, halfway from odd 1 to 2
    EXPECT_EQ(fp32_to_bf16(from_bits(0x80010000)), 0x8001);
    EXPECT_EQ(bf16_to_fp32(0x3f81), from_bits(0x3f810000));
}

TEST(GgufConversion, Bf16KeepsInfAndNan) {
    EXPECT_EQ(fp32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
    EXPECT_EQ(fp32_to_bf16(-std::numeric_limits<float>::infinity()), 0xff80);
    // Truncating 0x7f800001 would give inf; the quiet bit keeps it a NaN (ggml_compute_fp32_to_bf16).
    EXPECT_EQ(fp32_to_bf16(from_bits(0x7f800001)), 0x7fc0);
    EXPECT_EQ(fp32_to_bf16(from_bits(0xffc00000)), 0xffc0);
    // A NaN must not carry into the next exponent either (0x7fffffff + rounding would wrap the sign).
    EXPECT_EQ(fp32_to_bf16(from_bits(0x7fffffff)), 0x7fff);
    EXPECT_TRUE(std::isnan(bf16_to_fp32(fp32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

// ---------------------------------------------------------------------------------------------------
// Q8_0

std::vector<uint8_t> quantize(const std::vector<float>& x) {
    std::vector<uint8_t> out(
        static_cast<size_t>(gguf_row_bytes(GgufType::kQ8_0, static_cast<int64_t>(x.size()))));
    quantize_row_q8_0(x.data(), static_cast<int64_t>(x.size()), out.data());
    return out;
}

TEST(GgufConversion, Q8_0Block) {
    // x = -16..15: amax 16, d = 16 / 127 = 0.1259843 -> fp16 0x3008 (0.125 + 8 x 2^-13); 1/d = 7.9375.
    std::vector<float> x(32);
    for (int j = 0; j < 32; ++j)
        x[j] = static_cast<float>(j - 16);
    const std::vector<uint8_t> q = quantize(x);
    ASSERT_EQ(q.size(), 34u);
    EXPECT_EQ(q[0] | (q[1] << 8), 0x3008);
    auto code = [&](int j) { return static_cast<int8_t>(q[2 + j]); };
    EXPECT_EQ(code(0), -127);  // -16 x 7.9375
    EXPECT_EQ(code(16), 0);
    EXPECT_EQ(code(17), 8);    // 7.9375
    EXPECT_EQ(code(18), 16);   // 15.875
    EXPECT_EQ(code(31), 119);  // 119.0625
    std::vector<float> back(32);
    dequantize_row_q8_0(q.data(), 32, back.data());
    EXPECT_NEAR(back[0], -16.0f, 0.01f);
}

TEST(GgufConversion, Q8_0RoundsHalfAwayFromZero) {
    // amax 127: d = 1 exactly, so q = roundf(x): C's roundf, halves away from zero (not to even).
    std::vector<float> x(32, 0.0f);
    x[0] = 127.0f;
    x[1] = 2.5f;
    x[2] = -2.5f;
    x[3] = 0.5f;
    x[4] = 3.5f;
    x[5] = -127.0f;
    const std::vector<uint8_t> q = quantize(x);
    EXPECT_EQ(q[0] | (q[1] << 8), 0x3c00);
    EXPECT_EQ(static_cast<int8_t>(q[2]), 127);
    EXPECT_EQ(static_cast<int8_t>(q[3]), 3);
    EXPECT_EQ(static_cast<int8_t>(q[4]), -3);
    EXPECT_EQ(static_cast<int8_t>(q[5]), 1);
    EXPECT_EQ(static_cast<int8_t>(q[6]), 4);
    EXPECT_EQ(static_cast<int8_t>(q[7]), -127);
}

TEST(GgufConversion, Q8_0ZeroBlockAndTwoBlocks) {
    std::vector<float> x(64, 0.0f);
    x[40] = -0.25f;
    const std::vector<uint8_t> q = quantize(x);
    ASSERT_EQ(q.size(), 68u);
    for (int i = 0; i < 34; ++i)
        EXPECT_EQ(q[i], 0) << i;  // d = 0 and every q = 0
    EXPECT_EQ(static_cast<int8_t>(q[34 + 2 + 8]), -127);
}

TEST(GgufWriter, RefusesQ8_0RowsNotAMultipleOf32) {
    GgufWriter w;
    const Status s =
        w.add_tensor("blk.0.attn_q.weight", {4, 48}, GgufType::kQ8_0, std::vector<float>(192, 1.0f));
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("blk.0.attn_q.weight"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("48"), std::string::npos) << s.message();
    EXPECT_EQ(w.tensor_count(), 0u);
    // The same rows as F16 are fine, and so is a 1-D Q8_0 tensor of 64.
    EXPECT_TRUE(w.add_tensor("a", {4, 48}, GgufType::kF16, std::vector<float>(192, 1.0f)).ok());
    EXPECT_TRUE(w.add_tensor("b", {64}, GgufType::kQ8_0, std::vector<float>(64, 1.0f)).ok());
}

TEST(GgufWriter, RefusesBadTensors) {
    GgufWriter w;
    EXPECT_FALSE(w.add_tensor("", {2}, GgufType::kF32, std::vector<float>(2)).ok());
    EXPECT_FALSE(w.add_tensor(std::string(64, 'x'), {2}, GgufType::kF32, std::vector<float>(2)).ok());
    EXPECT_FALSE(w.add_tensor("a", {}, GgufType::kF32, std::vector<float>(1)).ok());
    EXPECT_FALSE(w.add_tensor("a", {1, 1, 1, 1, 1}, GgufType::kF32, std::vector<float>(1)).ok());
    EXPECT_FALSE(w.add_tensor("a", {2, 0}, GgufType::kF32, std::vector<float>()).ok());
    EXPECT_FALSE(w.add_tensor("a", {2, 3}, GgufType::kF32, std::vector<float>(5)).ok());
    ASSERT_TRUE(w.add_tensor("a", {2}, GgufType::kF32, std::vector<float>(2)).ok());
    EXPECT_FALSE(w.add_tensor("a", {2}, GgufType::kF32, std::vector<float>(2)).ok());
}

// ---------------------------------------------------------------------------------------------------
// The file layout, read back

struct Reader {
    std::string bytes;
    size_t at = 0;
    bool failed = false;
    template <typename T>
    T get() {
        T v{};
        if (at + sizeof(T) > bytes.size()) {
            failed = true;
            return v;
        }
        std::memcpy(&v, bytes.data() + at, sizeof(T));
        at += sizeof(T);
        return v;
    }
    std::string str() {
        const auto n = get<uint64_t>();
        if (failed || at + n > bytes.size()) {
            failed = true;
            return {};
        }
        std::string s = bytes.substr(at, n);
        at += n;
        return s;
    }
};

using Value = std::variant<uint64_t, int64_t, double, bool, std::string, std::vector<std::string>,
                           std::vector<int64_t>, std::vector<double>>;

struct ParsedTensor {
    std::vector<uint64_t> dims;  // as stored: innermost first
    uint32_t type = 0;
    uint64_t offset = 0;
};

struct ParsedGguf {
    uint32_t magic = 0, version = 0;
    uint64_t tensor_count = 0, kv_count = 0;
    std::vector<std::string> keys;
    std::map<std::string, uint32_t> types;
    std::map<std::string, Value> values;
    std::vector<std::string> tensor_names;
    std::map<std::string, ParsedTensor> tensors;
    uint64_t header_end = 0;  // where the tensor infos end
    uint64_t data_start = 0;
    std::string bytes;
};

Value read_scalar(Reader& r, uint32_t type) {
    switch (type) {
        case 0:
            return uint64_t{r.get<uint8_t>()};
        case 1:
            return int64_t{r.get<int8_t>()};
        case 2:
            return uint64_t{r.get<uint16_t>()};
        case 3:
            return int64_t{r.get<int16_t>()};
        case 4:
            return uint64_t{r.get<uint32_t>()};
        case 5:
            return int64_t{r.get<int32_t>()};
        case 6:
            return double{r.get<float>()};
        case 7:
            return r.get<uint8_t>() != 0;
        case 8:
            return r.str();
        case 10:
            return r.get<uint64_t>();
        case 11:
            return r.get<int64_t>();
        case 12:
            return r.get<double>();
    }
    r.failed = true;
    return uint64_t{0};
}

ParsedGguf parse_gguf(const std::string& path) {
    ParsedGguf g;
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    Reader r{buffer.str()};
    g.magic = r.get<uint32_t>();
    g.version = r.get<uint32_t>();
    g.tensor_count = r.get<uint64_t>();
    g.kv_count = r.get<uint64_t>();
    for (uint64_t i = 0; i < g.kv_count && !r.failed; ++i) {
        const std::string key = r.str();
        const auto type = r.get<uint32_t>();
        g.keys.push_back(key);
        g.types[key] = type;
        if (type != 9) {
            g.values[key] = read_scalar(r, type);
            continue;
        }
        const auto element = r.get<uint32_t>();
        const auto n = r.get<uint64_t>();
        g.types[key] = 100 + element;  // arrays: 100 + element type
        if (element == 8) {
            std::vector<std::string> v;
            for (uint64_t k = 0; k < n && !r.failed; ++k)
                v.push_back(r.str());
            g.values[key] = v;
        } else if (element == 6 || element == 12) {
            std::vector<double> v;
            for (uint64_t k = 0; k < n && !r.failed; ++k)
                v.push_back(std::get<double>(read_scalar(r, element)));
            g.values[key] = v;
        } else {
            std::vector<int64_t> v;
            for (uint64_t k = 0; k < n && !r.failed; ++k) {
                const Value x = read_scalar(r, element);
                v.push_back(std::holds_alternative<int64_t>(x) ? std::get<int64_t>(x)
                                                               : static_cast<int64_t>(std::get<uint64_t>(x)));
            }
            g.values[key] = v;
        }
    }
    for (uint64_t i = 0; i < g.tensor_count && !r.failed; ++i) {
        const std::string name = r.str();
        ParsedTensor t;
        const auto n_dims = r.get<uint32_t>();
        for (uint32_t d = 0; d < n_dims && !r.failed; ++d)
            t.dims.push_back(r.get<uint64_t>());
        t.type = r.get<uint32_t>();
        t.offset = r.get<uint64_t>();
        g.tensor_names.push_back(name);
        g.tensors[name] = t;
    }
    EXPECT_FALSE(r.failed) << path << " ends early";
    g.header_end = r.at;
    g.data_start = (r.at + 31) / 32 * 32;
    g.bytes = std::move(r.bytes);
    return g;
}

class GgufFileTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = (fs::temp_directory_path() / ("slipway_gguf_test_" + std::to_string(getpid()) + "_" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                   .string();
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string dir_;
};

TEST_F(GgufFileTest, LayoutReadsBack) {
    GgufWriter w;
    w.set_string("general.architecture", "llama");
    w.set_u32("llama.block_count", 2);
    w.set_f32("llama.rope.freq_base", 10000.0f);
    w.set_bool("tokenizer.ggml.add_bos_token", true);
    w.set_string_array("tokenizer.ggml.tokens", {"a", "", "\xc4\xa0the"});
    w.set_i32_array("tokenizer.ggml.token_type", {1, 3, -1});
    w.set_f32_array("tokenizer.ggml.scores", {0.5f, -1000.0f});
    w.set_u64("u64", 1ull << 40);
    w.set_i64("i64", -5);
    w.set_u32("llama.block_count", 3);  // replaced in place: still the second key
    const std::vector<float> a = {1, 2, 3, 4, 5, 6};
    ASSERT_TRUE(w.add_tensor("a", {2, 3}, GgufType::kF32, a.data()).ok());
    std::vector<float> c(2 * 64);
    for (size_t i = 0; i < c.size(); ++i)
        c[i] = static_cast<float>(i) * 0.25f - 3.0f;
    ASSERT_TRUE(w.add_tensor("c", {2, 64}, GgufType::kF16, c).ok());
    ASSERT_TRUE(w.add_tensor("b", {32}, GgufType::kQ8_0, std::vector<float>(32, 2.0f)).ok());
    ASSERT_TRUE(w.add_tensor("d", {3, 1, 5}, GgufType::kBF16, std::vector<float>(15, -1.5f)).ok());
    const std::string path = dir_ + "/tiny.gguf";
    ASSERT_TRUE(w.write(path).ok());

    const ParsedGguf g = parse_gguf(path);
    EXPECT_EQ(g.magic, 0x46554747u);
    EXPECT_EQ(g.bytes.substr(0, 4), "GGUF");
    EXPECT_EQ(g.version, 3u);
    EXPECT_EQ(g.kv_count, 9u);
    EXPECT_EQ(g.tensor_count, 4u);
    ASSERT_EQ(g.keys.size(), 9u);
    EXPECT_EQ(g.keys[0], "general.architecture");
    EXPECT_EQ(g.keys[1], "llama.block_count");
    EXPECT_EQ(g.types.at("llama.block_count"), 4u);  // uint32
    EXPECT_EQ(std::get<uint64_t>(g.values.at("llama.block_count")), 3u);
    EXPECT_EQ(g.types.at("llama.rope.freq_base"), 6u);
    EXPECT_EQ(std::get<double>(g.values.at("llama.rope.freq_base")), 10000.0);
    EXPECT_EQ(std::get<bool>(g.values.at("tokenizer.ggml.add_bos_token")), true);
    EXPECT_EQ(std::get<std::vector<std::string>>(g.values.at("tokenizer.ggml.tokens")),
              (std::vector<std::string>{"a", "", "\xc4\xa0the"}));
    EXPECT_EQ(g.types.at("tokenizer.ggml.token_type"), 105u);  // array of int32
    EXPECT_EQ(std::get<std::vector<int64_t>>(g.values.at("tokenizer.ggml.token_type")),
              (std::vector<int64_t>{1, 3, -1}));
    EXPECT_EQ(std::get<std::vector<double>>(g.values.at("tokenizer.ggml.scores")),
              (std::vector<double>{0.5, -1000.0}));
    EXPECT_EQ(std::get<uint64_t>(g.values.at("u64")), 1ull << 40);
    EXPECT_EQ(std::get<int64_t>(g.values.at("i64")), -5);

    EXPECT_EQ(g.tensor_names, (std::vector<std::string>{"a", "c", "b", "d"}));
    EXPECT_EQ(g.tensors.at("a").dims, (std::vector<uint64_t>{3, 2}));  // reversed: ne0 innermost
    EXPECT_EQ(g.tensors.at("c").dims, (std::vector<uint64_t>{64, 2}));
    EXPECT_EQ(g.tensors.at("d").dims, (std::vector<uint64_t>{5, 1, 3}));
    EXPECT_EQ(g.tensors.at("a").type, 0u);
    EXPECT_EQ(g.tensors.at("c").type, 1u);
    EXPECT_EQ(g.tensors.at("b").type, 8u);
    EXPECT_EQ(g.tensors.at("d").type, 30u);
    EXPECT_EQ(g.data_start % 32, 0u);
    // Offsets: each tensor starts 32-aligned, right after the one before (24 -> 32, 256, 34 -> 64, 30).
    EXPECT_EQ(g.tensors.at("a").offset, 0u);
    EXPECT_EQ(g.tensors.at("c").offset, 32u);
    EXPECT_EQ(g.tensors.at("b").offset, 288u);
    EXPECT_EQ(g.tensors.at("d").offset, 352u);
    EXPECT_EQ(g.bytes.size(), g.data_start + 352 + 32);
    EXPECT_EQ(g.bytes.size(), w.file_bytes());
    EXPECT_EQ(g.bytes.substr(g.header_end, g.data_start - g.header_end),
              std::string(g.data_start - g.header_end, '\0'));  // padded with zeros
    float a_back[6];
    std::memcpy(a_back, g.bytes.data() + g.data_start, sizeof a_back);
    EXPECT_EQ(std::vector<float>(a_back, a_back + 6), a);
    for (size_t i = 0; i < c.size(); ++i) {
        uint16_t h;
        std::memcpy(&h, g.bytes.data() + g.data_start + 32 + 2 * i, 2);
        ASSERT_EQ(fp16_to_fp32(h), c[i]) << i;  // quarter steps are exact in fp16
    }
    uint16_t d16;
    std::memcpy(&d16, g.bytes.data() + g.data_start + 288, 2);
    EXPECT_EQ(fp16_to_fp32(d16), fp16_to_fp32(fp32_to_fp16(2.0f / 127.0f)));
    EXPECT_EQ(static_cast<int8_t>(g.bytes[g.data_start + 288 + 2]), 127);
    uint16_t b16;
    std::memcpy(&b16, g.bytes.data() + g.data_start + 352, 2);
    EXPECT_EQ(b16, 0xbfc0);  // -1.5
    // No temporary is left beside it.
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(GgufFileTest, RowSourceIsStreamedInOrder) {
    GgufWriter w;
    std::vector<int64_t> firsts;
    ASSERT_TRUE(w.add_tensor("t", {5, 32}, GgufType::kF32, [&](int64_t first, int64_t count, float* rows) {
                     firsts.push_back(first);
                     for (int64_t i = 0; i < count * 32; ++i)
                         rows[i] = static_cast<float>(first * 32 + i);
                     return Status::Ok();
                 }).ok());
    ASSERT_TRUE(w.write(dir_ + "/s.gguf").ok());
    EXPECT_EQ(firsts, std::vector<int64_t>{0});  // 160 values: one chunk
    const ParsedGguf g = parse_gguf(dir_ + "/s.gguf");
    float last;
    std::memcpy(&last, g.bytes.data() + g.data_start + 159 * 4, 4);
    EXPECT_EQ(last, 159.0f);
}

TEST_F(GgufFileTest, FailingSourceAndNonFiniteQ8_0LeaveNoFile) {
    const std::string path = dir_ + "/m.gguf";
    GgufWriter w;
    ASSERT_TRUE(w.add_tensor("blk.3.ffn_up.weight", {1, 32}, GgufType::kF32, [](int64_t, int64_t, float*) {
                     return Status::Error("shard 2 is truncated");
                 }).ok());
    Status s = w.write(path);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("blk.3.ffn_up.weight"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("shard 2 is truncated"), std::string::npos) << s.message();

    GgufWriter q;
    std::vector<float> x(64, 1.0f);
    x[40] = std::numeric_limits<float>::quiet_NaN();
    ASSERT_TRUE(q.add_tensor("blk.0.attn_v.weight", {2, 32}, GgufType::kQ8_0, x).ok());
    s = q.write(path);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("blk.0.attn_v.weight"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("row 1"), std::string::npos) << s.message();
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 0);
}

TEST_F(GgufFileTest, FullDiskNamesThePathAndKeepsTheOldFile) {
    const std::string path = dir_ + "/m.gguf";
    {
        std::ofstream old(path);
        old << "old";
    }
    GgufWriter w;
    w.set_string("general.architecture", "llama");
    ASSERT_TRUE(w.add_tensor("t", {64, 64}, GgufType::kF32, std::vector<float>(64 * 64, 1.0f)).ok());
    FaultyFileSystem faulty;
    faulty.fill_disk_after(1000);
    const Status s = w.write(path, faulty);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("No space left"), std::string::npos) << s.message();
    std::ifstream in(path);
    std::string text;
    in >> text;
    EXPECT_EQ(text, "old");
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

// ---------------------------------------------------------------------------------------------------
// Q/K permutation

TEST(GgufRope, PermutationMatchesConvertHfToGguf) {
    // convert_hf_to_gguf.py: w.reshape(heads, 2, out / heads / 2, in).swapaxes(1, 2).reshape(out, in).
    // For 2 heads of 4 rows: GGUF rows [0, 2, 1, 3, 4, 6, 5, 7] of HF's.
    const int64_t out = 8, in = 3, heads = 2;
    std::vector<float> w(out * in), p(out * in);
    for (int64_t i = 0; i < out * in; ++i)
        w[i] = static_cast<float>(i);
    permute_for_gguf_rope(w.data(), out, in, heads, p.data());
    const int64_t expected[] = {0, 2, 1, 3, 4, 6, 5, 7};
    for (int64_t r = 0; r < out; ++r) {
        EXPECT_EQ(gguf_rope_source_row(r, out, heads), expected[r]);
        for (int64_t c = 0; c < in; ++c)
            EXPECT_EQ(p[r * in + c], w[expected[r] * in + c]);
    }
    // A bias is a tensor of rows of length 1.
    EXPECT_EQ(gguf_rope_source_row(5, 8, 1), 6);  // one head of 8: [0, 4, 1, 5, 2, 6, 3, 7]
}

TEST(GgufRope, PermutedInterleavedRopeEqualsHfRotateHalf) {
    // Why the permutation: ggml's llama RoPE rotates pairs (2i, 2i+1), HF's rotate_half pairs (i, i + d/2).
    // Applying ggml's rotation to the permuted head gives HF's rotation of the head, permuted, so q.k
    // (both permuted alike) is unchanged.
    const int64_t d = 8;
    const double base = 10000.0;
    std::vector<float> x(d), permuted(d), ggml(d), hf(d);
    for (int64_t i = 0; i < d; ++i)
        x[i] = static_cast<float>(std::sin(1.7 * i + 0.3));
    permute_for_gguf_rope(x.data(), d, 1, 1, permuted.data());
    for (int position : {0, 1, 5, 37}) {
        for (int64_t i = 0; i < d / 2; ++i) {
            const double theta = position * std::pow(base, -2.0 * i / d);
            const double cs = std::cos(theta), sn = std::sin(theta);
            hf[i] = static_cast<float>(x[i] * cs - x[i + d / 2] * sn);
            hf[i + d / 2] = static_cast<float>(x[i + d / 2] * cs + x[i] * sn);
            ggml[2 * i] = static_cast<float>(permuted[2 * i] * cs - permuted[2 * i + 1] * sn);
            ggml[2 * i + 1] = static_cast<float>(permuted[2 * i] * sn + permuted[2 * i + 1] * cs);
        }
        std::vector<float> hf_permuted(d);
        permute_for_gguf_rope(hf.data(), d, 1, 1, hf_permuted.data());
        for (int64_t i = 0; i < d; ++i)
            EXPECT_NEAR(ggml[i], hf_permuted[i], 1e-6) << "position " << position << " dim " << i;
    }
}

// ---------------------------------------------------------------------------------------------------
// Tensor names and types

GgufModelMetadata metadata_for(const std::string& model_type) {
    GgufModelMetadata m;
    m.config.model_type = model_type;
    m.config.num_hidden_layers = 2;
    m.config.num_attention_heads = 4;
    m.config.num_key_value_heads = 2;
    m.architecture = *gguf_architecture(m.config);
    return m;
}

TEST(GgufTensors, LlamaNamesAndPermutation) {
    const GgufModelMetadata m = metadata_for("llama");
    auto plan = [&](const std::string& name) { return gguf_tensor_plan(name, m); };
    EXPECT_EQ((*plan("model.embed_tokens.weight"))->gguf_name, "token_embd.weight");
    EXPECT_EQ((*plan("model.norm.weight"))->gguf_name, "output_norm.weight");
    EXPECT_EQ((*plan("lm_head.weight"))->gguf_name, "output.weight");
    EXPECT_EQ((*plan("model.layers.1.input_layernorm.weight"))->gguf_name, "blk.1.attn_norm.weight");
    EXPECT_EQ((*plan("model.layers.1.post_attention_layernorm.weight"))->gguf_name, "blk.1.ffn_norm.weight");
    EXPECT_EQ((*plan("model.layers.0.self_attn.q_proj.weight"))->gguf_name, "blk.0.attn_q.weight");
    EXPECT_EQ((*plan("model.layers.0.self_attn.q_proj.weight"))->rope_permute_heads, 4);
    EXPECT_EQ((*plan("model.layers.0.self_attn.k_proj.weight"))->rope_permute_heads, 2);
    EXPECT_EQ((*plan("model.layers.0.self_attn.k_proj.bias"))->gguf_name, "blk.0.attn_k.bias");
    EXPECT_EQ((*plan("model.layers.0.self_attn.k_proj.bias"))->rope_permute_heads, 2);
    EXPECT_EQ((*plan("model.layers.0.self_attn.v_proj.weight"))->rope_permute_heads, 0);
    EXPECT_EQ((*plan("model.layers.0.self_attn.o_proj.weight"))->gguf_name, "blk.0.attn_output.weight");
    EXPECT_EQ((*plan("model.layers.0.mlp.gate_proj.weight"))->gguf_name, "blk.0.ffn_gate.weight");
    EXPECT_EQ((*plan("model.layers.0.mlp.up_proj.weight"))->gguf_name, "blk.0.ffn_up.weight");
    EXPECT_EQ((*plan("model.layers.0.mlp.down_proj.weight"))->gguf_name, "blk.0.ffn_down.weight");
    ASSERT_TRUE(plan("model.layers.0.self_attn.rotary_emb.inv_freq").ok());
    EXPECT_FALSE(plan("model.layers.0.self_attn.rotary_emb.inv_freq")->has_value());
    EXPECT_FALSE(plan("model.layers.2.mlp.up_proj.weight").ok());       // only 2 layers
    EXPECT_FALSE(plan("model.layers.0.self_attn.q_norm.weight").ok());  // a Qwen3 tensor
    const auto unknown = plan("model.vision_tower.weight");
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.error().find("model.vision_tower.weight"), std::string::npos);
    EXPECT_EQ(*gguf_architecture(metadata_for("mistral").config), "llama");
}

TEST(GgufTensors, QwenNeedsNoPermutation) {
    const GgufModelMetadata qwen2 = metadata_for("qwen2");
    EXPECT_EQ(qwen2.architecture, "qwen2");
    EXPECT_EQ((*gguf_tensor_plan("model.layers.0.self_attn.q_proj.weight", qwen2))->rope_permute_heads, 0);
    EXPECT_EQ((*gguf_tensor_plan("model.layers.0.self_attn.k_proj.bias", qwen2))->rope_permute_heads, 0);
    const GgufModelMetadata qwen3 = metadata_for("qwen3");
    EXPECT_EQ(qwen3.architecture, "qwen3");
    EXPECT_EQ((*gguf_tensor_plan("model.layers.1.self_attn.k_norm.weight", qwen3))->gguf_name,
              "blk.1.attn_k_norm.weight");
    EXPECT_EQ((*gguf_tensor_plan("model.layers.1.self_attn.q_norm.weight", qwen3))->gguf_name,
              "blk.1.attn_q_norm.weight");
}

TEST(GgufTensors, TypesFollowConvertHfToGguf) {
    EXPECT_EQ(gguf_tensor_type("blk.0.attn_norm.weight", {64}, GgufFileType::kMostlyQ8_0), GgufType::kF32);
    EXPECT_EQ(gguf_tensor_type("blk.0.attn_q_norm.weight", {128}, GgufFileType::kMostlyF16), GgufType::kF32);
    EXPECT_EQ(gguf_tensor_type("blk.0.attn_q.bias", {64}, GgufFileType::kMostlyBF16), GgufType::kF32);
    EXPECT_EQ(gguf_tensor_type("blk.0.attn_q.weight", {64, 64}, GgufFileType::kMostlyBF16), GgufType::kBF16);
    EXPECT_EQ(gguf_tensor_type("blk.0.attn_q.weight", {64, 64}, GgufFileType::kMostlyF16), GgufType::kF16);
    EXPECT_EQ(gguf_tensor_type("blk.0.attn_q.weight", {64, 64}, GgufFileType::kAllF32), GgufType::kF32);
    EXPECT_EQ(gguf_tensor_type("token_embd.weight", {100, 64}, GgufFileType::kMostlyQ8_0), GgufType::kQ8_0);
    // Rows of 48 cannot be Q8_0: F16, as the converter falls back.
    EXPECT_EQ(gguf_tensor_type("blk.0.ffn_down.weight", {64, 48}, GgufFileType::kMostlyQ8_0), GgufType::kF16);
    EXPECT_EQ(*parse_gguf_file_type("q8_0"), GgufFileType::kMostlyQ8_0);
    EXPECT_FALSE(parse_gguf_file_type("q4_k").ok());
}

TEST(GgufRope, Llama3Factors) {
    model::LlamaConfig c;
    c.head_dim = 128;
    c.rope_theta = 500000.0;
    EXPECT_TRUE(llama3_rope_factors(c).empty());
    c.rope_scaling.type = "llama3";
    c.rope_scaling.factor = 8.0;
    c.rope_scaling.low_freq_factor = 1.0;
    c.rope_scaling.high_freq_factor = 4.0;
    c.rope_scaling.original_max_position_embeddings = 8192;
    const std::vector<float> f = llama3_rope_factors(c);
    ASSERT_EQ(f.size(), 64u);
    EXPECT_EQ(f[0], 1.0f);   // wavelength 2 pi < 2048: unscaled
    EXPECT_EQ(f[63], 8.0f);  // wavelength far beyond 8192: divided by the factor
    for (size_t i = 1; i < f.size(); ++i)
        EXPECT_GE(f[i], f[i - 1]);  // smooth in between
    // Pair 40: wavelength 2 pi x 500000^(80/128) ~ 22468 > 8192 -> 8; pair 30: ~ 2686, smoothed.
    EXPECT_EQ(f[40], 8.0f);
    const double wavelen = 2 * kPi / (1.0 / std::pow(500000.0, 60.0 / 128));
    const double smooth = (8192.0 / wavelen - 1.0) / 3.0;
    EXPECT_NEAR(f[30], 1.0 / ((1 - smooth) / 8.0 + smooth), 1e-4);
}

// ---------------------------------------------------------------------------------------------------
// Real tokenizers

std::string reference_folder(const std::string& name) {
    const char* fallback = test_paths::reference_dir();
    const char* dir = std::getenv("SLIPWAY_REFERENCE_DIR");
    return std::string(dir ? dir : fallback) + "/tokenizers/" + name;
}

// The tokenizer_reference fixture installs them; without it the tests that need them are skipped.
bool installed(const std::string& folder) {
    return fs::exists(folder + "/tokenizer.json");
}

int32_t type_of(GgufTokenType t) {
    return static_cast<int32_t>(t);
}

TEST(GgufTokenizerTest, Llama3) {
    const std::string folder = reference_folder("llama3");
    if (!installed(folder)) GTEST_SKIP() << "no tokenizer.json in " << folder;
    Result<GgufTokenizer> t = read_gguf_tokenizer(folder, 128256);
    ASSERT_TRUE(t.ok()) << t.error();
    EXPECT_EQ(t->model, "gpt2");
    EXPECT_EQ(t->pre, "llama-bpe");
    ASSERT_EQ(t->tokens.size(), 128256u);
    ASSERT_EQ(t->token_types.size(), 128256u);
    EXPECT_TRUE(t->scores.empty());
    EXPECT_EQ(t->tokens[0], "!");
    EXPECT_EQ(t->token_types[0], type_of(GgufTokenType::kNormal));
    EXPECT_EQ(t->tokens[128000], "<|begin_of_text|>");
    EXPECT_EQ(t->token_types[128000], type_of(GgufTokenType::kControl));
    EXPECT_EQ(t->token_types[128255], type_of(GgufTokenType::kControl));
    ASSERT_EQ(t->merges.size(), 280147u);
    EXPECT_EQ(t->merges[0], "\xc4\xa0 \xc4\xa0");  // "Ġ Ġ"
    EXPECT_EQ(t->bos_id, 128000u);
    EXPECT_EQ(t->eos_id, 128001u);
    EXPECT_FALSE(t->unknown_id.has_value());
    // This tokenizer.json's post_processor is ByteLevel alone: the HF tokenizer adds no <|begin_of_text|>.
    EXPECT_EQ(t->add_bos, false);
    EXPECT_EQ(t->add_bos_source.rfind("convention: ", 0), 0u) << t->add_bos_source;
    EXPECT_FALSE(t->add_space_prefix.has_value());
    EXPECT_NE(t->chat_template.find("<|start_header_id|>"), std::string::npos);
}

TEST(GgufTokenizerTest, Llama2SentencePiece) {
    const std::string folder = reference_folder("llama2");
    if (!installed(folder)) GTEST_SKIP() << "no tokenizer.json in " << folder;
    Result<GgufTokenizer> t = read_gguf_tokenizer(folder);
    ASSERT_TRUE(t.ok()) << t.error();
    EXPECT_EQ(t->model, "llama");
    EXPECT_EQ(t->pre, "default");
    ASSERT_EQ(t->tokens.size(), 32000u);
    ASSERT_EQ(t->scores.size(), 32000u);
    EXPECT_TRUE(t->merges.empty());
    EXPECT_EQ(t->tokens[1], "<s>");
    EXPECT_EQ(t->token_types[0], type_of(GgufTokenType::kControl));  // <unk>: a special added token
    EXPECT_EQ(t->token_types[1], type_of(GgufTokenType::kControl));
    EXPECT_EQ(t->tokens[3], "<0x00>");
    EXPECT_EQ(t->token_types[3], type_of(GgufTokenType::kByte));
    EXPECT_EQ(t->token_types[13], type_of(GgufTokenType::kByte));  // <0x0A>: llama.cpp's newline
    EXPECT_EQ(t->tokens[261], "\xe2\x96\x81t");                    // "▁t", the first merge
    EXPECT_EQ(t->token_types[261], type_of(GgufTokenType::kNormal));
    EXPECT_EQ(t->scores[261], 0.0f);
    EXPECT_EQ(t->scores[263], -2.0f);  // "er": merge 2
    // "▁▁" (id 259) is merged late in HF's merges (rank 58876): its score must say so, not its id.
    EXPECT_EQ(t->scores[259], -58876.0f);
    EXPECT_EQ(t->bos_id, 1u);
    EXPECT_EQ(t->eos_id, 2u);
    EXPECT_EQ(t->unknown_id, 0u);
    EXPECT_FALSE(t->padding_id.has_value());  // pad_token null
    EXPECT_EQ(t->add_bos, true);              // as its TemplateProcessing (starts with <s>) agrees
    EXPECT_EQ(t->add_bos_source, "tokenizer_config.json add_bos_token");
    EXPECT_EQ(t->add_eos, false);
    EXPECT_EQ(t->add_space_prefix, true);  // the Prepend("▁") normalizer
    EXPECT_TRUE(t->chat_template.empty());
}

TEST(GgufTokenizerTest, Qwen3PaddedToTheEmbedding) {
    const std::string folder = reference_folder("qwen3");
    if (!installed(folder)) GTEST_SKIP() << "no tokenizer.json in " << folder;
    Result<GgufTokenizer> t = read_gguf_tokenizer(folder, 151936);  // Qwen3's config.json vocab_size
    ASSERT_TRUE(t.ok()) << t.error();
    EXPECT_EQ(t->model, "gpt2");
    EXPECT_EQ(t->pre, "qwen2");
    ASSERT_EQ(t->tokens.size(), 151936u);
    EXPECT_EQ(t->tokens[151669], "[PAD151669]");
    EXPECT_EQ(t->token_types[151935], type_of(GgufTokenType::kUnused));
    EXPECT_EQ(t->tokens[151644], "<|im_start|>");
    EXPECT_EQ(t->token_types[151644], type_of(GgufTokenType::kControl));
    EXPECT_EQ(t->tokens[151668], "</think>");
    EXPECT_EQ(t->token_types[151668], type_of(GgufTokenType::kUserDefined));  // special: false
    EXPECT_EQ(t->token_types[151659], type_of(GgufTokenType::kControl));      // <|fim_prefix|> looks special
    ASSERT_EQ(t->merges.size(), 151387u);
    EXPECT_EQ(t->merges[0], "\xc4\xa0 \xc4\xa0");  // ["Ġ", "Ġ"]
    EXPECT_EQ(t->merges[2], "i n");
    EXPECT_EQ(t->eos_id, 151645u);      // <|im_end|>
    EXPECT_EQ(t->padding_id, 151643u);  // <|endoftext|>
    EXPECT_FALSE(t->bos_id.has_value());
    EXPECT_EQ(t->add_bos, false);
    EXPECT_TRUE(t->normalizer_nfc);
    EXPECT_NE(t->chat_template.find("<|im_start|>"), std::string::npos);

    const Result<GgufTokenizer> small = read_gguf_tokenizer(folder, 1000);
    ASSERT_FALSE(small.ok());
    EXPECT_NE(small.error().find("tokenizer.json"), std::string::npos) << small.error();
    EXPECT_NE(small.error().find("vocab_size 1000"), std::string::npos) << small.error();
}

TEST(GgufTokenizerTest, UnknownPreTokenizerIsRefused) {
    EXPECT_EQ(
        *gguf_pre_tokenizer(
            R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
        "llama-bpe");
    const Result<std::string> gpt2 = gguf_pre_tokenizer(R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+)");
    ASSERT_FALSE(gpt2.ok());
    EXPECT_NE(gpt2.error().find("llama-bpe"), std::string::npos);
}

// add_bos_token / add_eos_token follow the rule the engine's tokenizer encodes with (special_tokens.h), and
// the token added must be the GGUF's bos_token_id.
std::string demo_tokenizer() {
    return std::string(test_paths::source_dir("/resources/demo/tokenizer.json"));
}

TEST_F(GgufFileTest, TheDemoTokenizersTemplateAddsItsBos) {
    fs::create_symlink(demo_tokenizer(), dir_ + "/tokenizer.json");
    Result<GgufTokenizer> t = read_gguf_tokenizer(dir_);
    ASSERT_TRUE(t.ok()) << t.error();
    ASSERT_TRUE(t->bos_id.has_value());  // no tokenizer_config.json: the template's token is the BOS
    EXPECT_EQ(t->tokens[*t->bos_id], "<|begin_of_text|>");
    EXPECT_EQ(t->add_bos, true);
    EXPECT_EQ(t->add_bos_source, "post_processor TemplateProcessing");
    EXPECT_EQ(t->add_eos, false);
    // tokenizer_config.json turns it off: HF's tokenizer then adds none, and neither may llama.cpp.
    std::ofstream(dir_ + "/tokenizer_config.json") << R"({"add_bos_token": false})";
    t = read_gguf_tokenizer(dir_);
    ASSERT_TRUE(t.ok()) << t.error();
    EXPECT_EQ(t->add_bos, false);
    EXPECT_EQ(t->add_bos_source, "tokenizer_config.json add_bos_token");
}

TEST_F(GgufFileTest, ABosTokenOtherThanTheOneTheTemplateAddsIsRefused) {
    fs::create_symlink(demo_tokenizer(), dir_ + "/tokenizer.json");
    std::ofstream(dir_ + "/tokenizer_config.json") << R"({"bos_token": "<|end_of_text|>"})";
    const Result<GgufTokenizer> t = read_gguf_tokenizer(dir_);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().find(dir_ + "/tokenizer.json: the tokenizer puts id "), std::string::npos)
        << t.error();
    EXPECT_NE(t.error().find("before each text (post_processor TemplateProcessing) but the bos token is id"),
              std::string::npos)
        << t.error();
}

TEST_F(GgufFileTest, Llama3WithMetasSequencePostProcessorAddsItsBos) {
    const std::string folder = reference_folder("llama3");
    if (!installed(folder)) GTEST_SKIP() << "no tokenizer.json in " << folder;
    nlohmann::json tokenizer = nlohmann::json::parse(std::ifstream(folder + "/tokenizer.json"));
    tokenizer["post_processor"] = nlohmann::json::parse(R"({"type": "Sequence", "processors": [
        {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
        {"type": "TemplateProcessing",
         "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                    {"Sequence": {"id": "A", "type_id": 0}}],
         "pair": [],
         "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [128000],
                                                  "tokens": ["<|begin_of_text|>"]}}}]})");
    std::ofstream(dir_ + "/tokenizer.json") << tokenizer.dump();
    fs::copy_file(folder + "/tokenizer_config.json", dir_ + "/tokenizer_config.json");
    const Result<GgufTokenizer> t = read_gguf_tokenizer(dir_, 128256);
    ASSERT_TRUE(t.ok()) << t.error();
    EXPECT_EQ(t->bos_id, 128000u);
    EXPECT_EQ(t->add_bos, true);
    EXPECT_EQ(t->add_bos_source, "post_processor TemplateProcessing");
}

TEST_F(GgufFileTest, ModelMetadataKeys) {
    const std::string tokenizer = reference_folder("llama3");
    if (!installed(tokenizer)) GTEST_SKIP() << "no tokenizer.json in " << tokenizer;
    const std::string folder = dir_ + "/Tiny-Llama";
    fs::create_directories(folder);
    fs::create_symlink(fs::absolute(tokenizer + "/tokenizer.json"), folder + "/tokenizer.json");
    fs::create_symlink(fs::absolute(tokenizer + "/tokenizer_config.json"), folder + "/tokenizer_config.json");
    {
        std::ofstream config(folder + "/config.json");
        config << R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 128256,
            "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
            "num_key_value_heads": 2, "head_dim": 32, "max_position_embeddings": 1024, "rms_norm_eps": 1e-5,
            "rope_theta": 500000.0, "bos_token_id": 128000, "eos_token_id": [128001, 128009],
            "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                             "high_freq_factor": 4.0, "original_max_position_embeddings": 64}})";
    }
    Result<GgufModelMetadata> m = read_gguf_metadata(folder);
    ASSERT_TRUE(m.ok()) << m.error();
    EXPECT_EQ(m->architecture, "llama");
    EXPECT_EQ(m->name, "Tiny-Llama");
    GgufWriter w;
    add_gguf_metadata(*m, GgufFileType::kMostlyQ8_0, w);
    ASSERT_TRUE(add_gguf_rope_freqs(*m, w).ok());
    ASSERT_TRUE(w.write(dir_ + "/m.gguf").ok());
    const ParsedGguf g = parse_gguf(dir_ + "/m.gguf");
    auto u = [&](const std::string& key) { return std::get<uint64_t>(g.values.at(key)); };
    EXPECT_EQ(std::get<std::string>(g.values.at("general.architecture")), "llama");
    EXPECT_EQ(u("general.file_type"), 7u);
    EXPECT_EQ(u("llama.context_length"), 1024u);
    EXPECT_EQ(u("llama.embedding_length"), 64u);
    EXPECT_EQ(u("llama.block_count"), 2u);
    EXPECT_EQ(u("llama.feed_forward_length"), 128u);
    EXPECT_EQ(u("llama.attention.head_count"), 4u);
    EXPECT_EQ(u("llama.attention.head_count_kv"), 2u);
    EXPECT_EQ(u("llama.rope.dimension_count"), 32u);
    EXPECT_EQ(u("llama.attention.key_length"), 32u);  // 4 x 32 != 64
    EXPECT_EQ(u("llama.attention.value_length"), 32u);
    EXPECT_EQ(u("llama.vocab_size"), 128256u);
    EXPECT_FLOAT_EQ(std::get<double>(g.values.at("llama.attention.layer_norm_rms_epsilon")), 1e-5);
    EXPECT_EQ(std::get<double>(g.values.at("llama.rope.freq_base")), 500000.0);
    EXPECT_EQ(g.values.count("llama.rope.scaling.type"), 0u);
    EXPECT_EQ(std::get<std::string>(g.values.at("tokenizer.ggml.model")), "gpt2");
    EXPECT_EQ(std::get<std::string>(g.values.at("tokenizer.ggml.pre")), "llama-bpe");
    EXPECT_EQ(std::get<std::vector<std::string>>(g.values.at("tokenizer.ggml.tokens")).size(), 128256u);
    EXPECT_EQ(g.types.at("tokenizer.ggml.token_type"), 105u);
    EXPECT_EQ(u("tokenizer.ggml.bos_token_id"), 128000u);
    EXPECT_EQ(u("tokenizer.ggml.eos_token_id"), 128001u);  // tokenizer_config's <|end_of_text|>
    EXPECT_EQ(std::get<bool>(g.values.at("tokenizer.ggml.add_bos_token")), false);
    EXPECT_FALSE(std::get<std::string>(g.values.at("tokenizer.chat_template")).empty());
    ASSERT_EQ(g.tensor_names, std::vector<std::string>{"rope_freqs.weight"});
    EXPECT_EQ(g.tensors.at("rope_freqs.weight").dims, std::vector<uint64_t>{16});
    EXPECT_EQ(g.tensors.at("rope_freqs.weight").type, 0u);
}

}  // namespace
}  // namespace slipway::io
