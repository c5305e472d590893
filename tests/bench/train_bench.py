#!/usr/bin/python3
"""Benchmark (not a test): tokens/s and peak RSS of `slipway-engine train` against a plain-PyTorch loop
(torch_train_loop.py: same model, batch, AdamW fp32, one thread each) in one invocation, at two sizes,
plus this machine's one-thread matrix-product rate and the model FLOP/s each achieves as a share of it.
Prints a table of ratios.

usage: tests/bench/train_bench.py [--engine build/bin/slipway-engine] [--work build/bench/train] [--scale X]
                                  [--blas-threads N]

One thread each means one BLAS thread too: Debian's OpenBLAS (the pthread build) starts one thread per core
whatever torch.set_num_threads or --threads say, so its matrix products (and the measured matmul rate) would
run on both cores of this machine. The bench sets OPENBLAS_NUM_THREADS for every process it measures
(--blas-threads 0 leaves the library's default, as measured before this option existed).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
from torch_train_loop import llama2c_hidden  # noqa: E402

SIZES = {
    # name: dim, layers, heads, vocab, seq, batch
    "tiny": dict(dim=64, layers=2, heads=4, vocab=512, seq=64, batch=4, steps=300),
    "15M": dict(dim=288, layers=6, heads=6, vocab=32000, seq=256, batch=8, steps=8),
}


def run_measured(cmd):
    """Runs cmd; returns (stdout, peak RSS of that very child in MB, from wait4's rusage)."""
    import tempfile
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        pid = os.fork()
        if pid == 0:  # child: exec with stdout/stderr in the temporary files
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            try:
                os.execv(cmd[0], cmd)
            finally:
                os._exit(127)
        _, status, usage = os.wait4(pid, 0)
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{cmd[0]} failed:\n{err.read()[-3000:]}")
        return out.read(), usage.ru_maxrss / 1024


def matmul_gflops():
    code = ("import torch,time;torch.set_num_threads(1);n=2048;a=torch.randn(n,n);b=torch.randn(n,n);a@b;"
            "t=time.perf_counter();[a@b for _ in range(4)];s=time.perf_counter()-t;print(4*2*n**3/s/1e9)")
    return float(subprocess.check_output(["/usr/bin/python3", "-c", code], text=True))


def flops_per_token(s, hidden):
    d, layers, vocab, seq = s["dim"], s["layers"], s["vocab"], s["seq"]
    matmul_params = layers * (4 * d * d + 3 * d * hidden) + vocab * d  # the embedding lookup is not a matmul
    return 6 * matmul_params + 12 * layers * seq * d  # forward + backward, attention scores included


def write_engine_config(work, name, s, max_steps, tokenizer):
    """A run config (and model config.json) for size `s` under work/name; returns the run config's path."""
    folder = work / name
    (folder / "model").mkdir(parents=True, exist_ok=True)
    hidden = llama2c_hidden(s["dim"])
    (folder / "model" / "config.json").write_text(json.dumps({
        "vocab_size": s["vocab"], "hidden_size": s["dim"], "intermediate_size": hidden, "num_hidden_layers": s["layers"],
        "num_attention_heads": s["heads"], "max_position_embeddings": s["seq"], "tie_word_embeddings": False}))
    config = {
        "name": f"bench-{name}",
        "model": {"path": str(folder / "model"), "dtype": "float32", "init": "random"},
        "tokenizer": {"path": str(tokenizer)},
        "data": {"train_file": str(ROOT / "resources/demo/corpus.jsonl"), "block_size": s["seq"], "split": "concat",
                 "validation_split_percentage": 0, "cache_dir": str(work / "cache")},
        "training": {"learning_rate": 1e-3, "weight_decay": 0.0, "max_steps": max_steps, "warmup_steps": 0,
                     "per_device_train_batch_size": s["batch"], "logging_steps": 1, "save_steps": 100000,
                     "output_dir": str(folder / "out"), "overwrite_output_dir": True},
        "adapter": {"method": "full"},
        "distributed": {"backend": "gloo", "bucket_mb": 25},
        "slurm": {"gpus_per_node": 0},
    }
    (folder / "run.json").write_text(json.dumps(config))
    return folder / "run.json"


def engine_run(engine, work, name, s, steps, warmup, tokenizer):
    folder = work / name
    write_engine_config(work, name, s, warmup + steps, tokenizer)
    hidden = llama2c_hidden(s["dim"])
    # Prepare once outside the measured run so both sides time only training.
    subprocess.run([engine, "prepare", str(folder / "run.json")], check=True, capture_output=True)
    out, rss = run_measured([engine, "train", "--threads", "1", str(folder / "run.json")])
    rates = [json.loads(line.split(":::MLLOG ", 1)[1])["value"] for line in out.splitlines()
             if '"key": "tokens_per_second"' in line]
    return statistics.median(rates[warmup:]), rss, hidden


def torch_run(s, steps, warmup):
    cmd = ["/usr/bin/python3", str(HERE / "torch_train_loop.py"), "--steps", str(steps), "--warmup", str(warmup)]
    for k in ("dim", "layers", "heads", "vocab", "seq", "batch"):
        cmd += [f"--{k}", str(s[k])]
    out, _ = run_measured(cmd)
    r = json.loads(out.strip().splitlines()[-1])
    return r["tokens_per_second"], r["peak_rss_mb"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default=str(ROOT / "build/bin/slipway-engine"))
    ap.add_argument("--work", default=str(ROOT / "build/bench/train"))
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies each size's timed steps")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--blas-threads", type=int, default=1,
                    help="OPENBLAS_NUM_THREADS for the matmul rate, the engine and torch (0: library default)")
    a = ap.parse_args()
    if a.blas_threads > 0:
        os.environ["OPENBLAS_NUM_THREADS"] = str(a.blas_threads)  # inherited by every measured process
    else:
        os.environ.pop("OPENBLAS_NUM_THREADS", None)
    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    blas = subprocess.run(["update-alternatives", "--query", "libblas.so.3-x86_64-linux-gnu"], capture_output=True, text=True).stdout
    blas = next((l.split(": ", 1)[1] for l in blas.splitlines() if l.startswith("Value:")), "unknown")
    # A tokenizer small enough for the tiny model's 512-token vocabulary.
    tokenizer512 = work / "tokenizer512.json"
    if not tokenizer512.exists():
        subprocess.run([a.engine, "tokenizer", "train", "--corpus", str(ROOT / "resources/demo/corpus.jsonl"), "--vocab-size",
                        "512", "--out", str(tokenizer512)], check=True, capture_output=True)
    peak = matmul_gflops()
    blas_threads = os.environ.get("OPENBLAS_NUM_THREADS", "library default")
    print(f"BLAS: {blas} (OPENBLAS_NUM_THREADS: {blas_threads}); torch threads 1; matmul (2048^3, fp32): {peak:.1f} GFLOP/s; timed steps (tiny/15M): "
          f"{' / '.join(str(max(1, int(s['steps'] * a.scale))) for s in SIZES.values())} after {a.warmup} warm-up, median step rate\n")
    print(f"{'model':6} | {'engine tok/s':>12} {'torch tok/s':>11} {'ratio':>6} | {'engine MB':>9} {'torch MB':>8} {'ratio':>6} | "
          f"{'engine %peak':>12} {'torch %peak':>11}")
    print("-" * 100)
    for name, s in SIZES.items():
        tokenizer = tokenizer512 if s["vocab"] < 4096 else ROOT / "resources/demo/tokenizer.json"
        steps = max(1, int(s["steps"] * a.scale))
        e_tps, e_rss, hidden = engine_run(a.engine, work, name, s, steps, a.warmup, tokenizer)
        t_tps, t_rss = torch_run(s, steps, a.warmup)
        fpt = flops_per_token(s, hidden)
        print(f"{name:6} | {e_tps:12.0f} {t_tps:11.0f} {e_tps / t_tps:5.2f}x | {e_rss:9.0f} {t_rss:8.0f} {e_rss / t_rss:5.2f}x | "
              f"{100 * e_tps * fpt / 1e9 / peak:11.1f}% {100 * t_tps * fpt / 1e9 / peak:10.1f}%")
    print("\nratio = engine / torch (tok/s: > 1 is faster; MB: < 1 is smaller). %peak = model FLOP/s "
          "(6 x matmul params + attention) / the matmul rate above.")


if __name__ == "__main__":
    main()
