// Checkpoints of checkpoint.h: safetensors for tensors (weights, AdamW moments, RNG), state.json for the
// loop position, DONE last with each file's size; every write fsynced, a temporary folder + rename, so a
// crash or full disk never leaves a complete-looking checkpoint, and a torn one is recognised on resume.
#include <torch/torch.h>

#include "train/checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

#include "contract/run_config.h"
#include "data/hash.h"
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
        const int64_t step = checkpoint_step(entry.path().string());
        if (step >= 0 && fs::exists(entry.path() / "DONE", ec)) out.emplace_back(step, entry.path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

namespace {

std::string shard_file_name(int64_t rank, int64_t world_size) {
    return "shard-" + std::to_string(rank) + "-of-" + std::to_string(world_size) + ".safetensors";
}

std::string failure_message(const std::string& output_dir, int64_t step, const std::string& why) {
    const auto previous = complete_checkpoints(output_dir);
    for (auto it = previous.rbegin(); it != previous.rend();
         ++it) {  // newest first; a torn one is no comfort
        if (verify_checkpoint(it->second.string()).ok()) {
            return "checkpoint at step " + std::to_string(step) + " not written: " + why +
                   "; the previous checkpoint " + it->second.string() + " is intact";
        }
    }
    return "checkpoint at step " + std::to_string(step) + " not written: " + why +
           (previous.empty() ? "; no earlier checkpoint exists" : "; no earlier checkpoint is intact");
}

std::vector<torch::Tensor> parameters_named(model::LlamaForCausalLM& model,
                                            const std::vector<std::string>& names) {
    std::map<std::string, torch::Tensor> params;
    for (auto& item : model->named_parameters())
        params[item.key()] = item.value();
    std::vector<torch::Tensor> values;
    for (const std::string& name : names)
        values.push_back(params.at(name));
    return values;
}

// The GPU this rank trains on (where its trainable tensors live); empty on CPU. Every rank's generator of its
// own GPU draws the same numbers (one seed, the same calls), so rank 0's state fits every rank on resume.
std::optional<int64_t> training_gpu(const std::vector<torch::Tensor>& values) {
    if (values.empty() || !values.front().is_cuda()) return std::nullopt;
    return values.front().device().index();
}

// The trainable tensors (fp32), their AdamW moments and this process's RNG states (CPU, and its GPU's).
Status write_trainable_state(const std::string& path, const std::vector<std::string>& names,
                             const std::vector<torch::Tensor>& values, FlatAdamW& optimizer, FileSystem& fs) {
    std::map<std::string, torch::Tensor> tensors;
    for (size_t i = 0; i < names.size(); ++i) {
        tensors["param." + names[i]] = values[i].detach().to(torch::kFloat32);
        tensors["exp_avg." + names[i]] = optimizer.exp_avg(names[i]);
        tensors["exp_avg_sq." + names[i]] = optimizer.exp_avg_sq(names[i]);
    }
    tensors["rng.cpu"] = model::cpu_rng_state();
    if (const std::optional<int64_t> gpu = training_gpu(values))
        tensors["rng.cuda"] = model::cuda_rng_state(*gpu);  // dropout on the GPU draws from it
    return model::write_tensors(path, tensors, fs);
}

Status read_trainable_state(const std::string& path, const std::vector<std::string>& names,
                            const std::vector<torch::Tensor>& values, FlatAdamW& optimizer) {
    Result<io::Checkpoint> file = io::Checkpoint::open_file(path);
    if (!file.ok()) return file.status();
    const auto& t = file->tensors();
    auto tensor = [&](const std::string& key) -> Result<torch::Tensor> {
        const auto it = t.find(key);
        if (it == t.end()) return Status::Error(path + ": \"" + key + "\" is missing");
        Result<torch::Tensor> view = model::tensor_of(it->second);
        if (!view.ok()) return Status::Error(path + ": \"" + key + "\": " + view.error());
        return *view;  // copied below, while the file is still mapped
    };
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < names.size(); ++i) {
        const std::string& name = names[i];
        Result<torch::Tensor> value = tensor("param." + name);
        if (!value.ok()) return value.status();
        if (value->sizes() != values[i].sizes())
            return Status::Error(path + ": \"" + name + "\" has another shape than this run's");
        torch::Tensor target = values[i];
        target.detach().copy_(*value);
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
    // Checkpoints written on a CPU (or before CUDA states were saved) have none: the GPU keeps its seed.
    if (const std::optional<int64_t> gpu = training_gpu(values); gpu && t.count("rng.cuda")) {
        Result<torch::Tensor> cuda_rng = tensor("rng.cuda");
        if (!cuda_rng.ok()) return cuda_rng.status();
        model::set_cuda_rng_state(*gpu, cuda_rng->clone());
    }
    return Status::Ok();
}

}  // namespace

std::string checkpoint_tmp_dir(const std::string& output_dir, int64_t step) {
    return (fs::path(output_dir) / (checkpoint_name(step) + ".tmp")).string();
}

Status discard_checkpoint(const std::string& output_dir, const std::string& tmp_dir, int64_t step,
                          const std::string& why, FileSystem& fs) {
    (void)fs.remove_all(tmp_dir);  // best effort: the save already failed for `why`
    return Status::Error(failure_message(output_dir, step, why));
}

Result<std::string> begin_checkpoint(const std::string& output_dir, int64_t step, FileSystem& fs) {
    const std::string tmp_dir = checkpoint_tmp_dir(output_dir, step);
    Status created = fs.remove_all(tmp_dir);
    if (created.ok()) created = fs.create_dirs(tmp_dir);
    if (!created.ok()) return Status::Error(failure_message(output_dir, step, created.message()));
    return tmp_dir;
}

Status write_rank_shards(const std::string& tmp_dir, int64_t rank, int64_t world_size,
                         const std::vector<std::string>& names, const std::vector<torch::Tensor>& shards,
                         FlatAdamW& optimizer, FileSystem& fs) {
    return write_trainable_state(tmp_dir + "/" + shard_file_name(rank, world_size), names, shards, optimizer,
                                 fs);
}

namespace {

// The shard files a sharded checkpoint of `world_size` ranks must hold, one per rank.
std::vector<std::string> expected_shards(int64_t world_size) {
    std::vector<std::string> names;
    for (int64_t rank = 0; rank < world_size; ++rank)
        names.push_back(shard_file_name(rank, world_size));
    return names;
}

// DONE's content: each file of the finished folder with its size, and state.json's XXH64 (its bytes are at
// hand; hashing the tensor files would mean reading them back). A sharded save must list every rank's
// shard: on NFS or Lustre rank 0's listing can lag behind another node's write, and a DONE without that
// shard would look intact.
Result<std::string> done_record(const std::string& dir, int64_t step, const std::string& state_text,
                                int64_t sharded_world_size) {
    std::map<std::string, nlohmann::ordered_json> files;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (!it->is_regular_file(ec)) continue;
        const uint64_t bytes = it->file_size(ec);
        if (ec) break;
        files[it->path().filename().string()] = {{"bytes", bytes}};
    }
    if (ec) return Status::Error(dir + ": cannot list the checkpoint's files: " + ec.message());
    for (const std::string& shard : expected_shards(sharded_world_size)) {
        if (!files.count(shard))
            return Status::Error(dir + "/" + shard +
                                 ": not visible to rank 0 after every rank wrote its shards");
    }
    files["state.json"]["xxh64"] = data::hex64(data::xxh64(state_text));
    nlohmann::ordered_json record = {{"step", step}, {"files", nlohmann::ordered_json::object()}};
    for (const auto& [name, entry] : files)
        record["files"][name] = entry;
    return record.dump(2) + "\n";
}

}  // namespace

