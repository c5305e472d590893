"""CPU-side check under the HF comparisons: gpu_common.engine_batches (the Python copy of the engine's batch
order, which check_lora.py and check_perf.py feed to HF Trainer) gives exactly the batches the engine trains
on. The engine trains a LoRA with a learning rate of 1e-30 (the weights do not move, so each step's loss is
the base model's loss on that step's batches); the independent plain-PyTorch LLaMA of
tests/reference/llama_reference.py computes the loss of the reproduced batches. They must agree within
1e-5 relative (the reference check's tolerance: fp32 on CPU, only summation order differs) at every step,
and a shifted order (the next epoch's) must not, so the check can tell orders apart. Steps cross an epoch.
figures["compared"] is the number of steps compared, which must be every step the engine was asked for.

  check_batches.py --out DIR
"""
import json
import os
import sys

import torch

import gpu_common as g

sys.path.insert(0, os.path.join(g.REPO, "tests", "reference"))
import llama_reference  # noqa: E402

TOLERANCE = 1e-5


def main():
    a = g.start_check()
    torch.set_num_threads(2)
    failures = []
    pinned = g.shuffled_indices(10, 42, 0)
    if pinned != [4, 7, 1, 3, 5, 2, 6, 8, 0, 9]:  # tests/engine/data_sampler_test.cpp pins the same order
        failures.append(f"shuffled_indices(10, 42, 0) = {pinned}, not the engine's pinned order")

    config = {"model_type": "llama", "vocab_size": 4096, "hidden_size": 64, "intermediate_size": 128,
              "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
              "max_position_embeddings": 256, "rms_norm_eps": 1e-6, "rope_theta": 10000.0}
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f)
    model = os.path.join(a.out, "model")
    g.engine("init-model", "--config", os.path.join(a.out, "config.json"), "--out", model, "--seed", 3)
    batch, accumulation, block, seed = 4, 2, 64, 77
    corpus = g.head_of_corpus(os.path.join(a.out, "corpus.jsonl"), 40)
    settings = dict(batch=batch, block=block, accumulation=accumulation, lr=1e-30, seed=seed, train_file=corpus,
                    warmup=1)
    g.engine("prepare", g.run_config(os.path.join(a.out, "engine"), model, steps=100, **settings))
    blocks = len(g.token_cache(os.path.join(a.out, "engine", "cache"))[2])
    steps = (blocks * 3 // 2) // (batch * accumulation) + 1  # into the second epoch
    events, _ = g.train(g.run_config(os.path.join(a.out, "engine"), model, steps=steps, **settings), threads=2)
    engine_losses = g.values(events, "train_loss")
    if len(engine_losses) != steps:
        failures.append(f"the engine logged {len(engine_losses)} train_loss values, expected {steps}")

    reference = llama_reference.Llama(model)
    batches = g.engine_batches(os.path.join(a.out, "engine", "cache"), seed=seed, steps=steps, batch=batch,
                               accumulation=accumulation)
    shifted = g.engine_batches(os.path.join(a.out, "engine", "cache"), seed=seed + 1, steps=steps, batch=batch,
                               accumulation=accumulation)
    rows, worst, worst_shifted = [], 0.0, float("inf")
    with torch.no_grad():
        for step in range(min(steps, len(engine_losses))):
            ours = sum(reference.loss(ids)[1].item() for ids in batches[step]) / accumulation
            other = sum(reference.loss(ids)[1].item() for ids in shifted[step]) / accumulation
            diff = abs(ours - engine_losses[step]) / abs(engine_losses[step])
            diff_shifted = abs(other - engine_losses[step]) / abs(engine_losses[step])
            worst, worst_shifted = max(worst, diff), min(worst_shifted, diff_shifted)
            rows.append([step + 1, engine_losses[step], ours, diff, diff_shifted])
    print(f"{blocks} training blocks of {block} tokens; {steps} steps of {accumulation} x {batch} blocks "
          f"({steps * accumulation * batch} blocks: the order crosses into epoch 1)")
    g.table(["step", "engine train_loss", "reference on reproduced batches", "rel diff",
             "rel diff, another seed's order"], rows)
    if worst > TOLERANCE:
        failures.append(f"reproduced batches: max rel diff {worst:.2e} > {TOLERANCE}")
    if worst_shifted <= TOLERANCE:
        failures.append(f"another order agrees too ({worst_shifted:.2e}): the check cannot tell orders apart")
    return g.verdict(failures, a.out, {"max_rel_diff": worst, "min_rel_diff_other_order": worst_shifted},
                     compared=len(rows))


if __name__ == "__main__":
    sys.exit(main())
