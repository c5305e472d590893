"""Check 2: LoRA training on the GPU against HF Trainer + PEFT, then the engine's adapter in PEFT and its
merge against PEFT's merge_and_unload.

Both sides train the same model (written by transformers), from the same adapter weights (the engine's
initial A, taken from a run at learning rate 1e-30; B = 0 in both), on the same micro-batches in the same
order (gpu_common.engine_batches, fed to a Trainer whose sampler is sequential), with the same settings:
r 8, alpha 16, dropout 0 (dropout masks come from different generators, so any p > 0 would make the curves
differ by noise; check_resume.py covers dropout), the seven projections, AdamW (torch's) betas 0.9/0.999,
eps 1e-8, weight decay 0.01 on A and B, clipping at norm 1.0, cosine schedule with 4 warmup steps, 40 steps
of 2 micro-batches of 4 blocks of 128 tokens, loss = mean over the step's predicted tokens (HF shifts inside
the model; equal-length blocks make its per-token mean over the accumulated batch equal the engine's mean of
micro-batch means). HF's loss per step is recorded from each micro-batch's logits (its logged loss is
rounded to 4 decimals). The labels have their first position -100 (gpu_common.lm_batch), so Trainer's
num_items_in_batch is B (T - 1) per micro-batch in every transformers version (some count labels before the
shift, some after): a count of B T would scale HF's gradients by (T - 1) / T, which clipping absorbs in
clipped steps and AdamW does not across clipped and unclipped steps. AdamW's decay: HF's
get_decay_parameter_names exempts biases and norms only, so lora_A and lora_B decay in both.

Tolerances (per step, relative): fp32 1e-3, bf16 (autocast on both, fp32 or bf16 base on both) 2e-2. Kernels and summation orders differ
(~1e-6 per step in fp32, ~1e-3 in bf16) and Adam carries differences forward; a misaligned setting
(schedule step, decay, clipping, scaling, batch order) moves the curve by more after a few steps. The curve
must also move (first minus last loss > 0.05), so agreement means something. Logits of PeftModel with the
engine's adapter vs the engine's own (dump --adapter): 1e-4 of the largest logit (as check_score's fp32).
Merge: every tensor within 1e-6 of its largest value (W + s B A in fp32; only the r-term sum's order differs).
figures["compared"] is the number of steps compared over the three precisions and must be 3 x 40; the merge must
compare at least one tensor.

  check_lora.py --out DIR
"""
import glob
import os
import sys

import torch

import gpu_common as g

MODEL = dict(vocab_size=4096, hidden_size=256, intermediate_size=688, num_hidden_layers=4, num_attention_heads=8,
             num_key_value_heads=4, max_position_embeddings=512, rms_norm_eps=1e-5, initializer_range=0.05)
STEPS, BATCH, ACCUMULATION, BLOCK, LR, WARMUP, SEED = 40, 4, 2, 128, 3e-3, 4, 1234
# fp32; bf16 autocast over an fp32 base (HF Trainer's bf16=True on a float32 model); bf16 autocast over a
# bfloat16 frozen base (the engine's default on GPUs, /model/base_dtype auto; HF's torch_dtype=bfloat16).
PRECISIONS = ("fp32", "bf16", "bf16-base")
R, ALPHA = 8, 16


