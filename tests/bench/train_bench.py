#!/usr/bin/python3
"""Benchmark (not a test): tokens/s and peak RSS of `slipway-engine train` against what else one would run on a
CPU, in one invocation, at two sizes of full training and one LoRA size:
  torch 1.13  a plain-PyTorch loop (torch_train_loop.py: same model shape, batch, AdamW fp32) on the host's
              python3, the torch the engine's LibTorch is (Debian 12);
  torch 2.x   the same loop in the forky root (tests/compat: Debian's torch 2.14), the torch HF runs on, so
              engine/HF is not read as engine/old-torch;
  HF          transformers' Trainer (hf_trainer_loop.py; with a PEFT LoRA model on the LoRA row, the same
              r/alpha/targets as the engine's) in the forky root's pinned venv (tests/reference/requirements.txt),
              on the very model folder the engine trains (written by `slipway-engine init-model`) and the
              engine's batches in the engine's order: the first step's loss of the two is printed as a check.
One thread each, plus this machine's one-thread matrix-product rate (host and root) and the model FLOP/s each
achieves as a share of it. Prints tables of the figures and of the engine's ratio to each.

usage: tests/bench/train_bench.py [--engine build/bin/slipway-engine] [--work build/bench/train] [--scale X]
                                  [--blas-threads N] [--root ~/.cache/slipway/torch2/forky-root] [--only NAME]

One thread each means one BLAS thread too: Debian's OpenBLAS (the pthread build) starts one thread per core
whatever torch.set_num_threads or --threads say, so its matrix products (and the measured matmul rate) would
run on both cores of this machine. The bench sets OPENBLAS_NUM_THREADS for every process it measures, in the
root too (--blas-threads 0 leaves the library's default, as measured before this option existed). Without the
forky root (make it with `TORCH2_SUITE=forky tests/compat/torch2.sh CACHE SOURCE root`) the two root columns
are left empty.
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
from torch_train_loop import llama2c_hidden  # noqa: E402

IN_ROOT = ROOT / "tests/compat/in_root.sh"
SRC_IN_ROOT = pathlib.PurePosixPath("/src/slipway")  # where in_root.sh mounts this tree
TMP_IN_ROOT = pathlib.PurePosixPath("/tmp/slipway-train-bench")  # the root's own /tmp: it is written there

LORA = dict(r=8, alpha=16, targets=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
SIZES = {
    # name: dim, layers, heads, vocab, seq, batch, timed steps, LoRA (None: full weights)
    "tiny": dict(dim=64, layers=2, heads=4, vocab=512, seq=64, batch=4, steps=300, lora=None),
    "15M": dict(dim=288, layers=6, heads=6, vocab=32000, seq=256, batch=8, steps=8, lora=None),
    "15M-lora": dict(dim=288, layers=6, heads=6, vocab=32000, seq=256, batch=8, steps=8, lora=LORA),
}
COLUMNS = ("engine", "torch1", "torch2", "hf")

# run_measured's go-between: a fresh interpreter forks the command and reports wait4's ru_maxrss on its last
# stderr line. Forked from this process (torch loaded, ~120 MB resident), the command's peak would never read
# below this process's size: Linux carries the resident set at exec into the new program's ru_maxrss.
MEASURE = """import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
sys.stderr.write("\\nSLIPWAY_MAXRSS_KB %d\\n" % usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_measured(cmd):
    """Runs cmd; returns (stdout, peak RSS of that very child in MB, from wait4's rusage)."""
    r = subprocess.run(["/usr/bin/python3", "-S", "-c", MEASURE, *cmd], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{cmd[0]} failed:\n{r.stderr[-3000:]}")
    return r.stdout, int(r.stderr.rsplit("SLIPWAY_MAXRSS_KB ", 1)[1]) / 1024


def json_line(out, what):
    """The last JSON object line of `out`: torch in the root prints UCX and cpuinfo noise around it."""
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                pass
    sys.exit(f"{what}: no JSON line in its output:\n{out[-3000:]}")


class Root:
    """The forky root (torch 2.x, transformers, the pinned venv with peft): commands run in it by in_root.sh with
    this tree at /src/slipway, read-only, and the environment cleared (OPENBLAS_NUM_THREADS is passed again)."""

    def __init__(self, path, blas_env):
        self.path, self.blas_env = pathlib.Path(path), blas_env
        self.venv_python = None

    def available(self):
        return (self.path / ".slipway-packages").exists()

    def run(self, *cmd, check=True):
        env = [f"{k}={v}" for k, v in self.blas_env.items()]
        r = subprocess.run(["bash", str(IN_ROOT), str(self.path), str(ROOT), "env", *env, *map(str, cmd)],
                           capture_output=True, text=True)
        if check and r.returncode != 0:
            sys.exit(f"in the root, {' '.join(map(str, cmd))} failed:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
        return r.stdout

    def venv(self):
        """The venv of tests/reference/requirements.txt in the root (made on first use; pip needs PyPI then)."""
        if self.venv_python is None:
            out = self.run("bash", SRC_IN_ROOT / "tests/reference/venv.sh", SRC_IN_ROOT / "tests/reference/requirements.txt",
                           "/usr/bin/python3")
            self.venv_python = pathlib.PurePosixPath(out.strip().splitlines()[-1]) / "bin/python"
        return self.venv_python

    def host_path(self, inside):
        return self.path / pathlib.PurePosixPath(inside).relative_to("/")


def matmul_gflops(run):
    code = ("import json,torch,time;torch.set_num_threads(1);n=2048;a=torch.randn(n,n);b=torch.randn(n,n);a@b;"
            "t=time.perf_counter();[a@b for _ in range(4)];s=time.perf_counter()-t;print(json.dumps({'gflops':4*2*n**3/s/1e9}))")
    return json_line(run("/usr/bin/python3", "-c", code), "matmul rate")["gflops"]


def package_version(run, package):
    return run("dpkg-query", "-W", "-f=${Version}", package, check=False).strip() or "not installed"


def blas_of(run):
    """Which libblas.so.3 the alternatives system selects, and the OpenBLAS package's version."""
    query = run("update-alternatives", "--query", "libblas.so.3-x86_64-linux-gnu")
    value = next((l.split(": ", 1)[1] for l in query.splitlines() if l.startswith("Value:")), "unknown")
    return f"{value} (libopenblas0-pthread {package_version(run, 'libopenblas0-pthread')})"


def torch_of(run):
    """torch.__version__ (Debian's 1.13 says 1.13.0a0) and the python3-torch package it came in."""
    code = "import json, torch; print(json.dumps({'torch': torch.__version__}))"
    return f"{json_line(run('/usr/bin/python3', '-c', code), 'torch version')['torch']} (python3-torch " \
           f"{package_version(run, 'python3-torch')})"


def host_run(*cmd, check=True):
    r = subprocess.run(list(map(str, cmd)), capture_output=True, text=True)
    if check and r.returncode != 0:
        sys.exit(f"{cmd[0]} failed:\n{r.stderr[-3000:]}")
    return r.stdout


def flops_per_token(s, hidden):
    """Model FLOPs of one trained token: forward 2N, input gradients 2N, weight gradients 2N (full training only:
    LoRA's frozen base has none; its adapters' own < 1 % left out), N the matrix-product weights (the embedding
    lookup is not one), plus attention scores 12 L T d."""
    d, layers, vocab, seq = s["dim"], s["layers"], s["vocab"], s["seq"]
    matmul_params = layers * (4 * d * d + 3 * d * hidden) + vocab * d
    return (4 if s["lora"] else 6) * matmul_params + 12 * layers * seq * d


def write_engine_config(engine, work, name, s, max_steps, tokenizer):
    """A model folder written by `init-model` (HF's layout: the HF column loads the same weights) and a run
    config training it, under work/name; returns the run config's path."""
    folder = work / name
    folder.mkdir(parents=True, exist_ok=True)
    hidden = llama2c_hidden(s["dim"])
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "vocab_size": s["vocab"], "hidden_size": s["dim"], "intermediate_size": hidden, "num_hidden_layers": s["layers"],
        "num_attention_heads": s["heads"], "max_position_embeddings": s["seq"], "tie_word_embeddings": False}))
    shutil.rmtree(folder / "model", ignore_errors=True)
    host_run(engine, "init-model", "--config", folder / "config.json", "--out", folder / "model", "--seed", "0",
             "--dtype", "float32")
    lora = s["lora"]
    adapter = ({"method": "lora", "r": lora["r"], "lora_alpha": lora["alpha"], "lora_dropout": 0.0,
                "target_modules": lora["targets"]} if lora else {"method": "full"})
    config = {
        "name": f"bench-{name}",
        "model": {"path": str(folder / "model"), "dtype": "float32"},
        "tokenizer": {"path": str(tokenizer)},
        # A cache folder of each size's own: the HF column reads the one cache in it.
        "data": {"train_file": str(ROOT / "resources/demo/corpus.jsonl"), "block_size": s["seq"], "split": "concat",
                 "validation_split_percentage": 0, "cache_dir": str(folder / "cache")},
        "training": {"learning_rate": 1e-3, "weight_decay": 0.0, "max_steps": max_steps, "warmup_steps": 0,
                     "per_device_train_batch_size": s["batch"], "logging_steps": 1, "save_steps": 100000,
                     "seed": 42, "output_dir": str(folder / "out"), "overwrite_output_dir": True},
        "adapter": adapter,
        "distributed": {"backend": "gloo", "bucket_mb": 25},
        "slurm": {"gpus_per_node": 0},
    }
    (folder / "run.json").write_text(json.dumps(config))
    return folder / "run.json"


