// Embedding matrices for a new vocabulary: the mean-of-sub-tokens initialization of adapt-vocab, and
// Learned Embedding Propagation (LEP; Tikhomirov & Chernyshev, "Facilitating Large Language Model Russian
// Adaptation with Learned Embedding Propagation", arXiv 2412.21140), which carries embeddings learned on
// a base model with a new vocabulary over to the instruct-tuned model of the same base.
//
// LEP's propagation methods (the paper's section on Learned Embedding Propagation, compared in its
// Table 3 as "Swap", "Overlap" and "Conversion"; the formulas below follow the authors' own code, ruadapt's
// ruadapt/ushanka/src/ushanka_proj_utils.py, which calls them "straight", "union" and "conversion": the
// copies of the paper at hand gave its abstract, summary and tables, not the section's equations).
// E_B: the base model's matrix (old vocabulary, V_old x H), E_I: the instruct model's (V_old x H), E_A:
// the adapted base model's (new vocabulary, V_new x H). Every method finds a projection
// P (H x H) that models what instruction tuning did to the embedding space, and writes
//     E_out = E_A P                                                  (V_new x H)
//   swap:       P = I: the adapted embeddings as they are.
//   overlap:    P = argmin_P || E_B[S] P - E_I[S] ||_F, S the tokens both vocabularies hold (least squares
//               over the overlap's rows, solved in float64).
//   conversion: P = argmin_P || C(E_B) P - C(E_I) ||_F, C the vocabulary conversion of adapt-vocab
//               (vocab_map.h: each new token's row is its own old row or the mean of its old split), so
//               every token of the new vocabulary takes part.
// Each of embed_tokens and lm_head gets its own P (tied models: embed_tokens only). Then, as the authors'
// code does, each added token of the new tokenizer that the instruct tokenizer also has takes the
// instruct model's row, so the chat template's special tokens keep their instruct-tuned meaning, and the
// instruct tokenizer's added tokens that the new one lacks are appended to it (ids after the adapted
// model's rows) with the instruct model's rows (the lep command).
// The paper's optional calibration (a short instruction fine-tune of the result) is a training run, not
// part of this step.
#pragma once

#include <string>
#include <vector>

#include <torch/types.h>

#include "adapt/vocab_map.h"
#include "contract/status.h"

namespace slipway::adapt {

// old: (V_old, H) -> (V_new, H) in old's dtype, computed in float64: row i is old[j] for kSameToken,
// mean(old[split]) for kSubTokenMean, mean(old) for kAllMean. Ids past old's rows are an error.
[[nodiscard]] Result<torch::Tensor> convert_rows(const torch::Tensor& old, const VocabMap& map);

enum class LepMethod { kSwap, kOverlap, kConversion };
[[nodiscard]] Result<LepMethod> lep_method_named(
    const std::string& name);  // "swap" | "overlap" | "conversion"
const char* lep_method_name(LepMethod method);

// The projection P (H, H), float64, of `method` for one matrix. `map` goes from the instruct model's
// vocabulary to the adapted one. Rows whose ids are past the base or instruct matrix (tokens only one of
// them has, such as an instruct model's added chat tokens) are left out of the least-squares systems.
[[nodiscard]] Result<torch::Tensor> lep_projection(LepMethod method, const torch::Tensor& base,
                                                   const torch::Tensor& instruct, const VocabMap& map);

// E_A P, then the rows of `copy_from_instruct` ((new id, instruct id) pairs) from the instruct matrix; in
// the instruct matrix's dtype. adapted: (V_new, H), instruct: (V_I, H).
[[nodiscard]] Result<torch::Tensor> propagate(
    const torch::Tensor& adapted, const torch::Tensor& projection, const torch::Tensor& instruct,
    const std::vector<std::pair<int32_t, int32_t>>& copy_from_instruct);

}  // namespace slipway::adapt
