#!/usr/bin/python3
"""Benchmark (not a test): sharded training (/distributed/sharding: full) against DDP (none) on a model whose
weights and AdamW state dominate memory, at 1, 2 and 3 ranks (Gloo, 1 thread each), in one invocation.

Per run: the peak resident memory of every rank (each rank prints its VmHWM at the end), the median step
time (between consecutive train_loss lines, after the warm-up), and the ratios full / none at the same rank
count. The bound a sharded rank can reach is the state / N plus one gathered unit plus activations plus
the process's own footprint (LibTorch, the token cache), measured here as the RSS of a 1-step run of a
tiny model. Prints a table.

usage: tests/bench/shard_bench.py [--engine build/bin/slipway-engine] [--work build/bench/shard] [--steps N]
"""
import argparse
import json
import os
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
from dist_bench import mllog_step_seconds, BENCH_ENV  # noqa: E402
from train_bench import write_engine_config  # noqa: E402

# ~100M parameters: weights, gradients and AdamW moments (16 bytes a parameter) are ~1.6 GB a replica,
# activations (batch 2 x 64 tokens) a few MB.
MODEL = dict(dim=768, layers=12, heads=12, vocab=4096, seq=64, batch=2)
TINY = dict(dim=64, layers=1, heads=2, vocab=4096, seq=64, batch=2)


def launch(engine, config, ranks, sharding, work, name):
    path = pathlib.Path(config)
    c = json.loads(path.read_text())
    c["distributed"]["sharding"] = sharding
    c["training"]["per_device_train_batch_size"] = MODEL["batch"]
    run_path = work / f"{name}.json"
    run_path.write_text(json.dumps(c))
    cmd = [engine, "launch", "--nproc", str(ranks), "--threads-per-rank", "1", "--", "train", str(run_path)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=BENCH_ENV)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr[-3000:]}")
    peaks = [int(m) for m in re.findall(r"peak resident memory (\d+) MiB", r.stderr)]
    if len(peaks) != ranks:
        sys.exit(f"{name}: expected {ranks} peak memory lines:\n{r.stderr[-2000:]}")
    return max(peaks), r.stdout


def parameters(s):
    hidden = json.loads((pathlib.Path(s["config_dir"]) / "config.json").read_text())["intermediate_size"]
    per_layer = 4 * s["dim"] ** 2 + 3 * s["dim"] * hidden + 2 * s["dim"]
    return s["layers"] * per_layer + 2 * s["vocab"] * s["dim"] + s["dim"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default=str(ROOT / "build/bin/slipway-engine"))
    ap.add_argument("--work", default=str(ROOT / "build/bench/shard"))
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=1)
    a = ap.parse_args()
    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    tokenizer = ROOT / "resources/demo/tokenizer.json"
    config = write_engine_config(work, "model", MODEL, a.warmup + a.steps + 1, tokenizer)
    tiny = write_engine_config(work, "tiny", TINY, 1, tokenizer)
    subprocess.run([a.engine, "prepare", str(config)], check=True, capture_output=True)
    subprocess.run([a.engine, "prepare", str(tiny)], check=True, capture_output=True)
    baseline, _ = launch(a.engine, tiny, 1, "none", work, "baseline")
    n_params = parameters(dict(MODEL, config_dir=work / "model" / "model"))
    blas = subprocess.run(["update-alternatives", "--query", "libblas.so.3-x86_64-linux-gnu"], capture_output=True,
                          text=True).stdout
    blas_value = next((line.split(": ", 1)[1] for line in blas.splitlines() if line.startswith("Value:")), "?")
    print(f"model: {n_params / 1e6:.1f}M parameters, full training, AdamW (state {n_params * 16 / 2**20:.0f} MiB "
          f"a replica), batch {MODEL['batch']} x {MODEL['seq']} tokens per rank; Gloo, 1 thread per rank; "
          f"BLAS {blas_value}")
    print(f"process footprint (1-step tiny run): {baseline} MiB")
    print(f"{'ranks':>5} | {'none MiB':>8} {'full MiB':>8} {'full/none':>9} {'bound MiB':>9} | "
          f"{'none s/step':>11} {'full s/step':>11} {'full/none':>9}")
    for ranks in (1, 2, 3):
        row = {}
        for sharding in ("none", "full"):
            peak, out = launch(a.engine, config, ranks, sharding, work, f"{sharding}-{ranks}")
            row[sharding] = (peak, mllog_step_seconds(out, a.warmup))
        # state / N, one gathered unit with its gradient (fp32), the process's own footprint
        unit = (4 * MODEL["dim"] ** 2 + 3 * MODEL["dim"] * int(MODEL["dim"] * 8 / 3)) * 8
        bound = baseline + (n_params * 16 / ranks + unit) / 2**20
        print(f"{ranks:>5} | {row['none'][0]:>8} {row['full'][0]:>8} {row['full'][0] / row['none'][0]:>9.2f} "
              f"{bound:>9.0f} | {row['none'][1]:>11.3f} {row['full'][1]:>11.3f} "
              f"{row['full'][1] / row['none'][1]:>9.2f}")


if __name__ == "__main__":
    main()