def engine_run(engine, work, name, s, steps, warmup, tokenizer):
    """(tokens/s, peak RSS MB, the first step's loss, SwiGLU width)."""
    folder = work / name
    write_engine_config(engine, work, name, s, warmup + steps, tokenizer)
    hidden = llama2c_hidden(s["dim"])
    # Prepare once outside the measured run so every column times only training.
    host_run(engine, "prepare", folder / "run.json")
    out, rss = run_measured([engine, "train", "--threads", "1", str(folder / "run.json")])
    events = [json.loads(line.split(":::MLLOG ", 1)[1]) for line in out.splitlines() if ":::MLLOG " in line]
    rates = [e["value"] for e in events if e["key"] == "tokens_per_second"]
    first_loss = next(e["value"] for e in events if e["key"] == "train_loss" and e["metadata"].get("step_num") == 1)
    return statistics.median(rates[warmup:]), rss, first_loss, hidden


def loop_args(s, steps, warmup):
    args = ["--steps", str(steps), "--warmup", str(warmup)]
    for k in ("dim", "layers", "heads", "vocab", "seq", "batch"):
        args += [f"--{k}", str(s[k])]
    if s["lora"]:
        args += ["--lora-r", str(s["lora"]["r"]), "--lora-alpha", str(s["lora"]["alpha"])]
    return args