Result<std::string> finish_checkpoint(const std::string& output_dir, const std::string& tmp,
                                      FlatAdamW& optimizer, const std::vector<std::string>& trainable_names,
                                      const LoopPosition& position, bool sharded, FileSystem& fs) {
    const std::string final_dir = checkpoint_dir(output_dir, position.step);
    auto fail = [&](const std::string& why) -> Result<std::string> {
        return discard_checkpoint(output_dir, tmp, position.step, why, fs);
    };
    nlohmann::ordered_json state = {{"magic", kCheckpointMagic},
                                    {"version", kCheckpointVersion},
                                    {"step", position.step},
                                    {"epoch", position.epoch},
                                    {"cursor", position.cursor},
                                    {"world_size", position.world_size},
                                    {"trainable", trainable_names},
                                    {"adam_steps", optimizer.steps()},
                                    {"sharding", sharded ? "full" : "none"}};
    if (!position.gradient_buckets.empty()) state["gradient_buckets"] = position.gradient_buckets;
    const std::string state_text = state.dump(2) + "\n";
    if (Status s = write_file_atomically(tmp + "/state.json", state_text, fs); !s.ok())
        return fail(s.message());
    Result<std::string> record =
        done_record(tmp, position.step, state_text, sharded ? position.world_size : 0);
    if (!record.ok()) return fail(record.error());
    // Every file is fsynced by its writer (the other ranks' shards too); this makes their names durable.
    if (Status s = fs.sync_dir(tmp); !s.ok()) return fail(s.message());
    if (Status s = fs.remove_all(final_dir); !s.ok()) return fail(s.message());
    if (Status s = fs.rename(tmp, final_dir); !s.ok()) return fail(s.message());
    Status durable = fs.sync_dir(output_dir);
    // Last, and only once the folder is durable under its name: DONE marks the checkpoint complete.
    if (durable.ok()) durable = write_file_atomically(final_dir + "/DONE", *record, fs);
    if (!durable.ok()) {
        (void)fs.remove_all(final_dir);
        return fail(durable.message());
    }
    return final_dir;
}

