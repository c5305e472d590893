// Checkpoints of checkpoint.h: safetensors for tensors (weights, AdamW moments, RNG), state.json for the
// loop position, DONE last; temporary folder + rename so a crash or full disk never leaves a
// complete-looking checkpoint.
#include <torch/torch.h>

#include "train/checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "contract/run_config.h"
#include "io/safetensors.h"
#include "model/tensor_io.h"
#include "model/torch_compat.h"

namespace slipway::train {
namespace {

namespace fs = std::filesystem;

std::string checkpoint_name(int64_t step) {
    return "checkpoint-" + std::to_string(step);
}

// Complete checkpoints under `output_dir`, oldest first.
std::vector<std::pair<int64_t, fs::path>> complete_checkpoints(const std::string& output_dir) {
    std::vector<std::pair<int64_t, fs::path>> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(output_dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("checkpoint-", 0) != 0 || !fs::exists(entry.path() / "DONE", ec)) continue;
        try {
            size_t used = 0;
            const int64_t step = std::stoll(name.substr(11), &used);
            if (used == name.size() - 11) out.emplace_back(step, entry.path());
        } catch (const std::exception&) {
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

Result<std::string> save_checkpoint(const std::string& output_dir, model::LlamaForCausalLM& model,
                                    FlatAdamW& optimizer, const std::vector<std::string>& trainable_names,
                                    const LoopPosition& position) {
    const fs::path final_dir = fs::path(output_dir) / checkpoint_name(position.step);
    const fs::path tmp_dir = fs::path(output_dir) / (checkpoint_name(position.step) + ".tmp");
    std::error_code ec;
    fs::remove_all(tmp_dir, ec);
    fs::create_directories(tmp_dir, ec);
    auto fail = [&](const std::string& why) -> Result<std::string> {
        fs::remove_all(tmp_dir, ec);
        const auto previous = complete_checkpoints(output_dir);
        return Status::Error("checkpoint at step " + std::to_string(position.step) + " not written: " + why +
                             (previous.empty() ? std::string("; no earlier checkpoint exists")
                                               : "; the previous checkpoint " +
                                                     previous.back().second.string() + " is intact"));
    };
    if (ec) return fail("cannot create " + tmp_dir.string() + ": " + ec.message());

    std::map<std::string, torch::Tensor> params;
    for (auto& item : model->named_parameters())
        params[item.key()] = item.value();
    std::map<std::string, torch::Tensor> tensors;  // fp32, the RNG state as uint8
    for (const std::string& name : trainable_names) {
        tensors["param." + name] = params.at(name).to(torch::kFloat32);
        tensors["exp_avg." + name] = optimizer.exp_avg(name);
        tensors["exp_avg_sq." + name] = optimizer.exp_avg_sq(name);
    }
    tensors["rng.cpu"] = model::cpu_rng_state();
    const Status written = model::write_tensors((tmp_dir / "state.safetensors").string(), tensors);
    if (!written.ok()) return fail(written.message());
    const nlohmann::ordered_json state = {{"magic", kCheckpointMagic},    {"version", kCheckpointVersion},
                                          {"step", position.step},        {"epoch", position.epoch},
                                          {"cursor", position.cursor},    {"world_size", position.world_size},
                                          {"trainable", trainable_names}, {"adam_steps", optimizer.steps()}};
    {
        std::ofstream out(tmp_dir / "state.json");
        out << state.dump(2) << "\n";
        out.close();
        if (!out) return fail("state.json write failed (disk full?)");
    }
    fs::remove_all(final_dir, ec);
    fs::rename(tmp_dir, final_dir, ec);
    if (ec) return fail("rename to " + final_dir.string() + ": " + ec.message());
    {
        std::ofstream done(final_dir / "DONE");  // last: marks the checkpoint complete
        done << "step " << position.step << "\n";
        done.close();
        if (!done) {
            fs::remove_all(final_dir, ec);
            return fail("DONE marker write failed (disk full?)");
        }
    }
    return final_dir.string();
}

Result<std::string> resolve_checkpoint(const std::string& request, const std::string& output_dir) {
    if (request == "latest") {
        const auto all = complete_checkpoints(output_dir);
        if (all.empty())
            return Status::Error("/training/resume_from_checkpoint: no complete checkpoint under " +
                                 output_dir);
        return all.back().second.string();
    }
    std::error_code ec;
    if (!fs::is_directory(request, ec))
        return Status::Error("/training/resume_from_checkpoint: " + request + " is not a folder");
    if (!fs::exists(fs::path(request) / "DONE", ec)) {
        return Status::Error("/training/resume_from_checkpoint: " + request +
                             " has no DONE marker: the save did not finish");
    }
    return request;
}

Result<LoopPosition> load_checkpoint(const std::string& dir, model::LlamaForCausalLM& model,
                                     FlatAdamW& optimizer, const std::vector<std::string>& trainable_names) {
    Result<nlohmann::json> state = read_json_file(dir + "/state.json");
    if (!state.ok()) return state.status();
    LoopPosition position;
    try {
        if (state->value("magic", std::string()) != kCheckpointMagic ||
            state->value("version", 0) != kCheckpointVersion) {
            return Status::Error(dir + "/state.json: not a slipway checkpoint of version " +
                                 std::to_string(kCheckpointVersion));
        }
        if ((*state)["trainable"].get<std::vector<std::string>>() != trainable_names) {
            return Status::Error(
                dir +
                ": its trainable parameters differ from this run's (another adapter method or targets?)");
        }
        position.step = (*state)["step"].get<int64_t>();
        position.epoch = (*state)["epoch"].get<uint64_t>();
        position.cursor = (*state)["cursor"].get<uint64_t>();
        position.world_size = (*state)["world_size"].get<int64_t>();
    } catch (const nlohmann::json::exception& e) {
        return Status::Error(dir + "/state.json: " + e.what());
    }
    Result<io::Checkpoint> tensors = io::Checkpoint::open_file(dir + "/state.safetensors");
    if (!tensors.ok()) return tensors.status();
    const auto& t = tensors->tensors();
    auto tensor = [&](const std::string& key) -> Result<torch::Tensor> {
        const auto it = t.find(key);
        if (it == t.end()) return Status::Error(dir + "/state.safetensors: \"" + key + "\" is missing");
        Result<torch::Tensor> view = model::tensor_of(it->second);
        if (!view.ok()) return Status::Error(dir + "/state.safetensors: \"" + key + "\": " + view.error());
        return view->clone();  // the mapping goes away with this function
    };
    std::map<std::string, torch::Tensor> params;
    for (auto& item : model->named_parameters())
        params[item.key()] = item.value();
    torch::NoGradGuard no_grad;
    optimizer.set_steps((*state)["adam_steps"].get<int64_t>());
    for (const std::string& name : trainable_names) {
        Result<torch::Tensor> value = tensor("param." + name);
        if (!value.ok()) return value.status();
        torch::Tensor& p = params.at(name);
        if (value->sizes() != p.sizes())
            return Status::Error(dir + ": \"" + name + "\" has another shape than the model's");
        p.copy_(*value);
        Result<torch::Tensor> avg = tensor("exp_avg." + name);
        Result<torch::Tensor> avg_sq = tensor("exp_avg_sq." + name);
        if (!avg.ok()) return avg.status();
        if (!avg_sq.ok()) return avg_sq.status();
        optimizer.exp_avg(name).copy_(*avg);
        optimizer.exp_avg_sq(name).copy_(*avg_sq);
    }
    Result<torch::Tensor> rng = tensor("rng.cpu");
    if (!rng.ok()) return rng.status();
    model::set_cpu_rng_state(*rng);
    return position;
}

std::vector<std::string> prune_checkpoints(const std::string& output_dir, int64_t keep) {
    std::vector<std::string> removed;
    auto all = complete_checkpoints(output_dir);
    std::error_code ec;
    while (static_cast<int64_t>(all.size()) > std::max<int64_t>(keep, 1)) {
        fs::remove_all(all.front().second, ec);
        removed.push_back(all.front().second.string());
        all.erase(all.begin());
    }
    return removed;
}

}  // namespace slipway::train
