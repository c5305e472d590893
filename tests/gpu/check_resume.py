"""SIGTERM and exact resume, on the GPU or the CPU: a LoRA run with dropout (p = 0.1, so the RNG state of the
training device matters) trains 14 steps straight; the same run gets SIGTERM after step 5, must exit 143 with
a checkpoint and run_stop aborted, and resumed from that checkpoint must continue the straight run's loss
curve. On the CPU the curves must be equal bit for bit. On a GPU the checkpoint must hold the GPU's
generator state (rng.cuda) and the curves must agree within 1e-6 relative: the same kernels on the same
inputs, except that attention's backward may add with atomics in another order (last bits); a dropout mask
drawn from another state changes a step's loss by ~1e-3 relative, so a missed RNG state cannot hide there.
figures["compared"] is the number of steps compared, which must be all 14.

  check_resume.py --device cpu|cuda --out DIR
"""
import json
import os
import struct
import sys

import gpu_common as g


def safetensors_keys(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return set(json.loads(f.read(n))) - {"__metadata__"}


def main():
    a = g.start_check(device=True)
    gpu = a.device == "cuda"
    config = {"model_type": "llama", "vocab_size": 4096, "hidden_size": 64, "intermediate_size": 160,
              "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
              "max_position_embeddings": 256}
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f)
    model = os.path.join(a.out, "model")
    g.engine("init-model", "--config", os.path.join(a.out, "config.json"), "--out", model, "--seed", 5)
    corpus = g.head_of_corpus(os.path.join(a.out, "corpus.jsonl"), 200)
    steps, stop_after = 14, 5
    settings = dict(steps=steps, batch=4, block=64, lr=2e-3, dropout=0.1, gpu=gpu, save_steps=1000,
                    train_file=corpus)
    straight, err = g.train(g.run_config(os.path.join(a.out, "straight"), model, **settings), threads=2)
    failures = []
    if gpu and "device: cuda" not in err:
        failures.append("the straight run did not train on the GPU")
    resumed_config = g.run_config(os.path.join(a.out, "resumed"), model, **settings)
    code, first, err1 = g.train_until_sigterm(resumed_config, stop_after, "--threads", 2)
    stopped = [e for e in first if e["key"] == "run_stop"]
    if code != 143:
        failures.append(f"SIGTERM: exit code {code}, expected 143\n{err1[-2000:]}")
    if not stopped or stopped[-1]["metadata"].get("status") != "aborted":
        failures.append("SIGTERM: no run_stop with status aborted")
    run_dir = os.path.join(a.out, "resumed", "run")
    checkpoints = sorted((d for d in os.listdir(run_dir) if d.startswith("checkpoint-")),
                         key=lambda d: int(d.split("-")[1]))
    if not checkpoints:
        return g.verdict(failures + ["SIGTERM: no checkpoint written"], a.out)
    at = int(checkpoints[-1].split("-")[1])
    keys = safetensors_keys(os.path.join(run_dir, checkpoints[-1], "state.safetensors"))
    if gpu != ("rng.cuda" in keys):
        failures.append(f"checkpoint RNG states {sorted(k for k in keys if k.startswith('rng.'))} on {a.device}")
    second, err2 = g.train(resumed_config, "--resume_from_checkpoint", "latest", threads=2)
    if "resumed from" not in err2:
        failures.append("the second run did not resume")

    a_losses = g.values(straight, "train_loss")
    b_losses = g.values(first, "train_loss")[:at] + g.values(second, "train_loss")
    rows, worst = [], 0.0
    for step, (x, y) in enumerate(zip(a_losses, b_losses), 1):
        diff = abs(x - y) / abs(x)
        worst = max(worst, diff)
        rows.append([step, "resumed" if step > at else "before SIGTERM", x, y, diff])
    print(f"device {a.device}; SIGTERM after step {stop_after}, checkpoint at step {at}; "
          f"RNG states in it: {sorted(k for k in keys if k.startswith('rng.'))}")
    g.table(["step", "part", "straight", "stopped + resumed", "rel diff"], rows)
    tolerance = 1e-6 if gpu else 0.0
    if len(a_losses) != steps or len(b_losses) != steps:
        failures.append(f"{len(a_losses)} straight and {len(b_losses)} stopped+resumed losses, expected {steps}")
    if worst > tolerance:
        failures.append(f"resumed curve differs: max rel diff {worst:.3e} > {tolerance}")
    bitwise = a_losses == b_losses
    print(f"bit for bit equal: {bitwise}; max rel diff {worst:.3e} (tolerance {tolerance})")
    return g.verdict(failures, a.out, {"device": a.device, "checkpoint_step": at, "max_rel_diff": worst,
                                       "bitwise": bitwise}, compared=len(rows))


if __name__ == "__main__":
    sys.exit(main())
