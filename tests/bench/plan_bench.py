#!/usr/bin/python3
"""Benchmark (not a test): the planner's predicted peak memory per rank (`slipway-engine plan --json`)
against the peak RSS the same run really reaches on CPU (`slipway-engine launch --nproc N -- train`), over
configs that cover tiny / 15M / ~100M models, full / LoRA / embeddings-only training, gradient checkpointing
on and off, sharding none and full, 1 to 3 ranks. Prints a table with the error of each prediction; the goal
is within +-15% on every row.

The measured figure is the largest peak RSS of any rank: wait4's ru_maxrss of the launcher, which Linux
takes over the launcher and every rank it waited for. Runs hold /tmp/slipway-build.lock (builds would
disturb the machine's 2 cores) unless --no-lock. One BLAS and one torch thread per rank.

usage: tests/bench/plan_bench.py [--engine build/bin/slipway-engine] [--work build/bench/plan] [--only NAME]
"""
import argparse
import fcntl
import json
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
from train_bench import write_engine_config  # noqa: E402

MODELS = {
    # name: dim, layers, heads, vocab, seq, batch (per rank)
    "tiny": dict(dim=64, layers=2, heads=4, vocab=4096, seq=64, batch=4),
    "15M": dict(dim=288, layers=6, heads=6, vocab=32000, seq=256, batch=8),
    "100M": dict(dim=768, layers=12, heads=12, vocab=32000, seq=256, batch=4),
}

# name, model, adapter method, gradient checkpointing, sharding, ranks
CONFIGS = [
    ("tiny-full", "tiny", "full", False, "none", 1),
    ("tiny-lora-ckpt-2r", "tiny", "lora", True, "none", 2),
    ("15M-full", "15M", "full", False, "none", 1),
    ("15M-full-ckpt-2r", "15M", "full", True, "none", 2),
    ("15M-lora", "15M", "lora", False, "none", 1),
    ("15M-emb-3r", "15M", "embeddings", False, "none", 3),
    ("100M-full", "100M", "full", False, "none", 1),
    ("100M-lora-ckpt-2r", "100M", "lora", True, "none", 2),
    ("100M-emb-ckpt", "100M", "embeddings", True, "none", 1),
    ("15M-full-shard-2r", "15M", "full", False, "full", 2),
    ("100M-full-shard-3r", "100M", "full", True, "full", 3),
    ("100M-lora-shard-2r", "100M", "lora", False, "full", 2),
    ("15M-emb-shard-2r", "15M", "embeddings", False, "full", 2),
    ("100M-lora-ckpt-shard-3r", "100M", "lora", True, "full", 3),
]

BENCH_ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")


def max_rss_mib(cmd):
    """Runs cmd; returns (stdout, stderr, peak RSS in MiB of it and its waited-for descendants)."""
    import tempfile
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        pid = os.fork()
        if pid == 0:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            try:
                os.execve(cmd[0], cmd, BENCH_ENV)
            finally:
                os._exit(127)
        _, status, usage = os.wait4(pid, 0)
        out.seek(0)
        err.seek(0)
        text, errors = out.read(), err.read()
        if os.waitstatus_to_exitcode(status) != 0:
            print(f"{' '.join(cmd)} failed:\n{errors[-2000:]}{text[-2000:]}", file=sys.stderr)
            return text, errors, None
        return text, errors, usage.ru_maxrss / 1024


def write_config(work, name, model, method, checkpointing, sharding, ranks):
    s = MODELS[model]
    path = write_engine_config(work, name, s, 3, ROOT / "resources/demo/tokenizer.json")
    c = json.loads(path.read_text())
    c["adapter"] = {"method": method}
    if method == "lora":
        c["adapter"].update({"r": 8, "lora_alpha": 16, "target_modules": ["q_proj", "v_proj"]})
    c["training"]["gradient_checkpointing"] = checkpointing
    c["distributed"]["sharding"] = sharding
    c["slurm"]["ntasks_per_node"] = ranks
    c["data"]["cache_dir"] = str(work / f"cache-{model}")
    path.write_text(json.dumps(c, indent=1))
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default=str(ROOT / "build/bin/slipway-engine"))
    ap.add_argument("--work", default=str(ROOT / "build/bench/plan"))
    ap.add_argument("--only", action="append", help="run only these configs (by name)")
    ap.add_argument("--no-lock", action="store_true")
    args = ap.parse_args()
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    lock = None
    if not args.no_lock:
        lock = open("/tmp/slipway-build.lock", "w")
        fcntl.flock(lock, fcntl.LOCK_EX)
    rows = []
    for name, model, method, ckpt, sharding, ranks in CONFIGS:
        if args.only and name not in args.only:
            continue
        config = write_config(work, name, model, method, ckpt, sharding, ranks)
        plan = json.loads(subprocess.run([args.engine, "plan", "--json", str(config)], check=True,
                                         capture_output=True, text=True).stdout)
        subprocess.run([args.engine, "prepare", str(config)], check=True, capture_output=True)
        cmd = [args.engine, "launch", "--nproc", str(ranks), "--threads-per-rank", "1", "--", "train", str(config)]
        _, _, measured = max_rss_mib(cmd)
        if measured is None:
            continue
        predicted = plan["per_device_bytes"] / 2**20
        error = (predicted - measured) / measured * 100
        rows.append((name, plan["parameters"], plan["trainable_parameters"], ranks, predicted, measured, error,
                     plan["peak_phase"]))
        print(f"{name:22s} predicted {predicted:8.1f} MiB  measured {measured:8.1f} MiB  {error:+6.1f}%  "
              f"({plan['peak_phase']})", file=sys.stderr, flush=True)
    blas = subprocess.run(["update-alternatives", "--query", "libblas.so.3-x86_64-linux-gnu"],
                          capture_output=True, text=True).stdout
    blas = next((line.split(": ", 1)[1] for line in blas.splitlines() if line.startswith("Value:")), "?")
    print(f"\nPlanner vs peak RSS per rank (CPU, BLAS {blas}, 1 thread per rank, random init, fp32)\n")
    print(f"| config | parameters | trainable | ranks | predicted MiB | measured MiB | error | peak phase |")
    print(f"|---|---:|---:|---:|---:|---:|---:|---|")
    for name, params, trainable, ranks, predicted, measured, error, phase in rows:
        print(f"| {name} | {params:,} | {trainable:,} | {ranks} | {predicted:.1f} | {measured:.1f} | "
              f"{error:+.1f}% | {phase} |")
    within = sum(1 for r in rows if abs(r[6]) <= 15)
    print(f"\n{within} of {len(rows)} within +-15%")


if __name__ == "__main__":
    main()