def torch_run(s, steps, warmup):
    """The plain loop on the host's torch: (tokens/s, its own peak RSS MB)."""
    out, _ = run_measured(["/usr/bin/python3", str(HERE / "torch_train_loop.py"), *loop_args(s, steps, warmup)])
    r = json_line(out, "torch_train_loop.py")
    return r["tokens_per_second"], r["peak_rss_mb"]


def root_torch_run(root, s, steps, warmup):
    """The plain loop on the root's torch: (tokens/s, peak RSS MB as the python process reports it: in_root.sh's
    unshare and chroot stand between wait4 and it)."""
    r = json_line(root.run("/usr/bin/python3", SRC_IN_ROOT / "tests/bench/torch_train_loop.py",
                           *loop_args(s, steps, warmup)), "torch_train_loop.py in the root")
    return r["tokens_per_second"], r["peak_rss_mb"]


def hf_run(root, work, name, s, steps, warmup):
    """HF Trainer (+ PEFT on a LoRA size) in the root on the engine's model folder and token cache, both copied
    into the root's /tmp: the result's JSON (tokens/s, its own peak RSS, losses, versions)."""
    inside = TMP_IN_ROOT / name
    host = root.host_path(inside)
    shutil.rmtree(host, ignore_errors=True)
    host.mkdir(parents=True)
    shutil.copytree(work / name / "model", host / "model")
    shutil.copytree(work / name / "cache", host / "cache")
    args = ["--model", inside / "model", "--cache", inside / "cache", "--out", inside / "hf", "--batch", s["batch"],
            "--steps", steps, "--warmup", warmup, "--lr", "1e-3", "--weight-decay", "0", "--seed", "42"]
    if s["lora"]:
        args += ["--lora-r", s["lora"]["r"], "--lora-alpha", s["lora"]["alpha"]]
    r = json_line(root.run(root.venv(), SRC_IN_ROOT / "tests/bench/hf_trainer_loop.py", *args), "hf_trainer_loop.py")
    shutil.rmtree(host, ignore_errors=True)
    return r


