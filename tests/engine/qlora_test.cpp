// QLoRA in the model: the NF4 weight's dequantization against engine/quant's codec (itself bit-exact against
// bitsandbytes' source in tests/quant), with and without double quantization; a QLoRA model's loss and LoRA
// gradients against a LoRA model whose base weights are those dequantized values; the 4-bit storage
// replacing the parameters; loading quantized straight from a checkpoint equal to quantizing after loading;
// and the run config's QLoRA fields, flags and refusals.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "contract/hf_flags.h"
#include "contract/run_config.h"
#include "model/llama.h"
#include "model/lora.h"
#include "model/nf4_weight.h"
#include "model/qlora.h"
#include "model/weights.h"
#include "quant/nf4.h"

namespace slipway::model {
namespace {

TEST(Nf4Weight, DequantizesAsTheCodec) {
    torch::manual_seed(2);
    const torch::Tensor w = torch::randn({48, 100}) * 0.3;  // 4800 values: the last block is partial
    for (bool double_quant : {false, true}) {
        Result<Nf4Weight> q = quantize_nf4_weight(w, double_quant);
        ASSERT_TRUE(q.ok()) << q.error();
        Result<quant::Nf4Tensor> codec = quant::quantize_nf4(w.contiguous().data_ptr<float>(), 4800);
        ASSERT_TRUE(codec.ok());
        if (double_quant) {  // the codes' block scales are the double-dequantized ones
            Result<quant::DoubleQuantized> dq = quant::double_quantize_absmax(codec->absmax);
            ASSERT_TRUE(dq.ok());
            Result<std::vector<float>> absmax = quant::dequantize_absmax(*dq);
            ASSERT_TRUE(absmax.ok());
            codec->absmax = *absmax;
        }
        std::vector<float> expected(4800);
        ASSERT_TRUE(quant::dequantize_nf4(*codec, expected.data()).ok());
        const torch::Tensor got = q->dequantize(torch::kFloat32).contiguous();
        EXPECT_EQ(std::memcmp(got.data_ptr<float>(), expected.data(), 4800 * sizeof(float)), 0)
            << "double_quant " << double_quant;
        EXPECT_TRUE(torch::equal(q->dequantize(torch::kBFloat16), got.to(torch::kBFloat16)));
    }
    // Double quantization stores a byte per block instead of 4 (plus a float per 256 blocks).
    const torch::Tensor big = torch::randn({512, 512});
    EXPECT_EQ(quantize_nf4_weight(big, false)->resident_bytes(), 131072 + 4 * 4096 + 64);
    EXPECT_EQ(quantize_nf4_weight(big, true)->resident_bytes(), 131072 + 4096 + 4 * 16 + 4 * 256 + 64);
}

// On a GPU, Nf4Weight::dequantize runs the CUDA kernel of model/nf4_dequant.cu (ATen ops where the engine
// was built without CUDA): the CPU loop's numbers bit for bit, in fp32, bf16 and fp16, with and without
// double quantization, on a partial last block and on a weight of 2^24 + 64 values (several grid strides).
TEST(Nf4Weight, GpuDequantizationEqualsTheCpuLoopBitForBit) {
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
    torch::manual_seed(3);
    for (const std::vector<int64_t>& shape :
         {std::vector<int64_t>{48, 100}, std::vector<int64_t>{4097, 4096}}) {
        const torch::Tensor w = torch::randn(shape) * 0.05;
        for (bool double_quant : {false, true}) {
            Result<Nf4Weight> q = quantize_nf4_weight(w, double_quant);
            ASSERT_TRUE(q.ok()) << q.error();
            const Nf4Weight on_gpu = q->to(torch::Device(torch::kCUDA, 0));
            for (torch::ScalarType dtype : {torch::kFloat32, torch::kBFloat16, torch::kHalf}) {
                const torch::Tensor cpu = q->dequantize(dtype), gpu = on_gpu.dequantize(dtype).cpu();
                EXPECT_TRUE(torch::equal(gpu, cpu))
                    << shape[0] << "x" << shape[1] << " double_quant " << double_quant << " dtype " << dtype;
            }
        }
    }
}

LlamaConfig tiny() {
    LlamaConfig c;
    c.vocab_size = 64;
    c.hidden_size = 32;
    c.intermediate_size = 64;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 4;
    c.num_key_value_heads = 2;
    c.head_dim = 8;
    c.max_position_embeddings = 32;
    c.model_type = "qwen2";  // q/k/v biases next to NF4 weights
    c.qkv_bias = true;
    return c;
}

AdapterConfig qlora_adapter() {
    AdapterConfig a;
    a.method = "qlora";
    a.r = 4;
    a.lora_alpha = 8;
    a.target_modules = {"q_proj", "v_proj", "down_proj"};
    a.bnb_4bit_compute_dtype = "float32";
    return a;
}

// The QLoRA model computes what a LoRA model on the dequantized base computes, gradients included.
TEST(Qlora, MatchesLoraOnTheDequantizedBase) {
    LlamaForCausalLM qlora(tiny());
    init_weights(qlora, 4);
    LlamaForCausalLM lora(tiny());
    {
        torch::NoGradGuard no_grad;
        auto from = qlora->named_parameters();
        for (auto& item : lora->named_parameters())
            item.value().copy_(from[item.key()]);
    }
    const AdapterConfig adapter = qlora_adapter();
    ASSERT_TRUE(apply_lora(qlora, adapter).ok());
    Result<int64_t> bytes = quantize_base(qlora, adapter);
    ASSERT_TRUE(bytes.ok()) << bytes.error();
    EXPECT_GT(*bytes, 0);
    AdapterConfig plain = adapter;
    plain.method = "lora";
    ASSERT_TRUE(apply_lora(lora, plain).ok());
    {
        torch::NoGradGuard no_grad;
        for (const auto& item : qlora->named_modules()) {
            auto linear = std::dynamic_pointer_cast<LinearImpl>(item.value());
            if (!linear || !linear->quantized()) continue;
            auto twin = std::dynamic_pointer_cast<LinearImpl>(lora->named_modules()[item.key()]);
            twin->weight.copy_(linear->nf4->dequantize(torch::kFloat32));
        }
        auto from = qlora->named_parameters();
        for (auto& item : lora->named_parameters()) {
            if (item.key().find("lora_B") != std::string::npos) {  // B = 0 at start: make the adapters act
                item.value().normal_(0, 0.1);
                from[item.key()].copy_(item.value());
            } else if (from.contains(item.key())) {
                item.value().copy_(from[item.key()]);
            }
        }
    }
    // No decoder linear weight is a parameter any more; its bias and the adapters are.
    for (const auto& item : qlora->named_parameters()) {
        const std::string& name = item.key();
        EXPECT_FALSE(name.find("model.layers.") == 0 && name.find("_proj.weight") != std::string::npos &&
                     name.find("lora_") == std::string::npos)
            << name;
    }
    const torch::Tensor ids = torch::randint(64, {2, 12}, torch::kInt64);
    LossResult a = causal_lm_loss(qlora, ids);
    LossResult b = causal_lm_loss(lora, ids);
    EXPECT_NEAR(a.loss.item<double>(), b.loss.item<double>(), 1e-5);
    a.loss.backward();
    b.loss.backward();
    auto twin = lora->named_parameters();
    int compared = 0;
    for (const auto& item : qlora->named_parameters()) {
        if (item.key().find("lora_") == std::string::npos) continue;
        const torch::Tensor& g = item.value().grad();
        const torch::Tensor& h = twin[item.key()].grad();
        EXPECT_TRUE(torch::allclose(g, h, 1e-4, 1e-6))
            << item.key() << " " << (g - h).abs().max().item<float>();
        ++compared;
    }
    EXPECT_EQ(compared, 2 * 3 * 2);  // A and B x 3 targets x 2 layers
}

TEST(Qlora, QuantizedWhileLoadingEqualsQuantizedAfter) {
    const std::string dir =
        (std::filesystem::temp_directory_path() / ("slipway_qlora_" + std::to_string(getpid()))).string();
    LlamaForCausalLM source(tiny());
    init_weights(source, 9);
    ASSERT_TRUE(save_hf_model(source, dir, "bfloat16").ok());
    Result<LlamaForCausalLM> loaded = load_hf_model(dir);
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    ASSERT_TRUE(quantize_base(*loaded, qlora_adapter()).ok());
    Result<io::Checkpoint> checkpoint = io::Checkpoint::open_folder(dir);
    ASSERT_TRUE(checkpoint.ok());
    LlamaForCausalLM streamed(tiny());
    Result<int64_t> bytes = load_quantized_base(streamed, *checkpoint, qlora_adapter());
    ASSERT_TRUE(bytes.ok()) << bytes.error();
    auto a = (*loaded)->model->layers->ptr<DecoderLayerImpl>(1)->mlp->up_proj;
    auto b = streamed->model->layers->ptr<DecoderLayerImpl>(1)->mlp->up_proj;
    ASSERT_TRUE(a->quantized() && b->quantized());
    EXPECT_TRUE(torch::equal(a->nf4->packed, b->nf4->packed));
    EXPECT_TRUE(torch::equal(a->nf4->dequantize(torch::kFloat32), b->nf4->dequantize(torch::kFloat32)));
    EXPECT_TRUE(torch::equal((*loaded)->model->norm->weight, streamed->model->norm->weight));
    std::filesystem::remove_all(dir);
}

// A "-bnb-4bit" folder: bitsandbytes' keys and quantization_config written, and read back as 4-bit layers.
TEST(Qlora, BnbFolderRoundTrip) {
    const std::string dir =
        (std::filesystem::temp_directory_path() / ("slipway_bnb_" + std::to_string(getpid()))).string();
    LlamaForCausalLM model(tiny());
    init_weights(model, 5);
    const AdapterConfig settings = qlora_settings(true, "bfloat16");
    ASSERT_TRUE(quantize_base(model, settings).ok());
    ASSERT_TRUE(save_quantized_model(model, settings, dir, "bfloat16").ok());
    Result<io::Checkpoint> checkpoint = io::Checkpoint::open_folder(dir);
    ASSERT_TRUE(checkpoint.ok());
    const std::string q = "model.layers.0.self_attn.q_proj.weight";
    for (const char* suffix : {"", ".absmax", ".quant_map", ".nested_absmax", ".nested_quant_map",
                               ".quant_state.bitsandbytes__nf4"})
        EXPECT_EQ(checkpoint->tensors().count(q + suffix), 1u) << suffix;
    EXPECT_EQ(checkpoint->tensors().at(q).shape, (std::vector<int64_t>{32 * 32 / 2, 1}));
    EXPECT_EQ(checkpoint->tensors().at(q + ".absmax").dtype, io::DType::kU8);  // double-quantized codes
    Result<LlamaForCausalLM> back = load_hf_model(dir);
    ASSERT_TRUE(back.ok()) << back.error();
    auto a = model->model->layers->ptr<DecoderLayerImpl>(1)->mlp->down_proj;
    auto b = (*back)->model->layers->ptr<DecoderLayerImpl>(1)->mlp->down_proj;
    ASSERT_TRUE(b->quantized());
    EXPECT_EQ(b->nf4_compute_dtype, torch::kBFloat16);
    EXPECT_TRUE(torch::equal(a->nf4->dequantize(torch::kFloat32), b->nf4->dequantize(torch::kFloat32)));
    EXPECT_FLOAT_EQ(a->nf4->offset, b->nf4->offset);
    // A quant_state whose shape disagrees with the model is refused by name.
    nlohmann::json config = nlohmann::json::parse(std::ifstream(dir + "/config.json"));
    config["intermediate_size"] = 32;
    std::ofstream(dir + "/config.json") << config.dump();
    Result<LlamaForCausalLM> wrong = load_hf_model(dir);
    ASSERT_FALSE(wrong.ok());
    EXPECT_NE(wrong.error().find("quant_state shape"), std::string::npos) << wrong.error();
    config["quantization_config"]["load_in_4bit"] = false;
    config["quantization_config"]["load_in_8bit"] = true;
    std::ofstream(dir + "/config.json") << config.dump();
    wrong = load_hf_model(dir);
    ASSERT_FALSE(wrong.ok());
    EXPECT_NE(wrong.error().find("8-bit is not supported"), std::string::npos) << wrong.error();
    std::filesystem::remove_all(dir);
}

// The problems validate finds under /adapter and /distributed (a default RunConfig lacks paths).
ConfigProblems adapter_problems(const RunConfig& c) {
    ConfigProblems out;
    for (const ConfigProblem& p : validate(c)) {
        if (p.pointer.rfind("/adapter", 0) == 0 || p.pointer.rfind("/distributed", 0) == 0) out.push_back(p);
    }
    return out;
}

TEST(Qlora, RunConfigFieldsFlagsAndRefusals) {
    RunConfig c;
    c.adapter.method = "lora";
    c.adapter.bnb_4bit_use_double_quant = false;
    ConfigProblems problems = adapter_problems(c);
    ASSERT_FALSE(problems.empty());
    EXPECT_EQ(problems[0].pointer, "/adapter/bnb_4bit_use_double_quant");
    EXPECT_NE(problems[0].message.find("is a QLoRA setting"), std::string::npos) << format_problems(problems);

    c.adapter.method = "qlora";
    EXPECT_FALSE(has_errors(adapter_problems(c))) << format_problems(adapter_problems(c));
    c.distributed.sharding = "full";  // the NF4 storage is sharded with its layer (dist_train_tests)
    EXPECT_FALSE(has_errors(adapter_problems(c))) << format_problems(adapter_problems(c));

    RunConfig flags;
    Result<FlagReport> report = apply_hf_flags(
        flags, {"--load_in_4bit", "True", "--peft", "True", "--bnb_4bit_compute_dtype", "float32",
                "--bnb_4bit_use_double_quant", "False", "--bnb_4bit_quant_type", "nf4"});
    ASSERT_TRUE(report.ok()) << report.error();
    EXPECT_EQ(flags.adapter.method, "qlora");  // --peft after --load_in_4bit keeps the 4-bit base
    EXPECT_EQ(flags.adapter.bnb_4bit_compute_dtype, "float32");
    EXPECT_FALSE(flags.adapter.bnb_4bit_use_double_quant);
    RunConfig fp4;
    ASSERT_TRUE(apply_hf_flags(fp4, {"--load_in_4bit", "True", "--bnb_4bit_quant_type", "fp4"}).ok());
    problems = adapter_problems(fp4);
    ASSERT_FALSE(problems.empty());
    EXPECT_EQ(problems[0].pointer, "/adapter/bnb_4bit_quant_type");
}

}  // namespace
}  // namespace slipway::model
