#!/usr/bin/python3
"""Benchmark (not a test): QLoRA (the decoder's linear weights as NF4, with and without double quantization)
against LoRA on fp32 weights, on a ~105M-parameter model whose frozen weights dominate memory, in one
invocation: on one rank, and sharded (/distributed/sharding full) on 2 ranks, where each rank keeps half of
the NF4 codes and scales and gathers one layer's at a time.

Per run: the engine's peak resident memory (VmHWM, printed at the end), the planner's figure for the same
run config (`plan --json`: per-device bytes and its weights share), the median step time after a warm-up
step, and the final train loss; ratios against LoRA. The base is an HF folder written by init-model, so
QLoRA quantizes it as it loads (model/lora.cpp load_quantized_base) and never holds it in fp32.

usage: tests/bench/qlora_bench.py [--engine build/bin/slipway-engine] [--work build/bench/qlora] [--steps N]
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
from dist_bench import mllog_step_seconds, BENCH_ENV  # noqa: E402

MODEL = {"vocab_size": 4096, "hidden_size": 1024, "intermediate_size": 2816, "num_hidden_layers": 8,
         "num_attention_heads": 16, "max_position_embeddings": 256, "tie_word_embeddings": True,
         "initializer_range": 0.02}
LORA = {"method": "lora"}
NF4 = {"method": "qlora", "bnb_4bit_use_double_quant": False}
NF4_DQ = {"method": "qlora", "bnb_4bit_use_double_quant": True}
# (name, adapter, ranks): 2 ranks run sharded.
RUNS = [("lora (fp32 base)", LORA, 1), ("qlora nf4", NF4, 1), ("qlora nf4 + double quant", NF4_DQ, 1),
        ("lora sharded, 2 ranks", LORA, 2), ("qlora nf4 + dq sharded, 2 ranks", NF4_DQ, 2)]


def check(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, env=BENCH_ENV)
    if r.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed:\n{r.stderr[-3000:]}")
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default=str(ROOT / "build/bin/slipway-engine"))
    ap.add_argument("--work", default=str(ROOT / "build/bench/qlora"))
    ap.add_argument("--steps", type=int, default=4)
    a = ap.parse_args()
    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    (work / "config.json").write_text(json.dumps(MODEL))
    check([a.engine, "init-model", "--config", str(work / "config.json"), "--out", str(work / "base"), "--seed", "1"])
    rows = []
    for name, adapter, ranks in RUNS:
        tag = re.sub(r"\W+", "-", name).strip("-")
        config = {
            "name": f"bench-{tag}",
            "model": {"path": str(work / "base"), "dtype": "float32"},
            "tokenizer": {"path": str(ROOT / "resources/demo/tokenizer.json")},
            "data": {"train_file": str(ROOT / "resources/demo/corpus.jsonl"), "block_size": 128,
                     "split": "concat", "validation_split_percentage": 0, "cache_dir": str(work / "cache")},
            "training": {"learning_rate": 1e-3, "max_steps": a.steps + 1, "warmup_steps": 0,
                         "per_device_train_batch_size": 2, "logging_steps": 1, "save_steps": 100000,
                         "output_dir": str(work / tag), "overwrite_output_dir": True},
            "adapter": {"r": 8, "lora_alpha": 16, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"],
                        **adapter, **({"bnb_4bit_compute_dtype": "float32"} if adapter["method"] == "qlora" else {})},
            "slurm": {"gpus_per_node": 0, "ntasks_per_node": ranks},
            "distributed": {"sharding": "full" if ranks > 1 else "none"},
        }
        path = work / f"{tag}.json"
        path.write_text(json.dumps(config))
        check([a.engine, "prepare", str(path)])
        plan = json.loads(check([a.engine, "plan", str(path), "--json"]).stdout)
        if ranks == 1:
            r = check([a.engine, "train", "--threads", "2", str(path)])
        else:
            r = check([a.engine, "launch", "--nproc", str(ranks), "--threads-per-rank", "1", "--", "train", str(path)])
        peak = max(int(m) for m in re.findall(r"peak resident memory (\d+) MiB", r.stderr))  # the largest rank
        loss = [json.loads(l.split(":::MLLOG ", 1)[1])["value"] for l in r.stdout.splitlines() if '"train_loss"' in l]
        rows.append((name, peak, plan["per_device_bytes"] / 2**20, plan["breakdown"]["weights"] / 2**20,
                     mllog_step_seconds(r.stdout, 1), loss[-1]))
    base = rows[0]  # the ratios of the sharded rows are against unsharded LoRA too
    print(f"QLoRA vs LoRA: ~105M parameters (hidden 1024, 8 layers), batch 2 x 128, "
          f"{a.steps} measured steps; 1 rank with 2 threads, or 2 ranks with 1 thread each (peak: the largest rank)")
    print(f"{'run':28s} {'peak RSS MiB':>12s} {'x LoRA':>7s} {'plan MiB':>9s} {'plan weights':>12s} "
          f"{'step s':>7s} {'x LoRA':>7s} {'last loss':>9s}")
    for name, peak, plan_total, plan_weights, step, loss in rows:
        print(f"{name:28s} {peak:12d} {peak / base[1]:7.2f} {plan_total:9.0f} {plan_weights:12.0f} "
              f"{step:7.3f} {step / base[4]:7.2f} {loss:9.4f}")


if __name__ == "__main__":
    main()