def hf_train(model_dir, init_adapter, batches, bf16, out, base_dtype=torch.float32):
    """HF Trainer + PEFT on `batches` (steps x micro x (B, T)); returns the loss of each step."""
    import peft
    import safetensors.torch
    import transformers

    class Blocks(torch.utils.data.Dataset):
        def __init__(self):
            self.rows = [row for step in batches for micro in step for row in micro]

        def __len__(self):
            return len(self.rows)

        def __getitem__(self, i):
            return self.rows[i]

    micro_losses = []

    class InOrder(transformers.Trainer):
        def _get_train_sampler(self, *args, **kwargs):  # the engine's order, not a shuffle
            return torch.utils.data.SequentialSampler(self.train_dataset)

        def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
            loss, outputs = super().compute_loss(model, inputs, return_outputs=True, **kwargs)
            with torch.no_grad():
                logits = outputs.logits[:, :-1].float()
                labels = inputs["labels"][:, 1:]
                micro_losses.append(torch.nn.functional.cross_entropy(
                    logits.reshape(-1, logits.shape[-1]), labels.reshape(-1)).item())
            return (loss, outputs) if return_outputs else loss

    transformers.set_seed(SEED)
    base = g.hf_from_pretrained(model_dir, base_dtype)
    model = peft.get_peft_model(base, peft.LoraConfig(r=R, lora_alpha=ALPHA, lora_dropout=0.0,
                                                      target_modules=g.LORA_TARGETS, bias="none",
                                                      task_type="CAUSAL_LM"))
    initial = safetensors.torch.load_file(os.path.join(init_adapter, "adapter_model.safetensors"))
    initial = {k: (v if ".lora_A." in k else torch.zeros_like(v)) for k, v in initial.items()}
    loaded = peft.set_peft_model_state_dict(model, initial)
    assert not getattr(loaded, "unexpected_keys", []), loaded.unexpected_keys
    missing = [k for k in getattr(loaded, "missing_keys", []) if "lora_" in k]
    assert not missing, f"LoRA weights the engine's adapter did not set: {missing[:4]}"
    args = transformers.TrainingArguments(
        output_dir=out, per_device_train_batch_size=BATCH, gradient_accumulation_steps=ACCUMULATION,
        max_steps=STEPS, learning_rate=LR, weight_decay=0.01, adam_beta1=0.9, adam_beta2=0.999, adam_epsilon=1e-8,
        max_grad_norm=1.0, lr_scheduler_type="cosine", warmup_steps=WARMUP, logging_steps=1, save_strategy="no",
        report_to="none", seed=SEED, data_seed=SEED, bf16=bf16, optim="adamw_torch", dataloader_num_workers=0,
        remove_unused_columns=False, disable_tqdm=True)
    trainer = InOrder(model=model, args=args, train_dataset=Blocks(), data_collator=g.lm_batch)
    trainer.train()
    assert len(micro_losses) == STEPS * ACCUMULATION, len(micro_losses)
    return [sum(micro_losses[s * ACCUMULATION:(s + 1) * ACCUMULATION]) / ACCUMULATION for s in range(STEPS)]


def max_rel(a, b):
    return ((a.float() - b.float()).abs().max() / b.float().abs().max().clamp_min(1e-30)).item()