def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"


def short_version(text):
    """"2.14.1+debian (python3-torch ...)" -> "2.14"; "... (libopenblas0-pthread 0.3.34+ds-2)" -> "0.3.34"."""
    found = re.findall(r"\d+\.\d+(?:\.\d+)?", text)
    if not found:
        return "?"
    parts = found[-1 if "openblas" in text else 0].split(".")
    return ".".join(parts[:3] if "openblas" in text else parts[:2])


def print_table(title, labels, under, rows):
    """rows: name -> the 4 columns' figures (None: not measured), printed with the engine's ratio to the other
    three. `under`: a second header line (which torch and BLAS each column ran on)."""
    w = 12
    print(f"{title:12}| " + "".join(f"{x:>{w}}" for x in labels) + " | " +
          "".join(f"{'e/' + x.split()[-1]:>{w - 2}}" for x in labels[1:]))
    print(f"{'':12}| " + "".join(f"{x:>{w}}" for x in under) + " |")
    print("-" * (14 + 4 * w + 3 + 3 * (w - 2)))
    for name, cells in rows.items():
        figures = "".join(f"{v:>{w}.0f}" if v else f"{'-':>{w}}" for v in cells)
        print(f"{name:12}| {figures} | " + "".join(f"{ratio(cells[0], v):>{w - 2}}" for v in cells[1:]))
    print()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default=str(ROOT / "build/bin/slipway-engine"))
    ap.add_argument("--work", default=str(ROOT / "build/bench/train"))
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies each size's timed steps")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--blas-threads", type=int, default=1,
                    help="OPENBLAS_NUM_THREADS for the matmul rates and every column (0: library default)")
    ap.add_argument("--root", default=str(pathlib.Path.home() / ".cache/slipway/torch2/forky-root"),
                    help="the forky root of tests/compat/torch2_root.sh (torch 2.x, transformers, peft's venv)")
    ap.add_argument("--only", action="append", choices=list(SIZES), help="measure only this size (repeatable)")
    a = ap.parse_args()
    blas_env = {"OPENBLAS_NUM_THREADS": str(a.blas_threads)} if a.blas_threads > 0 else {}
    os.environ.pop("OPENBLAS_NUM_THREADS", None)
    os.environ.update(blas_env)  # inherited by every process measured on the host
    engine = str(pathlib.Path(a.engine).resolve())
    work = pathlib.Path(a.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    sizes = {n: s for n, s in SIZES.items() if not a.only or n in a.only}
    root = Root(a.root, blas_env)
    has_root = root.available()

    # A tokenizer small enough for the tiny model's 512-token vocabulary.
    tokenizer512 = work / "tokenizer512.json"
    if not tokenizer512.exists():
        host_run(engine, "tokenizer", "train", "--corpus", ROOT / "resources/demo/corpus.jsonl", "--vocab-size", "512",
                 "--out", tokenizer512)
    host_blas, host_torch, engine_torch = blas_of(host_run), torch_of(host_run), package_version(host_run, "libtorch-dev")
    peak = {"host": matmul_gflops(host_run)}
    if has_root:
        root_blas, root_torch = blas_of(root.run), torch_of(root.run)
        peak["root"] = matmul_gflops(root.run)
        root.venv()  # made (or found) before anything is timed
    blas_threads = blas_env.get("OPENBLAS_NUM_THREADS", "library default")
    steps_of = {n: max(1, int(s["steps"] * a.scale)) for n, s in sizes.items()}

    results, hf_info, peft_version = {}, None, None
    for name, s in sizes.items():
        tokenizer = tokenizer512 if s["vocab"] < 4096 else ROOT / "resources/demo/tokenizer.json"
        steps = steps_of[name]
        row = dict.fromkeys(COLUMNS, (None, None))
        e_tps, e_rss, e_loss, hidden = engine_run(engine, work, name, s, steps, a.warmup, tokenizer)
        row["engine"] = (e_tps, e_rss)
        row["torch1"] = torch_run(s, steps, a.warmup)
        hf_loss = None
        if has_root:
            row["torch2"] = root_torch_run(root, s, steps, a.warmup)
            hf_info = hf_run(root, work, name, s, steps, a.warmup)
            peft_version = hf_info["peft"] or peft_version
            row["hf"] = (hf_info["tokens_per_second"], hf_info["peak_rss_mb"])
            hf_loss = hf_info["losses"][0]
        results[name] = dict(row=row, fpt=flops_per_token(s, hidden), loss=(e_loss, hf_loss),
                             import_rss=hf_info["import_rss_mb"] if has_root else None)

    print(f"engine      {engine} (host build): LibTorch {engine_torch} (Debian 12); BLAS {host_blas}")
    print(f"torch 1.x   tests/bench/torch_train_loop.py, host /usr/bin/python3: torch {host_torch}; BLAS {host_blas}")
    if has_root:
        hf = hf_info
        peft = f" (+ peft {peft_version} on LoRA rows)" if peft_version else ""
        print(f"torch 2.x   the same loop in the forky root ({a.root}): torch {root_torch}; BLAS {root_blas}")
        print(f"HF          tests/bench/hf_trainer_loop.py in the root's pinned venv: HF Trainer, transformers "
              f"{hf['transformers']}{peft}, optim {hf['optim']}, attention {hf['attention']}; torch and BLAS as torch 2.x")
    else:
        print(f"torch 2.x, HF: no forky root at {a.root}: not measured")
    rates = ", ".join(f"{k} {v:.1f}" for k, v in peak.items())
    print(f"OPENBLAS_NUM_THREADS {blas_threads}, torch threads 1 everywhere; one-thread matmul (2048^3 fp32) GFLOP/s: "
          f"{rates}; timed steps ({'/'.join(sizes)}): {' / '.join(map(str, steps_of.values()))} after {a.warmup} "
          "warm-up; engine and HF: median step rate, the torch loops: mean over the timed steps")
    lora = ", ".join(f"{n}: r {s['lora']['r']}, alpha {s['lora']['alpha']}, dropout 0 on "
                     f"{'/'.join(t.removesuffix('_proj') for t in s['lora']['targets'])}"
                     for n, s in sizes.items() if s["lora"])
    print((f"LoRA {lora}; full weights on the other rows" if lora else "full weights") + "\n")

    t1, b1 = short_version(host_torch), short_version(host_blas)
    t2, b2 = (short_version(root_torch), short_version(root_blas)) if has_root else ("2.x", "?")
    labels = ["engine", f"torch {t1}", f"torch {t2}", "HF"]
    under = [f"{t}/{b}" for t, b in ((short_version(engine_torch), b1), (t1, b1), (t2, b2), (t2, b2))]
    print_table("tokens/s", labels, under, {n: [r["row"][c][0] for c in COLUMNS] for n, r in results.items()})
    print_table("peak RSS MB", labels, under, {n: [r["row"][c][1] for c in COLUMNS] for n, r in results.items()})
    print(f"{'% of matmul':12}| " + "".join(f"{x:>12}" for x in labels) + "   (engine, torch 1.x: of the host's "
          "matmul rate; torch 2.x, HF: of the root's)\n" + "-" * 58)
    for name, r in results.items():
        cells = []
        for c in COLUMNS:
            tps, rate = r["row"][c][0], peak.get("host" if c in ("engine", "torch1") else "root")
            cells.append(f"{100 * tps * r['fpt'] / 1e9 / rate:11.1f}%" if tps and rate else f"{'-':>12}")
        print(f"{name:12}| " + "".join(cells))
    if has_root:
        print("\nSame weights and batches, engine vs HF, first step's loss: " + "; ".join(
            f"{n} {r['loss'][0]:.6f} vs {r['loss'][1]:.6f}" for n, r in results.items()) +
              ".\nHF's peak RSS includes importing transformers, its Trainer (+ peft): " +
              ", ".join(f"{n} {r['import_rss']:.0f} MB" for n, r in results.items()) + " before any model.")
    print("\ne/X = engine / column X (tok/s: > 1 is faster; MB: < 1 is smaller); the line under each table's labels: "
          "torch (LibTorch) / OpenBLAS version. % of matmul = model FLOP/s (6 x matmul params, LoRA 4 x, + "
          "attention) / the one-thread matmul rate above.")


if __name__ == "__main__":
    main()