Result<std::string> save_checkpoint(const std::string& output_dir, model::LlamaForCausalLM& model,
                                    FlatAdamW& optimizer, const std::vector<std::string>& trainable_names,
                                    const LoopPosition& position, FileSystem& fs) {
    Result<std::string> tmp = begin_checkpoint(output_dir, position.step, fs);
    if (!tmp.ok()) return tmp.status();
    const std::vector<torch::Tensor> values = parameters_named(model, trainable_names);
    const Status written =
        write_trainable_state(*tmp + "/state.safetensors", trainable_names, values, optimizer, fs);
    if (!written.ok()) return discard_checkpoint(output_dir, *tmp, position.step, written.message(), fs);
    return finish_checkpoint(output_dir, *tmp, optimizer, trainable_names, position, /*sharded=*/false, fs);
}

std::string checkpoint_dir(const std::string& output_dir, int64_t step) {
    return (fs::path(output_dir) / checkpoint_name(step)).string();
}

int64_t checkpoint_step(const std::string& dir) {
    const std::string name = fs::path(dir).filename().string();
    if (name.rfind("checkpoint-", 0) != 0) return -1;
    try {
        size_t used = 0;
        const int64_t step = std::stoll(name.substr(11), &used);
        return used == name.size() - 11 ? step : -1;
    } catch (const std::exception&) {
        return -1;
    }
}

Status verify_checkpoint(const std::string& dir) {
    std::error_code ec;
    if (!fs::exists(fs::path(dir) / "DONE", ec))
        return Status::Error(dir + " has no DONE marker: the save did not finish");
    Result<std::string> done = read_file(dir + "/DONE");
    if (!done.ok()) return done.status();
    const std::string torn = ": the checkpoint is torn";
    if (done->rfind("step ", 0) != 0) {  // "step N": the first format, which recorded no files
        const nlohmann::json record = nlohmann::json::parse(*done, nullptr, /*allow_exceptions=*/false);
        if (!record.is_object() || !record.contains("files") || !record["files"].is_object())
            return Status::Error(dir + "/DONE: not a record of the checkpoint's files" + torn);
        for (const auto& [name, entry] : record["files"].items()) {
            const std::string path = dir + "/" + name;
            const uintmax_t bytes = fs::file_size(path, ec);
            if (ec) return Status::Error(path + ": missing, though DONE records it" + torn);
            if (!entry.is_object() || !entry.contains("bytes") || !entry["bytes"].is_number_unsigned() ||
                entry["bytes"].get<uint64_t>() != bytes) {
                return Status::Error(
                    path + ": " + std::to_string(bytes) + " bytes, DONE records " +
                    (entry.is_object() && entry.contains("bytes") ? entry["bytes"].dump() : "?") + torn);
            }
            if (entry.contains("xxh64")) {
                Result<std::string> content = read_file(path);
                if (!content.ok()) return content.status();
                if (!entry["xxh64"].is_string() ||
                    data::hex64(data::xxh64(*content)) != entry["xxh64"].get<std::string>())
                    return Status::Error(path + ": its content differs from the XXH64 DONE records" + torn);
            }
        }
    }
    Result<nlohmann::json> state = read_json_file(dir + "/state.json");
    if (!state.ok()) return Status::Error(state.error() + torn);
    // Every rank's shard, whatever DONE lists (the first format listed nothing).
    const auto sharding = state->find("sharding");
    const auto world = state->find("world_size");
    if (sharding != state->end() && *sharding == "full" && world != state->end() &&
        world->is_number_unsigned()) {
        constexpr uint64_t kMostRanks = 1 << 20;  // a hostile state.json must not make this loop for ever
        if (world->get<uint64_t>() > kMostRanks)
            return Status::Error(dir + "/state.json: world_size " + world->dump() +
                                 " is not a number of ranks" + torn);
        for (const std::string& shard : expected_shards(world->get<int64_t>())) {
            if (!fs::exists(fs::path(dir) / shard, ec))
                return Status::Error(dir + "/" + shard + ": missing" + torn);
        }
    }
    return Status::Ok();
}

