"""The HF column of tests/bench/train_bench.py: what a user would run instead of slipway-engine on a CPU,
transformers' Trainer on a LlamaForCausalLM (full weights), or on a PEFT LoRA model of it (--lora-r). It loads
the model folder the engine trains (written by `slipway-engine init-model`: same config, same weights) and is
fed the engine's own batches in the engine's order (read from its token cache, tests/gpu/gpu_common.py), so
the first step's loss can be held against the engine's. One torch thread; OPENBLAS_NUM_THREADS comes from the
environment. Runs where transformers and peft are (the forky root's pinned venv, tests/compat/in_root.sh).
Prints one JSON line: tokens/s (median of the per-step rates after --warmup steps, as the bench takes the
engine's), the process's own peak RSS (ru_maxrss of RUSAGE_SELF: the wrappers that chroot into the root are
not counted), the loss of each step, and what ran (versions, optimizer, attention kernel).

usage: hf_trainer_loop.py --model DIR --cache DIR --batch B --steps N [--warmup W] [--lr LR]
                          [--weight-decay WD] [--seed S] [--lora-r R --lora-alpha A] --out DIR
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "gpu"))
import gpu_common as g  # noqa: E402  (the engine's batch order; nothing in it needs a GPU)


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, help="HF folder the engine trains from")
    ap.add_argument("--cache", required=True, help="the engine's token cache folder (cache_dir) for this run")
    ap.add_argument("--out", required=True, help="Trainer's output_dir (nothing is saved in it)")
    for name in ("batch", "steps"):
        ap.add_argument(f"--{name}", type=int, required=True)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--weight-decay", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--lora-r", type=int, default=0, help="0: full fine-tuning (no PEFT)")
    ap.add_argument("--lora-alpha", type=float, default=16.0)
    a = ap.parse_args()
    # Before transformers loads: the engine and the plain loop run on one thread too.
    torch.set_num_threads(1)
    import transformers
    # transformers imports lazily: name what is used (and peft) before taking the price of the imports.
    transformers.Trainer, transformers.TrainingArguments, transformers.LlamaForCausalLM
    if a.lora_r:
        import peft
    import_rss = rss_mb()

    total = a.warmup + a.steps
    batches = g.engine_batches(a.cache, seed=a.seed, steps=total, batch=a.batch, accumulation=1)
    rows = [row for step in batches for micro in step for row in micro]
    seq = rows[0].shape[0]

    step_ends, losses = [], []

    class Clock(transformers.TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            step_ends.append(time.perf_counter())

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "loss" in logs:
                losses.append(logs["loss"])

    class InOrder(transformers.Trainer):
        # The engine's order is already in `rows`: the Trainer must not shuffle it again.
        def _get_train_sampler(self, *args, **kwargs):
            return torch.utils.data.SequentialSampler(self.train_dataset)

    model = transformers.LlamaForCausalLM.from_pretrained(a.model, dtype=torch.float32)
    peft_version = None
    if a.lora_r:
        peft_version = peft.__version__
        model = peft.get_peft_model(model, peft.LoraConfig(r=a.lora_r, lora_alpha=a.lora_alpha, lora_dropout=0.0,
                                                           target_modules=g.LORA_TARGETS, task_type="CAUSAL_LM"))
    # The engine's defaults where the bench sets nothing (betas, eps, clipping at 1.0, a linear schedule
    # without warm-up); the optimizer is the Trainer's default implementation, as a user would get it.
    args = transformers.TrainingArguments(
        output_dir=a.out, per_device_train_batch_size=a.batch, max_steps=total, learning_rate=a.lr,
        weight_decay=a.weight_decay, adam_beta1=0.9, adam_beta2=0.999, adam_epsilon=1e-8, max_grad_norm=1.0,
        lr_scheduler_type="linear", warmup_steps=0, logging_steps=1, save_strategy="no", report_to="none",
        seed=a.seed, use_cpu=True, dataloader_num_workers=0, remove_unused_columns=False, disable_tqdm=True)
    trainer = InOrder(model=model, args=args, train_dataset=rows, callbacks=[Clock()], data_collator=g.lm_batch)
    trainer.train()
    assert len(step_ends) == total, f"HF ended {len(step_ends)} steps of {total}"
    assert torch.get_num_threads() == 1, f"the Trainer changed torch's threads to {torch.get_num_threads()}"
    # Step i's rate: its tokens over the time since the previous step ended (data loading included, as in
    # the engine's step time); the first step has no previous end and is a warm-up step anyway.
    rates = [a.batch * seq / (step_ends[i] - step_ends[i - 1]) for i in range(max(1, a.warmup), total)]
    print(json.dumps({
        "tokens_per_second": statistics.median(rates), "peak_rss_mb": rss_mb(), "import_rss_mb": import_rss,
        "losses": losses, "torch": torch.__version__,
        "transformers": transformers.__version__, "peft": peft_version, "optim": str(args.optim.value),
        "attention": model.config._attn_implementation,
        "trainable": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "library default")}))


if __name__ == "__main__":
    main()