def main():
    a = g.start_check(exact_fp32=True)
    import peft
    import safetensors.torch

    model_dir = g.write_hf_model(os.path.join(a.out, "base"), "llama", torch.float32, **MODEL)
    settings = dict(batch=BATCH, block=BLOCK, accumulation=ACCUMULATION, seed=SEED, gpu=True, r=R, alpha=ALPHA,
                    warmup=WARMUP)
    init_run = g.run_config(os.path.join(a.out, "init"), model_dir, steps=2, lr=1e-30, **{**settings, "warmup": 0})
    g.train(init_run)
    init_adapter = os.path.join(a.out, "init", "run")
    failures, figures, curve_rows = [], {}, []
    compared = 0  # loss-curve steps compared, both precisions
    curves = {}
    for precision in PRECISIONS:
        bf16 = precision != "fp32"
        base_dtype = "bfloat16" if precision == "bf16-base" else "float32"
        run = g.run_config(os.path.join(a.out, f"engine-{precision}"), model_dir, steps=STEPS, lr=LR, bf16=bf16,
                           base_dtype=base_dtype, **settings)
        events, err = g.train(run)
        if "device: cuda" not in err:
            failures.append(f"{precision}: the engine did not train on the GPU")
        ours = g.values(events, "train_loss")
        batches = g.engine_batches(os.path.join(a.out, f"engine-{precision}", "cache"), seed=SEED, steps=STEPS,
                                   batch=BATCH, accumulation=ACCUMULATION)
        theirs = hf_train(model_dir, init_adapter, batches, bf16, os.path.join(a.out, f"hf-{precision}"),
                          getattr(torch, base_dtype))
        curves[precision] = (ours, theirs)
        tolerance = 1e-3 if precision == "fp32" else 2e-2
        pairs = list(zip(ours, theirs))
        compared += len(pairs)
        worst = max((abs(x - y) / abs(y) for x, y in pairs), default=float("inf"))
        figures[f"curve_{precision}_max_rel_diff"] = worst
        if len(ours) != STEPS or len(pairs) != STEPS or worst > tolerance:
            failures.append(f"{precision} loss curve: {len(ours)} engine steps, {len(pairs)} compared of {STEPS}, "
                            f"max rel diff {worst:.3e} > {tolerance}")
            if len(pairs) != STEPS:
                return g.verdict(failures, a.out, figures, compared=compared)  # the table below needs every step
        if ours[0] - ours[-1] < 0.05:
            failures.append(f"{precision}: the loss hardly moved ({ours[0]:.4f} -> {ours[-1]:.4f})")
    for step in range(STEPS):
        if step < 5 or step % 5 == 4:
            row = [step + 1]
            for precision in PRECISIONS:
                ours, theirs = curves[precision]
                row += [ours[step], theirs[step], abs(ours[step] - theirs[step]) / abs(theirs[step])]
            curve_rows.append(row)
    g.table(["step", "engine fp32", "HF fp32", "rel diff", "engine bf16", "HF bf16", "rel diff",
             "engine bf16 base", "HF bf16 base", "rel diff"], curve_rows)

    # The fp32 run's adapter in PEFT: logits against the engine's own.
    adapter = os.path.join(a.out, "engine-fp32", "run")
    line = g.random_lines(MODEL["vocab_size"], (300,))[0]
    tokens = g.write_lines(os.path.join(a.out, "tokens.jsonl"), [line])
    g.engine("dump", "--model", model_dir, "--adapter", adapter, "--tokens", tokens, "--device", "cuda",
             "--out", os.path.join(a.out, "dump.safetensors"))
    ours = safetensors.torch.load_file(os.path.join(a.out, "dump.safetensors"))["logits"]
    peft_model = g.hf_causal_lm(model_dir, torch.float32, adapter=adapter)
    ids = torch.tensor([line], device="cuda")
    with torch.no_grad():
        theirs = peft_model(input_ids=ids).logits[0].cpu()
    logits_diff = max_rel(ours, theirs)
    figures["peft_logits_max_rel_diff"] = logits_diff
    if logits_diff > 1e-4:
        failures.append(f"PeftModel logits with the engine's adapter: max rel diff {logits_diff:.3e} > 1e-4")

    # merge vs merge_and_unload.
    merged_dir = os.path.join(a.out, "merged")
    g.engine("merge", "--model", model_dir, "--adapter", adapter, "--out", merged_dir)
    ours = {}
    for path in glob.glob(os.path.join(merged_dir, "*.safetensors")):
        ours.update(safetensors.torch.load_file(path))
    reference = peft.PeftModel.from_pretrained(
        g.hf_causal_lm(model_dir, torch.float32, device="cpu"), adapter).merge_and_unload().state_dict()
    merge_diff, missing, merged_compared = 0.0, sorted(set(reference) - set(ours)), 0
    for name, tensor in reference.items():
        if name in ours:
            merge_diff = max(merge_diff, max_rel(ours[name], tensor))
            merged_compared += 1
    figures["merge_max_rel_diff"] = merge_diff
    figures["merge_tensors_compared"] = merged_compared
    if missing or not merged_compared or merge_diff > 1e-6:
        failures.append(f"merge: {merged_compared} tensors compared, max rel diff {merge_diff:.3e} (> 1e-6?), "
                        f"tensors missing: {missing[:5]}")
    g.table(["adapter check", "max rel diff", "tolerance"],
            [["PeftModel.from_pretrained(engine adapter) logits vs engine dump", logits_diff, 1e-4],
             ["engine merge vs PEFT merge_and_unload (every tensor)", merge_diff, 1e-6]])
    if compared != len(PRECISIONS) * STEPS:
        failures.append(f"compared {compared} loss-curve steps, expected {len(PRECISIONS) * STEPS}")
    return g.verdict(failures, a.out, figures, compared=compared)


if __name__ == "__main__":
    sys.exit(main())
