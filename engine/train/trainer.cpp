// The training loop of trainer.h: init (data, model, optimizer), then steps of accumulated micro-batches
// with clipping, scheduled lr, periodic logging and evaluation, and the final save. Straight-line on
// purpose: each part is a small component (batches, trainable, schedule, evaluate, outputs).
#include <torch/torch.h>

#include "train/trainer.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "contract/mllog.h"
#include "data/prepare.h"
#include "data/sampler.h"
#include "data/token_cache.h"
#include "model/lora.h"
#include "model/torch_compat.h"
#include "model/weights.h"
#include "train/batches.h"
#include "train/checkpoint.h"
#include "train/evaluate.h"
#include "train/outputs.h"
#include "train/schedule.h"
#include "train/trainable.h"

namespace slipway::train {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string duration_text(double seconds) {
    const auto s = static_cast<int64_t>(seconds + 0.5);
    std::ostringstream out;
    out << s / 3600 << ":" << std::setw(2) << std::setfill('0') << (s / 60) % 60 << ":" << std::setw(2)
        << s % 60;
    return out.str();
}

// HF refuses a non-empty output_dir unless overwrite_output_dir; the token cache living inside is fine.
Status check_output_dir(const TrainingConfig& t, const std::string& cache_dir) {
    std::error_code ec;
    if (!fs::exists(t.output_dir, ec) || t.overwrite_output_dir || !t.resume_from_checkpoint.empty())
        return Status::Ok();
    for (const auto& entry : fs::directory_iterator(t.output_dir, ec)) {
        if (fs::equivalent(entry.path(), cache_dir, ec)) continue;
        return Status::Error("/training/output_dir: " + t.output_dir +
                             " is not empty; set /training/overwrite_output_dir or choose another folder");
    }
    return Status::Ok();
}

Result<model::LlamaForCausalLM> build_model(const RunConfig& config) {
    if (config.model.init == "random") {
        Result<model::LlamaConfig> llama_config =
            model::LlamaConfig::from_file(config.model.path + "/config.json");
        if (!llama_config.ok()) return llama_config.status();
        model::LlamaForCausalLM llama(*llama_config);
        model::init_weights(llama, static_cast<uint64_t>(config.training.seed));
        return llama;
    }
    return model::load_hf_model(config.model.path);
}

}  // namespace