Result<std::string> resolve_checkpoint(const std::string& request, const std::string& output_dir,
                                       std::ostream* notes) {
    const std::string field = "/training/resume_from_checkpoint: ";
    if (request == "latest") {
        const auto all = complete_checkpoints(output_dir);
        std::vector<std::string> torn;  // newer than the one taken
        for (auto it = all.rbegin(); it != all.rend(); ++it) {
            const Status intact = verify_checkpoint(it->second.string());
            if (!intact.ok()) {
                torn.push_back(intact.message());
                continue;
            }
            for (const std::string& why : torn) {
                if (notes)
                    *notes << "warning: skipping a torn checkpoint (" << why
                           << "); resuming from the previous complete one, " << it->second.string() << "\n";
            }
            return it->second.string();
        }
        std::string message = field + "no complete checkpoint under " + output_dir;
        for (const std::string& why : torn)
            message += "\n  " + why;
        return Status::Error(message);
    }
    std::error_code ec;
    if (!fs::is_directory(request, ec)) return Status::Error(field + request + " is not a folder");
    if (Status intact = verify_checkpoint(request); !intact.ok())
        return Status::Error(field + intact.message());
    return request;
}

namespace {

// A count in state.json: a JSON integer from `minimum` up (nlohmann's get would turn -1 into 2^64 - 1 for an
// unsigned field and convert 1e300 with undefined behaviour).
Result<int64_t> state_count(const nlohmann::json& state, const char* key, int64_t minimum,
                            const std::string& file) {
    const nlohmann::json* value = state.contains(key) ? &state[key] : nullptr;
    if (!value || !value->is_number_integer() ||
        (value->is_number_unsigned() &&
         value->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) ||
        value->get<int64_t>() < minimum) {
        return Status::Error(file + ": " + key + " must be an integer of at least " +
                             std::to_string(minimum) + ", got " +
                             (value ? value->dump() : std::string("nothing")));
    }
    return value->get<int64_t>();
}

// state.json's gradient_buckets (optional): every trainable parameter's index in exactly one bucket.
Result<std::vector<std::vector<size_t>>> read_gradient_buckets(const nlohmann::json& state, size_t parameters,
                                                               const std::string& file) {
    std::vector<std::vector<size_t>> buckets;
    const auto found = state.find("gradient_buckets");
    if (found == state.end()) return buckets;
    auto refuse = [&](const std::string& why) { return Status::Error(file + ": gradient_buckets " + why); };
    if (!found->is_array()) return refuse("must be a list of lists of parameter indices");
    std::vector<bool> seen(parameters, false);
    for (const nlohmann::json& bucket : *found) {
        if (!bucket.is_array() || bucket.empty()) return refuse("holds an empty bucket or a non-list");
        std::vector<size_t>& indices = buckets.emplace_back();
        for (const nlohmann::json& index : bucket) {
            if (!index.is_number_unsigned() || index.get<uint64_t>() >= parameters ||
                seen[index.get<size_t>()])
                return refuse("names " + index.dump() + ": not a trainable parameter's index (there are " +
                              std::to_string(parameters) + "), or one another bucket names too");
            seen[index.get<size_t>()] = true;
            indices.push_back(index.get<size_t>());
        }
    }
    if (std::find(seen.begin(), seen.end(), false) != seen.end())
        return refuse("leaves a trainable parameter out");
    return buckets;
}

// state.json: the loop position, after checking the magic, the trainable names and the sharding.
Result<LoopPosition> read_checkpoint_state(const std::string& dir,
                                           const std::vector<std::string>& trainable_names, bool sharded,
                                           FlatAdamW& optimizer) {
    Result<nlohmann::json> state = read_json_file(dir + "/state.json");
    if (!state.ok()) return state.status();
    LoopPosition position;
    try {
        if (state->value("magic", std::string()) != kCheckpointMagic ||
            state->value("version", 0) != kCheckpointVersion) {
            return Status::Error(dir + "/state.json: not a slipway checkpoint of version " +
                                 std::to_string(kCheckpointVersion));
        }
        const std::string saved_sharding = state->value("sharding", std::string("none"));
        if (saved_sharding != (sharded ? "full" : "none")) {
            return Status::Error(dir + ": saved with /distributed/sharding \"" + saved_sharding +
                                 "\", this run has \"" + (sharded ? "full" : "none") + "\"");
        }
        if ((*state)["trainable"].get<std::vector<std::string>>() != trainable_names) {
            return Status::Error(
                dir +
                ": its trainable parameters differ from this run's (another adapter method or targets?)");
        }
        const std::string file = dir + "/state.json";
        Result<int64_t> step = state_count(*state, "step", 0, file),
                        epoch = state_count(*state, "epoch", 0, file),
                        cursor = state_count(*state, "cursor", 0, file),
                        world_size = state_count(*state, "world_size", 1, file),
                        adam_steps = state_count(*state, "adam_steps", 0, file);
        for (const Result<int64_t>* count : {&step, &epoch, &cursor, &world_size, &adam_steps})
            if (!count->ok()) return count->status();
        position.step = *step;
        position.epoch = static_cast<uint64_t>(*epoch);
        position.cursor = static_cast<uint64_t>(*cursor);
        position.world_size = *world_size;
        Result<std::vector<std::vector<size_t>>> buckets =
            read_gradient_buckets(*state, trainable_names.size(), file);
        if (!buckets.ok()) return buckets.status();
        position.gradient_buckets = std::move(*buckets);
        optimizer.set_steps(*adam_steps);
    } catch (const nlohmann::json::exception& e) {
        return Status::Error(dir + "/state.json: " + e.what());
    }
    return position;
}

}  // namespace

