#!/usr/bin/python3
"""Benchmark (not a test): `slipway-engine prepare` throughput on a ~100 MB JSONL file (the tokenizer
corpus repeated), one thread and all threads, against the HF tokenizers library encoding the same texts
(encode_batch, one thread and all threads; REFERENCE_DIR/python runs tests/reference/golden.py) in the same
invocation. Prints MB/s and ratios.

usage: tests/bench/prepare_bench.py [--engine build/bin/slipway-engine] [--reference-dir build/reference] [--mb 100]
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default=str(ROOT / "build/bin/slipway-engine"))
    ap.add_argument("--reference-dir", default=str(ROOT / "build/reference"))
    ap.add_argument("--work", default=str(ROOT / "build/bench/prepare"))
    ap.add_argument("--mb", type=float, default=100)
    a = ap.parse_args()
    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    tokenizer = pathlib.Path(a.reference_dir) / "tokenizers/llama3/tokenizer.json"
    python = pathlib.Path(a.reference_dir) / "python"
    if not tokenizer.exists() or not python.exists():
        raise SystemExit(f"{tokenizer} missing: run tests/reference/install.sh {a.reference_dir}")
    corpus = (ROOT / "tests/data/tokenizer/corpus.jsonl").read_bytes()
    data = work / "big.jsonl"
    if not data.exists() or data.stat().st_size < a.mb * 1e6:
        with data.open("wb") as f:
            while f.tell() < a.mb * 1e6:
                f.write(corpus)
    size_mb = data.stat().st_size / 1e6
    cores = os.cpu_count() or 1
    print(f"{data}: {size_mb:.1f} MB JSONL, Llama-3 tokenizer, paragraph blocks of 1024, {cores} cores\n")
    rows = []
    for threads in (1, cores):
        cache = work / f"cache{threads}"
        shutil.rmtree(cache, ignore_errors=True)
        config = {"name": "prepare-bench", "model": {"path": str(work / "no-model")}, "tokenizer": {"path": str(tokenizer)},
                  "data": {"train_file": str(data), "block_size": 1024, "split": "paragraph", "validation_split_percentage": 0,
                           "cache_dir": str(cache)}, "training": {"output_dir": str(work / "out")}, "slurm": {"gpus_per_node": 0}}
        path = work / f"run{threads}.json"
        path.write_text(json.dumps(config))
        start = time.perf_counter()
        subprocess.run([a.engine, "prepare", "--threads", str(threads), "--skip-bad", str(path)], check=True, capture_output=True)
        rows.append((threads, size_mb / (time.perf_counter() - start)))
    # The HF library on the same texts: encode_batch only, one thread and all threads (golden.py --batch-only).
    text_mb = sum(len(json.loads(line)["text"].encode()) for line in data.read_text().splitlines() if line) / 1e6

    def hf_rate(threads):
        env = dict(os.environ)
        if threads == 1:
            env.update(RAYON_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
        out = subprocess.run([str(python), str(ROOT / "tests/reference/golden.py"), "--bench", "--batch-only",
                              "--repeat", "1", "--tokenizer", str(tokenizer), "--corpus", str(data)],
                             capture_output=True, text=True, env=env, check=True).stdout
        return text_mb / json.loads(out.strip().splitlines()[-1])["seconds"]

    hf_one, hf_all = hf_rate(1), hf_rate(cores)
    print(f"(texts are {text_mb:.1f} MB of the JSONL; HF rates are per MB of JSONL for comparability)")
    hf_one, hf_all = hf_one * size_mb / text_mb, hf_all * size_mb / text_mb
    print(f"{'threads':>7} | {'prepare MB/s':>12} | {'HF encode MB/s':>14} | {'ratio':>6}")
    print("-" * 50)
    for threads, rate in rows:
        ref = hf_one if threads == 1 else hf_all
        ratio = f"{rate / ref:5.2f}x" if ref else "   n/a"
        print(f"{threads:7} | {rate:12.2f} | {ref if ref else float('nan'):14.2f} | {ratio}")
    print("\nprepare = read + parse JSONL + tokenize + cut blocks + write the cache, end to end (process start included);\n"
          "HF = encode_batch of the same texts only (no JSON, no writing). ratio > 1: prepare is faster.")


if __name__ == "__main__":
    main()
