// language_pipeline.h: the seed-001 chain (tokenizer, adapt-vocab, embeddings training, LEP, calibration
// LoRA, eval) as a pipeline document.
#include "adapt/language_pipeline.h"

namespace slipway::app {
namespace {

// The user's Slurm resources over a preset's.
void apply_cluster(const ClusterResources& c, nlohmann::json& slurm) {
    if (c.nodes > 0) slurm["nodes"] = c.nodes;
    if (c.gpus_per_node) slurm["gpus_per_node"] = *c.gpus_per_node;
    if (!c.time.empty()) slurm["time"] = c.time;
    if (!c.container_image.empty()) {
        // The preset's mounts and folder are its cluster's paths.
        slurm["container_image"] = c.container_image;
        slurm["container_mounts"] = c.container_mounts;
        slurm.erase("container_workdir");
    }
}

// A preset run config made a step of the chain: its model and tokenizer from an earlier step, its data,
// its output under the pipeline's folder; on This computer a CPU run in fp32 on one rank, on a cluster the
// user's resources over the preset's.
nlohmann::json training_step(nlohmann::json config, const std::string& name, const std::string& model,
                             const std::string& data, int64_t steps, double learning_rate,
                             const LanguageAdaptation& a) {
    config.erase("comment");
    config["name"] = a.name + "-" + name;
    config["model"]["path"] = model;
    config["tokenizer"] = {{"path", model + "/tokenizer.json"}};
    config["data"]["train_file"] = data;
    // The presets name a held-out file of the seed's cluster; here the corpus gives its own 2% instead.
    config["data"].erase("validation_file");
    config["data"]["validation_split_percentage"] = 2;
    if (a.block_size > 0) config["data"]["block_size"] = a.block_size;
    nlohmann::json& t = config["training"];
    t["output_dir"] = "${run}/" + name;
    if (steps > 0) {
        t["max_steps"] = steps;
        // The presets warm up for 100 steps: a short run warms up for a tenth of it instead.
        if (t.value("warmup_steps", int64_t{0}) >= steps) t["warmup_steps"] = steps / 10;
    }
    if (learning_rate > 0) t["learning_rate"] = learning_rate;
    // On CPUs (This computer, or a cluster's nodes without GPUs) in fp32: bf16 is a GPU format.
    if (a.on_this_computer || (a.cluster.gpus_per_node && *a.cluster.gpus_per_node == 0)) {
        config["model"]["dtype"] = "float32";
        t["bf16"] = false;
    }
    if (a.on_this_computer) {
        config["slurm"] = {{"nodes", 1}, {"gpus_per_node", 0}, {"ntasks_per_node", 1}};
    } else {
        apply_cluster(a.cluster, config["slurm"]);
    }
    return {{"name", name}, {"kind", "train"}, {"config", config}};
}

}  // namespace

Result<nlohmann::json> language_pipeline(const LanguageAdaptation& a, const nlohmann::json& embeddings_preset,
                                         const nlohmann::json& lora_preset) {
    if (a.base_model.empty()) return Status::Error("choose the base model");
    if (a.instruct_model.empty()) return Status::Error("choose the instruct model");
    if (a.corpus.empty()) return Status::Error("choose the corpus");
    nlohmann::json steps = nlohmann::json::array();
    nlohmann::json tokenizer = {{"name", "tokenizer"},
                                {"kind", "tokenizer"},
                                {"corpus", "${vars.corpus}"},
                                {"out", "${run}/tokenizer.json"}};
    if (a.tokenizer == "extend") {
        tokenizer["mode"] = "extend";
        tokenizer["base"] = "${vars.base}/tokenizer.json";
        tokenizer["add"] = a.added_tokens;
    } else {
        tokenizer["mode"] = "train";
        tokenizer["type"] = a.tokenizer;
        tokenizer["vocab_size"] = a.vocab_size;
    }
    steps.push_back(tokenizer);
    steps.push_back({{"name", "adapt"},
                     {"kind", "adapt-vocab"},
                     {"model", "${vars.base}"},
                     {"old_tokenizer", "${vars.base}/tokenizer.json"},
                     {"new_tokenizer", "${steps.tokenizer.out}"},
                     {"out", "${run}/adapted"}});
    steps.push_back(training_step(embeddings_preset, "embeddings", "${steps.adapt.out}", "${vars.corpus}",
                                  a.embedding_steps, a.embedding_learning_rate, a));
    steps.push_back({{"name", "lep"},
                     {"kind", "lep"},
                     {"base", "${vars.base}"},
                     {"instruct", "${vars.instruct}"},
                     {"adapted", "${steps.embeddings.out}"},
                     {"method", a.lep_method},
                     {"out", "${run}/lep"}});
    if (a.calibrate) {
        const std::string data = a.calibration_data.empty() ? "${vars.corpus}" : a.calibration_data;
        steps.push_back(
            training_step(lora_preset, "calibrate", "${steps.lep.out}", data, a.calibration_steps, 0, a));
    }
    if (!a.eval_tasks.empty()) {
        nlohmann::json eval = {{"name", "eval"},
                               {"kind", "eval"},
                               {"model", "${steps.lep.out}"},
                               {"tasks", a.eval_tasks},
                               {"out", "${run}/eval.json"}};
        if (a.calibrate) eval["adapter"] = "${steps.calibrate.out}";
        steps.push_back(eval);
    }
    return nlohmann::json{
        {"schema", "slipway.pipeline/1"},
        {"name", a.name},
        {"comment",
         "Made by the app's \"Adapt a model to a language\" page (seed 001: tokenizer, adapt-vocab, "
         "embeddings training, LEP onto the instruct model, calibration, eval)."},
        {"vars", {{"base", a.base_model}, {"instruct", a.instruct_model}, {"corpus", a.corpus}}},
        {"steps", steps}};
}

}  // namespace slipway::app
