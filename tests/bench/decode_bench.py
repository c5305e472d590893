#!/usr/bin/python3
"""Benchmark (not a test): `slipway-engine generate` greedy decoding (KV cache, model/decoding.h) against a
plain-PyTorch KV-cache loop (torch_decode_loop.py) on the same HF folder, one thread each, in one
invocation. Per model size: decode tokens/s (after the first token) of both, the ratio, and whether the two
produced the same greedy tokens. Prints a table.

usage: tests/bench/decode_bench.py [--engine build/bin/slipway-engine] [--work build/bench/decode] [--new-tokens N]
"""
import argparse
import json
import pathlib
import random
import statistics
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
from dist_bench import BENCH_ENV  # noqa: E402

SIZES = {
    "small (hidden 256, 4 layers)": dict(hidden_size=256, intermediate_size=688, num_hidden_layers=4,
                                         num_attention_heads=8, num_key_value_heads=4),
    "medium (hidden 768, 8 layers)": dict(hidden_size=768, intermediate_size=2048, num_hidden_layers=8,
                                          num_attention_heads=12, num_key_value_heads=4),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default=str(ROOT / "build/bin/slipway-engine"))
    ap.add_argument("--work", default=str(ROOT / "build/bench/decode"))
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    prompt = [random.Random(1).randrange(4096) for _ in range(32)]
    rows = []
    for name, size in SIZES.items():
        folder = work / name.split()[0]
        config = dict(vocab_size=4096, max_position_embeddings=512, initializer_range=0.1, **size)
        (work / "config.json").write_text(json.dumps(config))
        subprocess.run([a.engine, "init-model", "--config", str(work / "config.json"), "--out", str(folder)],
                       check=True, capture_output=True)
        (work / "prompt.jsonl").write_text(json.dumps({"ids": prompt}) + "\n")
        ours, theirs = [], []
        for _ in range(a.repeats):
            r = subprocess.run([a.engine, "generate", "--model", str(folder), "--tokenizer",
                                str(ROOT / "resources/demo/tokenizer.json"), "--prompts", str(work / "prompt.jsonl"),
                                "--max-new-tokens", str(a.new_tokens), "--threads", "1"],
                               check=True, capture_output=True, text=True, env=BENCH_ENV)
            ours.append(json.loads(r.stdout.splitlines()[-1]))
            t = subprocess.run(["/usr/bin/python3", str(HERE / "torch_decode_loop.py"), "--model", str(folder),
                                "--prompt", json.dumps(prompt), "--new-tokens", str(a.new_tokens)],
                               check=True, capture_output=True, text=True, env=BENCH_ENV)
            theirs.append(json.loads(t.stdout))
        mine = statistics.median(o["tokens_per_s"] for o in ours)
        ref = statistics.median(o["tokens_per_s"] for o in theirs)
        rows.append((name, mine, ref, ours[0]["ids"] == theirs[0]["ids"]))
    print(f"Greedy decoding, prompt 32 tokens, {a.new_tokens} new, 1 thread, median of {a.repeats}")
    print(f"{'model':32s} {'engine tok/s':>12s} {'torch tok/s':>12s} {'ratio':>6s} {'same tokens':>12s}")
    for name, mine, ref, same in rows:
        print(f"{name:32s} {mine:12.1f} {ref:12.1f} {mine / ref:6.2f} {str(same):>12s}")


if __name__ == "__main__":
    main()