Result<TrainReport> train(const RunConfig& config, const TrainOptions& options, std::ostream& mllog_out,
                          std::ostream& progress) {
    const ConfigProblems problems = validate(config, validation_context_for(config));
    if (has_errors(problems)) return Status::Error("invalid run config:\n" + format_problems(problems));
    const TrainingConfig& t = config.training;
    const std::string cache_dir =
        config.data.cache_dir.empty() ? t.output_dir + "/cache" : config.data.cache_dir;
    const Status output_ok = check_output_dir(t, cache_dir);
    if (!output_ok.ok()) return output_ok;
    std::error_code ec;
    fs::create_directories(t.output_dir, ec);
    if (ec) return Status::Error("/training/output_dir: cannot create " + t.output_dir + ": " + ec.message());
    model::set_torch_threads(options.threads > 0 ? options.threads
                                                 : static_cast<int>(std::thread::hardware_concurrency()));

    MllogWriter log(mllog_out);
    if (t.resume_from_checkpoint.empty())
        std::remove((t.output_dir + "/mllog.txt").c_str());  // a resumed run appends
    const Status tee = log.tee_to_file(t.output_dir + "/mllog.txt");
    if (!tee.ok()) return tee;
    log.interval_start("init_start");

    // Data: prepare (a cache hit when it exists), then map it.
    data::PrepareOptions prepare_options;
    prepare_options.engine_version = options.engine_version;
    Result<data::PrepareReport> prepared = data::prepare_token_cache(config, prepare_options);
    if (!prepared.ok()) return prepared.status();
    progress << (prepared->cache_hit ? "cache hit: " : "prepared: ") << prepared->cache_path << "\n";
    Result<data::TokenCache> cache = data::TokenCache::open(prepared->cache_path);
    if (!cache.ok()) return cache.status();

    // Model and optimizer.
    torch::manual_seed(static_cast<uint64_t>(t.seed));
    Result<model::LlamaForCausalLM> built = build_model(config);
    if (!built.ok()) return built.status();
    model::LlamaForCausalLM llama = std::move(*built);
    if (cache->meta().vocab_size > static_cast<uint64_t>(llama->config.vocab_size)) {
        return Status::Error("the tokenizer has " + std::to_string(cache->meta().vocab_size) +
                             " tokens but the model only " + std::to_string(llama->config.vocab_size));
    }
    if (config.adapter.method == "lora") {
        Result<std::vector<std::string>> adapted = model::apply_lora(llama, config.adapter);
        if (!adapted.ok()) return adapted.status();
        progress << "LoRA on " << adapted->size() << " layers\n";
    }
    llama->model->gradient_checkpointing = t.gradient_checkpointing;
    Result<Trainable> trainable = select_trainable(llama, config.adapter);
    if (!trainable.ok()) return trainable.status();
    std::unique_ptr<FlatAdamW> optimizer = make_adamw(*trainable, t);
    llama->train();

    // Steps (seam for distributed training: world size and rank come from dist/ later).
    const int64_t world_size = 1, rank = 0;
    Result<data::DistributedBlockSampler> sampler = data::DistributedBlockSampler::create(
        cache->num_blocks(data::Split::kTrain), world_size, rank, static_cast<uint64_t>(t.seed));
    if (!sampler.ok()) return sampler.status();
    const int64_t batch = t.per_device_train_batch_size;
    const int64_t micro_batches = static_cast<int64_t>(sampler->num_samples()) / batch;
    if (micro_batches < 1) {
        return Status::Error("the training set has " +
                             std::to_string(cache->num_blocks(data::Split::kTrain)) +
                             " blocks: fewer than one batch of " + std::to_string(batch));
    }
    const int64_t total_steps = total_training_steps(t, micro_batches);
    Result<LrSchedule> schedule = LrSchedule::create(t.lr_scheduler_type, t.learning_rate,
                                                     warmup_steps_for(t, total_steps), total_steps);
    if (!schedule.ok()) return schedule.status();
    const int64_t global_batch = batch * t.gradient_accumulation_steps * world_size;
    const int64_t tokens_per_step = global_batch * static_cast<int64_t>(cache->block_size());
    const bool has_validation = cache->num_blocks(data::Split::kValidation) > 0;

    log.point_in_time("global_batch_size", global_batch);
    log.point_in_time("opt_base_learning_rate", t.learning_rate);
    if (config.adapter.method == "lora") {
        log.point_in_time("lora_rank", config.adapter.r);
        log.point_in_time("lora_alpha", config.adapter.lora_alpha);
    }
    log.point_in_time("gradient_accumulation_steps", t.gradient_accumulation_steps);
    log.point_in_time("opt_gradient_clip_norm", t.max_grad_norm);
    log.point_in_time("opt_adamw_weight_decay", t.weight_decay);
    log.point_in_time("opt_learning_rate_training_steps", total_steps);
    log.point_in_time("opt_learning_rate_warmup_steps", schedule->warmup_steps());
    log.point_in_time("seed", t.seed);
    log.point_in_time("train_samples", static_cast<int64_t>(cache->num_blocks(data::Split::kTrain)));
    log.point_in_time("eval_samples", static_cast<int64_t>(cache->num_blocks(data::Split::kValidation)));
    log.interval_end("init_stop");
    log.interval_start("run_start");
    progress << "training " << total_steps << " steps of " << global_batch << " sequences x "
             << cache->block_size() << " tokens; " << llama->config.parameter_count() << " parameters, "
             << trainable->names.size() << " trainable tensors\n";

    // Resume: weights, optimizer state, RNG and data position.
    LoopPosition start;
    if (!t.resume_from_checkpoint.empty()) {
        Result<std::string> dir = resolve_checkpoint(t.resume_from_checkpoint, t.output_dir);
        if (!dir.ok()) return dir.status();
        Result<LoopPosition> loaded = load_checkpoint(*dir, llama, *optimizer, trainable->names);
        if (!loaded.ok()) return loaded.status();
        if (loaded->world_size != world_size) {
            return Status::Error(*dir + ": saved with world size " + std::to_string(loaded->world_size) +
                                 ", this run has " + std::to_string(world_size) +
                                 " (the data position would not match)");
        }
        start = *loaded;
        progress << "resumed from " << *dir << " at step " << start.step << "\n";
    }

    TrainReport report;
    report.output_dir = t.output_dir;
    uint64_t epoch = start.epoch;
    sampler->set_epoch(epoch);
    std::vector<uint64_t> order = sampler->indices();
    size_t cursor = static_cast<size_t>(start.cursor);
    double window_loss = 0;
    int64_t window_steps = 0;
    bool target_reached = false;
    EvalResult last_eval;
    int64_t last_eval_step = -1;
    const auto run_start = Clock::now();
    auto window_start = run_start;
    auto last_progress = run_start - std::chrono::hours(1);
    auto evaluate_now = [&](int64_t step, int64_t samples) {
        log.interval_start("eval_start", nullptr, {{"samples_count", samples}, {"step_num", step}});
        {
            model::Bf16Autocast autocast(t.bf16);
            last_eval = evaluate(llama, *cache, t.per_device_eval_batch_size);
        }
        last_eval_step = step;
        const double metric = config.eval.metric == "loss" ? last_eval.loss : last_eval.token_accuracy;
        log.interval_end("eval_stop", nullptr, {{"samples_count", samples}, {"step_num", step}});
        log.point_in_time("eval_loss", last_eval.loss, {{"samples_count", samples}, {"step_num", step}});
        log.point_in_time("eval_token_accuracy", last_eval.token_accuracy,
                          {{"samples_count", samples}, {"step_num", step}});
        log.point_in_time("eval_accuracy", metric, {{"samples_count", samples}, {"step_num", step}});
        std::ostringstream line;
        line << "eval at step " << step << ": loss " << std::fixed << std::setprecision(4) << last_eval.loss
             << ", token accuracy " << last_eval.token_accuracy << "\n";
        progress << line.str();
        if (config.eval.target) {
            target_reached = config.eval_higher_is_better() ? metric >= *config.eval.target
                                                            : metric <= *config.eval.target;
        }
    };

    auto checkpoint = [&](int64_t done) -> Status {
        Result<std::string> saved = save_checkpoint(t.output_dir, llama, *optimizer, trainable->names,
                                                    LoopPosition{done, epoch, cursor, world_size});
        if (!saved.ok()) return saved.status();
        log.point_in_time("checkpoint_saved", *saved, {{"step_num", done}});
        if (t.save_total_limit) prune_checkpoints(t.output_dir, *t.save_total_limit);
        return Status::Ok();
    };

    for (int64_t step = start.step; step < total_steps; ++step) {
        const double lr = schedule->lr(step);
        double step_loss = 0;
        for (int64_t micro = 0; micro < t.gradient_accumulation_steps; ++micro) {
            if (cursor + static_cast<size_t>(batch) > order.size()) {  // next epoch
                sampler->set_epoch(++epoch);
                order = sampler->indices();
                cursor = 0;
            }
            const torch::Tensor ids =
                make_batch(*cache, data::Split::kTrain, order, cursor, static_cast<size_t>(batch));  // (B, T)
            cursor += static_cast<size_t>(batch);
            model::LossResult r;
            {
                model::Bf16Autocast autocast(t.bf16);  // fp32 master weights, bf16 matmuls
                r = model::causal_lm_loss(llama, ids, /*count_correct=*/false);
            }
            (t.gradient_accumulation_steps == 1 ? r.loss
                                                : r.loss / static_cast<double>(t.gradient_accumulation_steps))
                .backward();
            step_loss += r.loss.item<double>() / static_cast<double>(t.gradient_accumulation_steps);
        }
        const double grad_norm = optimizer->clip_grad_norm(t.max_grad_norm);
        const int64_t done = step + 1, samples = done * global_batch;
        if (!std::isfinite(step_loss) || !std::isfinite(grad_norm)) {
            log.interval_end("run_stop", nullptr, {{"status", "aborted"}, {"step_num", done}});
            return Status::Error("step " + std::to_string(done) + ": non-finite " +
                                 (std::isfinite(step_loss) ? "gradient norm" : "loss") + " (loss " +
                                 std::to_string(step_loss) + ", grad norm " + std::to_string(grad_norm) +
                                 "); the optimizer step was not taken");
        }
        optimizer->step(lr);
        optimizer->zero_grad();
        window_loss += step_loss;
        ++window_steps;
        report.final_train_loss = step_loss;
        report.steps = done;

        if (done % t.logging_steps == 0 || done == total_steps) {
            const auto now = Clock::now();
            const double seconds = std::chrono::duration<double>(now - window_start).count();
            const double tokens_per_second =
                static_cast<double>(tokens_per_step * window_steps) / std::max(seconds, 1e-9);
            const nlohmann::ordered_json at = {{"samples_count", samples}, {"step_num", done}};
            log.point_in_time("train_loss", window_loss / static_cast<double>(window_steps), at);
            log.point_in_time("lr", lr, at);
            log.point_in_time("grad_norm", grad_norm, at);
            log.point_in_time("tokens_per_second", tokens_per_second, at);
            if (std::chrono::duration<double>(now - last_progress).count() >= options.progress_interval_s ||
                done == total_steps) {
                const double elapsed = std::chrono::duration<double>(now - run_start).count();
                std::ostringstream line;  // formatting flags stay local to the line
                line << "step " << done << "/" << total_steps << " | loss " << std::fixed
                     << std::setprecision(4) << window_loss / static_cast<double>(window_steps) << " | lr "
                     << std::scientific << std::setprecision(2) << lr << std::fixed << " | grad "
                     << std::setprecision(2) << grad_norm << " | " << std::setprecision(0)
                     << tokens_per_second << " tok/s | " << duration_text(elapsed) << " elapsed, ETA "
                     << duration_text(elapsed / static_cast<double>(done) *
                                      static_cast<double>(total_steps - done))
                     << "\n";
                progress << line.str();
                last_progress = now;
            }
            window_loss = 0;
            window_steps = 0;
            window_start = now;
        }
        if (has_validation && t.eval_steps && done % *t.eval_steps == 0) {
            evaluate_now(done, samples);
            if (target_reached && config.eval.stop_at_target) {
                progress << "target " << *config.eval.target << " reached at step " << done << "\n";
                break;
            }
        }
        if (done % t.save_steps == 0 && done < total_steps) {
            const Status saved = checkpoint(done);
            if (!saved.ok()) progress << "warning: " << saved.message() << "\n";  // training goes on
        }
        if (options.stop_after_steps > 0 && done >= options.stop_after_steps) {
            log.interval_end("run_stop", nullptr, {{"status", "aborted"}, {"step_num", done}});
            report.status = "aborted";
            progress << "stopped after step " << done << " (--stop-after-steps)\n";
            return report;
        }
    }
    if (has_validation && last_eval_step != report.steps)
        evaluate_now(report.steps, report.steps * global_batch);
    report.final_eval_loss = last_eval.loss;
    const Status final_checkpoint = checkpoint(report.steps);
    if (!final_checkpoint.ok()) progress << "warning: " << final_checkpoint.message() << "\n";

    const Status saved = save_outputs(llama, config, options.engine_version, world_size);
    if (!saved.ok()) {
        log.interval_end("run_stop", nullptr, {{"status", "fail"}});
        return saved;
    }
    report.status = !config.eval.target || target_reached ? "success" : "aborted";
    log.interval_end("run_stop", nullptr, {{"status", report.status}, {"step_num", report.steps}});
    return report;
}

}  // namespace slipway::train
