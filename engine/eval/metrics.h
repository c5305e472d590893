// The arithmetic of the evaluation metrics, as EleutherAI's lm-evaluation-harness computes them, apart from
// any model: choosing among the options of a multiple-choice question (acc, acc_norm), splitting a
// context/continuation pair into tokens, cutting a generation at its stop strings, comparing it with the
// target, and perplexity from summed log-likelihoods. No torch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace slipway::eval {

// Number of Unicode code points of UTF-8 text: Python's len(str) (invalid bytes count one each).
size_t code_point_count(std::string_view text);

// Python's str.isspace() for one code point: what str.strip() and str.rstrip() remove.
bool is_python_space(char32_t c);
// The length of `text` without its trailing whitespace: len(text.rstrip()), in bytes.
size_t end_without_trailing_space(std::string_view text);

// The choices lm-eval would pick from the summed log-likelihoods of each choice's continuation tokens.
// lm_eval/api/task.py (ConfigurableTask.process_results, output_type multiple_choice; the same in
// MultipleChoiceTask) computes
//     completion_len = np.array([float(len(i)) for i in choices])
//     pred = np.argmax(lls);  pred_norm = np.argmax(lls / completion_len)
// i.e. acc_norm divides by the choice's length in characters (Python str length: code points), of the
// choice text without the target delimiter, not by its UTF-8 bytes (that is a separate metric, acc_bytes,
// from byte_length = len(i.encode("utf-8"))) nor by its tokens. np.argmax returns the first maximum.
struct ChoicePick {
    size_t pred = 0;       // argmax of the log-likelihoods: acc = (pred == gold)
    size_t pred_norm = 0;  // argmax of log-likelihood / characters: acc_norm = (pred_norm == gold)
};
ChoicePick pick_choice(const std::vector<double>& loglikelihoods, const std::vector<std::string>& choices);

// A context/continuation pair as token ids, as lm-eval's HFLM._encode_pair makes them
// (lm_eval/models/huggingface.py): trailing whitespace of the context moves to the front of the
// continuation, context+continuation is encoded whole, and the continuation is the part after as many
// tokens as the context alone encodes to. So a token that spans the boundary counts as continuation.
struct EncodedPair {
    std::vector<int32_t> context;
    std::vector<int32_t> continuation;
};
using Encode = std::function<std::vector<int32_t>(std::string_view text)>;
EncodedPair encode_pair(const Encode& encode, std::string_view context, std::string_view continuation);

// Where generation text ends: the first occurrence of any stop string (lm-eval's `until`), or npos.
size_t first_stop(std::string_view text, const std::vector<std::string>& stop);

// Removes leading and trailing whitespace as Python's str.strip() does.
std::string strip_whitespace(std::string_view text);

struct GenerationScore {
    bool exact_match = false;   // the generation equals the target
    bool prefix_match = false;  // the generation starts with the target (it copied it, and may go on)
};
// `generated` is already cut at its stop string; with `strip` both sides lose surrounding whitespace first.
GenerationScore score_generation(std::string_view generated, std::string_view target, bool strip);

// Token-level perplexity of a text set: exp(total NLL / predicted tokens).
struct PerplexitySums {
    double nll_sum = 0;  // sum of -log p(token | tokens before it), over every predicted token
    int64_t tokens = 0;  // predicted tokens (each text's tokens but its first)
    double mean_nll() const;
    double perplexity() const;
};

}  // namespace slipway::eval
