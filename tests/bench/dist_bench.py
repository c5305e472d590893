#!/usr/bin/python3
"""Benchmark (not a test): data-parallel scaling of `slipway-engine launch` (Gloo, DDP's c10d::Reducer)
against plain PyTorch DDP (torch_ddp_loop.py, python3-torch, Gloo) on the same model, in one invocation.

For each side and model: t1 = step time of 1 rank x 1 thread; t2 = step time of 2 ranks x 1 thread at the
same per-rank batch (equal work per rank), so scaling efficiency = t1 / t2; tpar = step time of 2
independent 1-rank runs at once (no communication: what sharing this machine's 2 cores and memory costs);
and the allreduce time of the model's gradient (bench-comm, 2 ranks). Overlap hid = share of that
allreduce not visible in t2 - tpar. Prints a table.

usage: tests/bench/dist_bench.py [--engine build/bin/slipway-engine] [--work build/bench/dist] [--steps N]
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import threading

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
from train_bench import write_engine_config  # noqa: E402

MODELS = {
    # name: dim, layers, heads, vocab, seq, batch (per rank)
    "small": dict(dim=128, layers=4, heads=4, vocab=4096, seq=128, batch=8),
    "15M": dict(dim=288, layers=6, heads=6, vocab=32000, seq=256, batch=8),
}


def mllog_step_seconds(text, warmup):
    """Median time between consecutive train_loss lines (logging_steps 1) after the warm-up steps."""
    stamps = [json.loads(line.split(":::MLLOG ", 1)[1])["time_ms"] for line in text.splitlines()
              if '"key": "train_loss"' in line]
    gaps = [(b - a) / 1000 for a, b in zip(stamps, stamps[1:])][warmup:]
    return statistics.median(gaps)


# One BLAS thread in every process: a pthreads OpenBLAS ignores torch.set_num_threads, so without this a
# "1 thread" reference multiplies on both cores and t1 is not one core's work.
BENCH_ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, env=BENCH_ENV)
    if r.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed:\n{r.stderr[-3000:]}")
    return r.stdout


def concurrently(commands):
    outputs = [None] * len(commands)

    def one(i):
        outputs[i] = run(commands[i])
    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(commands))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outputs


def engine_side(engine, work, name, s, steps, warmup):
    config = write_engine_config(work, name, s, warmup + steps + 1, ROOT / "resources/demo/tokenizer.json")
    run([engine, "prepare", str(config)])
    alone = [engine, "train", "--threads", "1", str(config)]
    t1 = mllog_step_seconds(run(alone), warmup)
    # Two independent runs at once need their own output folders.
    twins = []
    for i in (0, 1):
        c = json.loads(config.read_text())
        c["training"]["output_dir"] += f"-twin{i}"
        path = config.with_name(f"twin{i}.json")
        path.write_text(json.dumps(c))
        twins.append([engine, "train", "--threads", "1", str(path)])
    tpar = statistics.mean(mllog_step_seconds(out, warmup) for out in concurrently(twins))
    t2 = mllog_step_seconds(run([engine, "launch", "--nproc", "2", "--threads-per-rank", "1", "--", "train",
                                 str(config)]), warmup)
    return t1, t2, tpar


def torch_side(engine, s, steps, warmup):
    script = ["/usr/bin/python3", str(HERE / "torch_ddp_loop.py"), "--steps", str(steps), "--warmup", str(warmup)]
    for k in ("dim", "layers", "heads", "vocab", "seq", "batch"):
        script += [f"--{k}", str(s[k])]

    def seconds(out):
        return json.loads([l for l in out.splitlines() if "step_seconds" in l][-1].split(": ", 1)[1]
                          if out.lstrip().startswith("0: ") else out.strip().splitlines()[-1])["step_seconds"]
    t1 = seconds(run(script))
    tpar = statistics.mean(seconds(o) for o in concurrently([script, script]))
    t2 = seconds(run([engine, "launch", "--nproc", "2", "--threads-per-rank", "1", "--"] + script))
    return t1, t2, tpar, json.loads(run(script[:2] + ["--steps", "1", "--warmup", "0"] + script[6:]).strip())["parameters"]


def allreduce_seconds(engine, parameters):
    size = parameters * 4
    out = run([engine, "launch", "--nproc", "2", "--threads-per-rank", "1", "--", "bench-comm", "--sizes", str(size),
               "--iters", "10"])
    row = [l for l in out.splitlines() if l.startswith("0: ") and not l.startswith("0: #")][-1].split()
    return float(row[3]) / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default=str(ROOT / "build/bin/slipway-engine"))
    ap.add_argument("--work", default=str(ROOT / "build/bench/dist"))
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--models", default=",".join(MODELS))
    a = ap.parse_args()
    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    blas = subprocess.run(["update-alternatives", "--query", "libblas.so.3-x86_64-linux-gnu"], capture_output=True,
                          text=True).stdout
    blas = next((l.split(": ", 1)[1] for l in blas.splitlines() if l.startswith("Value:")), "unknown")
    print(f"BLAS: {blas} (OPENBLAS_NUM_THREADS=1, OMP_NUM_THREADS=1 in every process); 2 cores; Gloo on loopback; per-rank batch fixed; median step time over {a.steps} steps "
          f"after {a.warmup} warm-up\n")
    print(f"{'model':6} {'side':8} | {'t1 ms':>7} {'t2 ms':>7} {'tpar ms':>7} | {'eff t1/t2':>9} {'bound t1/tpar':>13} | "
          f"{'allreduce ms':>12} {'overlap hid':>11} | {'2-rank step/s':>13}")
    print("-" * 118)
    results = {}
    for name in a.models.split(","):
        s = MODELS[name]
        t_t1, t_t2, t_par, params = torch_side(a.engine, s, a.steps, a.warmup)
        e_t1, e_t2, e_par = engine_side(a.engine, work, name, s, a.steps, a.warmup)
        ar = allreduce_seconds(a.engine, params)
        for side, (t1, t2, tpar) in (("engine", (e_t1, e_t2, e_par)), ("torchDDP", (t_t1, t_t2, t_par))):
            hid = max(0.0, min(1.0, 1 - (t2 - tpar) / ar)) if ar > 0 else 0.0
            results[(name, side)] = t1 / t2
            print(f"{name:6} {side:8} | {t1 * 1e3:7.1f} {t2 * 1e3:7.1f} {tpar * 1e3:7.1f} | {t1 / t2:9.2f} {t1 / tpar:13.2f} | "
                  f"{ar * 1e3:12.1f} {100 * hid:10.0f}% | {1 / t2:13.2f}")
        print(f"{name:6} {'ratio':8} | engine/torch: efficiency {results[(name, 'engine')] / results[(name, 'torchDDP')]:.2f}x, "
              f"2-rank step rate {t_t2 / e_t2:.2f}x; {params} parameters, gradient {params * 4 / 2**20:.1f} MiB")
    print("\neff = t1 / t2 at equal work per rank (1.0 = perfect scaling). bound = t1 / tpar: the efficiency two ranks "
          "could reach here with free communication (2 cores, shared memory bandwidth). overlap hid = 1 - (t2 - tpar) / "
          "allreduce time, clamped to [0, 1].")


if __name__ == "__main__":
    main()