Result<LoopPosition> load_checkpoint(const std::string& dir, model::LlamaForCausalLM& model,
                                     FlatAdamW& optimizer, const std::vector<std::string>& trainable_names) {
    Result<LoopPosition> position = read_checkpoint_state(dir, trainable_names, /*sharded=*/false, optimizer);
    if (!position.ok()) return position.status();
    const std::vector<torch::Tensor> values = parameters_named(model, trainable_names);
    if (Status s = read_trainable_state(dir + "/state.safetensors", trainable_names, values, optimizer);
        !s.ok())
        return s;
    return position;
}

Result<LoopPosition> load_sharded_checkpoint(const std::string& dir, int64_t rank, int64_t world_size,
                                             const std::vector<std::string>& names,
                                             const std::vector<torch::Tensor>& shards, FlatAdamW& optimizer) {
    Result<LoopPosition> position = read_checkpoint_state(dir, names, /*sharded=*/true, optimizer);
    if (!position.ok()) return position.status();
    if (position->world_size != world_size) {
        return Status::Error(dir + ": saved with world size " + std::to_string(position->world_size) +
                             ", this run has " + std::to_string(world_size) +
                             " (a sharded checkpoint resumes on the same number of ranks)");
    }
    if (Status s =
            read_trainable_state(dir + "/" + shard_file_name(rank, world_size), names, shards, optimizer);
        !s.ok())
        return s;
    return position;
}

std::vector<std::string> prune_checkpoints(const std::string& output_dir, int64_t keep, FileSystem& fs) {
    const auto all = complete_checkpoints(output_dir);  // oldest first
    // The oldest of the `keep` newest intact checkpoints; everything before it goes.
    size_t oldest_kept = all.size();
    int64_t intact = 0;
    for (size_t i = all.size(); i-- > 0;) {
        if (verify_checkpoint(all[i].second.string()).ok() && ++intact >= std::max<int64_t>(keep, 1)) {
            oldest_kept = i;
            break;
        }
    }
    if (oldest_kept == all.size()) return {};  // fewer intact ones than `keep`: nothing to spare
    std::vector<std::string> removed;
    for (size_t i = 0; i < oldest_kept; ++i) {
        // DONE goes first: a crash halfway through the removal leaves an incomplete folder, never a
        // complete-looking one with files missing.
        const std::string dir = all[i].second.string();
        if (fs.remove_all(dir + "/DONE").ok() && fs.sync_dir(dir).ok() && fs.remove_all(dir).ok())
            removed.push_back(dir);
    }
    return removed;
}

}  // namespace slipway::train
