// Mean-of-sub-tokens initialization and LEP's projections (embeddings.h).
#include <torch/torch.h>

#include "adapt/embeddings.h"

#include <algorithm>

namespace slipway::adapt {
namespace {

// One id list per new row: the same token, the split, or nothing (the all-rows mean).
Status check_ids(const VocabMap& map, int64_t old_rows, const char* what) {
    for (size_t id = 0; id < map.rows.size(); ++id) {
        for (int32_t old_id : map.rows[id].old_ids) {
            if (old_id < 0 || old_id >= old_rows)
                return Status::Error(std::string(what) + ": new token " + std::to_string(id) +
                                     " takes old row " + std::to_string(old_id) + ", but the matrix has " +
                                     std::to_string(old_rows) +
                                     " rows (the old tokenizer does not match the model)");
        }
    }
    return Status::Ok();
}

// The rows of `map` whose ids all lie below `rows`, as (new id) indices and the converted matrix restricted
// to them: C(E)[kept] for E with at least `rows` rows.
torch::Tensor converted_subset(const torch::Tensor& e64, const VocabMap& map,
                               const std::vector<int64_t>& kept) {
    // e64: (V_old, H) float64 -> (K, H)
    std::vector<int64_t> targets, sources;
    std::vector<double> weights;
    for (size_t k = 0; k < kept.size(); ++k) {
        const TokenSource& row = map.rows[static_cast<size_t>(kept[k])];
        for (int32_t old_id : row.old_ids) {
            targets.push_back(static_cast<int64_t>(k));
            sources.push_back(old_id);
            weights.push_back(1.0 / static_cast<double>(row.old_ids.size()));
        }
    }
    torch::Tensor out = torch::zeros({static_cast<int64_t>(kept.size()), e64.size(1)}, e64.options());
    const torch::Tensor w = torch::tensor(weights, torch::kFloat64).unsqueeze(1);  // (N, 1)
    out.index_add_(0, torch::tensor(targets, torch::kInt64),
                   e64.index_select(0, torch::tensor(sources, torch::kInt64)) * w);
    return out;
}

// Least squares min ||A P - B||: A, B (N, H) float64 -> P (H, H).
Result<torch::Tensor> least_squares(const torch::Tensor& a, const torch::Tensor& b, const char* method) {
    if (a.size(0) < a.size(1))
        return Result<torch::Tensor>::Error(std::string("lep ") + method + ": " + std::to_string(a.size(0)) +
                                            " rows for a " + std::to_string(a.size(1)) +
                                            "-wide projection: too few tokens to fit it");
    // gelsd (SVD) gives the minimum-norm solution even where A is rank-deficient.
    return std::get<0>(torch::linalg_lstsq(a, b, c10::nullopt, "gelsd"));
}

}  // namespace

Result<torch::Tensor> convert_rows(const torch::Tensor& old, const VocabMap& map) {
    // old: (V_old, H)
    if (Status s = check_ids(map, old.size(0), "adapt-vocab"); !s.ok()) return s;
    const torch::Tensor e64 = old.to(torch::kFloat64);
    std::vector<int64_t> all(map.rows.size());
    for (size_t i = 0; i < all.size(); ++i)
        all[i] = static_cast<int64_t>(i);
    torch::Tensor out = converted_subset(e64, map, all);  // (V_new, H); kAllMean rows still zero
    const torch::Tensor mean = e64.mean(0);               // (H)
    for (size_t id = 0; id < map.rows.size(); ++id)
        if (map.rows[id].source == RowSource::kAllMean) out[static_cast<int64_t>(id)] = mean;
    return out.to(old.scalar_type());
}

Result<LepMethod> lep_method_named(const std::string& name) {
    if (name == "swap") return LepMethod::kSwap;
    if (name == "overlap") return LepMethod::kOverlap;
    if (name == "conversion") return LepMethod::kConversion;
    return Result<LepMethod>::Error("--method " + name + ": not a LEP method (swap | overlap | conversion)");
}

const char* lep_method_name(LepMethod method) {
    switch (method) {
        case LepMethod::kSwap:
            return "swap";
        case LepMethod::kOverlap:
            return "overlap";
        case LepMethod::kConversion:
            return "conversion";
    }
    return "?";
}

Result<torch::Tensor> lep_projection(LepMethod method, const torch::Tensor& base,
                                     const torch::Tensor& instruct, const VocabMap& map) {
    // base: (V_B, H), instruct: (V_I, H); both rows indexed by the instruct tokenizer's ids.
    const int64_t hidden = instruct.size(1);
    if (method == LepMethod::kSwap) return torch::eye(hidden, torch::kFloat64);
    const int64_t rows = std::min(base.size(0), instruct.size(0));
    const torch::Tensor b64 = base.to(torch::kFloat64), i64 = instruct.to(torch::kFloat64);
    if (method == LepMethod::kOverlap) {
        // S: old ids of the tokens both vocabularies hold (paper: the overlapping tokens).
        std::vector<int64_t> ids;
        for (const auto& [old_id, new_id] : shared_tokens(map))
            if (old_id < rows) ids.push_back(old_id);
        const torch::Tensor s = torch::tensor(ids, torch::kInt64);
        return least_squares(b64.index_select(0, s), i64.index_select(0, s), "overlap");  // (|S|, H) each
    }
    // Conversion: both matrices converted to the new vocabulary, every new row whose sources both have.
    std::vector<int64_t> kept;
    for (size_t id = 0; id < map.rows.size(); ++id) {
        const TokenSource& row = map.rows[id];
        if (row.old_ids.empty()) continue;
        if (std::all_of(row.old_ids.begin(), row.old_ids.end(),
                        [&](int32_t j) { return j >= 0 && j < rows; }))
            kept.push_back(static_cast<int64_t>(id));
    }
    return least_squares(converted_subset(b64, map, kept), converted_subset(i64, map, kept),
                         "conversion");  // (K, H) each
}

Result<torch::Tensor> propagate(const torch::Tensor& adapted, const torch::Tensor& projection,
                                const torch::Tensor& instruct,
                                const std::vector<std::pair<int32_t, int32_t>>& copy_from_instruct) {
    // adapted: (V_new, H) @ projection: (H, H) -> (V_new, H)
    if (adapted.size(1) != projection.size(0))
        return Result<torch::Tensor>::Error(
            "lep: the adapted model's hidden size " + std::to_string(adapted.size(1)) +
            " is not the instruct model's " + std::to_string(projection.size(0)));
    torch::Tensor out = torch::matmul(adapted.to(torch::kFloat64), projection);
    const torch::Tensor i64 = instruct.to(torch::kFloat64);
    for (const auto& [new_id, instruct_id] : copy_from_instruct) {
        if (new_id < out.size(0) && instruct_id < i64.size(0)) out[new_id] = i64[instruct_id];
    }
    return out.to(instruct.scalar_type());
}

}  // namespace slipway::adapt
