#!/usr/bin/env python3
"""Reference encodings from the Hugging Face `tokenizers` library (the Rust core, through its Python package
from PyPI) for any tokenizer.json. Run it with a python that has the library: DIR/python after
tests/reference/install.sh DIR, or the venv that tests/reference/venv.sh makes.

Golden mode (default):
  golden.py --tokenizer PATH --name NAME [--corpus tests/data/tokenizer/corpus.jsonl]
            [--out-dir tests/data/tokenizer] [--special-lines 200]
writes, one line per corpus line, same order:
  golden-NAME.jsonl          {"ids":[...]}  encode(text, add_special_tokens=False)
  golden-NAME-special.jsonl  {"ids":[...]}  encode(text, add_special_tokens=True), first --special-lines lines only
  golden-NAME-decoded.jsonl  {"text":"..."} decode(ids of golden-NAME, skip_special_tokens=False)
  golden-NAME.meta.json      sha256 of the inputs, the library's version, counts

Bench mode:
  golden.py --bench --tokenizer PATH [--name NAME] [--corpus ...] [--repeat 3]
prints one JSON object: {"name", "mb_per_s_single", "mb_per_s_batch", "mb_per_s_batch_1thread", "bytes", ...}
(MB = 10^6 bytes of UTF-8 input; best of --repeat runs, so the library's word cache is warm). "single" calls
encode() line by line (each call crosses the Python binding: a microsecond or two); "batch" is one
encode_batch() over the whole corpus, which the library parallelizes with rayon over all cores unless
RAYON_NUM_THREADS is set; "batch_1thread" is encode_batch() in a child process with RAYON_NUM_THREADS=1
TOKENIZERS_PARALLELISM=false: the library's own single-core speed without the per-call binding overhead.
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time

import tokenizers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LIBRARY = f"tokenizers {tokenizers.__version__} (Hugging Face tokenizers, Python package)"

# The corpus's escaping policy (make_corpus.py): no raw U+007F..U+009F, U+00AD, U+2028, U+2029 or U+FEFF.
LINE_BREAKERS = re.compile("[\u007f-\u009f\u00ad\u2028\u2029\ufeff]")


def json_line(obj):
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return LINE_BREAKERS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("".join(json_line(row) + "\n" for row in rows))


def read_corpus(path):
    with open(path, encoding="utf-8", newline="") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    texts = []
    for i, line in enumerate(lines):
        text = json.loads(line).get("text")
        if not isinstance(text, str):
            raise SystemExit(f'{path}:{i + 1}: no "text" string')
        texts.append(text)
    return texts


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def golden(a, tok):
    texts = read_corpus(a.corpus)
    ids = [tok.encode(t, add_special_tokens=False).ids for t in texts]
    # Cross-check: encode_batch must agree with one-by-one encode.
    for i, e in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
        if e.ids != ids[i]:
            raise SystemExit(f"golden.py: encode_batch differs from encode on line {i + 1}")
    n_special = min(a.special_lines, len(texts))
    special = [tok.encode(texts[i], add_special_tokens=True).ids for i in range(n_special)]
    decoded = [tok.decode(x, skip_special_tokens=False) for x in ids]
    round_trip = sum(d == t for d, t in zip(decoded, texts))

    os.makedirs(a.out_dir, exist_ok=True)
    base = os.path.join(a.out_dir, f"golden-{a.name}")
    write_jsonl(f"{base}.jsonl", [{"ids": x} for x in ids])
    write_jsonl(f"{base}-special.jsonl", [{"ids": x} for x in special])
    write_jsonl(f"{base}-decoded.jsonl", [{"text": x} for x in decoded])

    tokens = sum(len(x) for x in ids)
    special_differs = sum(x != ids[i] for i, x in enumerate(special))
    meta = {
        "name": a.name,
        "tokenizer_json_sha256": sha256(a.tokenizer),
        "corpus_sha256": sha256(a.corpus),
        "corpus_lines": len(texts),
        "special_lines": n_special,
        "tokens": tokens,
        "vocab_size_with_added": tok.get_vocab_size(with_added_tokens=True),
        "decode_roundtrip_exact_lines": round_trip,
        "special_lines_differing_from_plain": special_differs,
        "library": LIBRARY,
    }
    with open(f"{base}.meta.json", "w", encoding="utf-8") as f:
        f.write(json.dumps(meta, indent=2) + "\n")
    print(f"golden.py: {a.name}: {len(texts)} lines, {tokens} tokens, decode(encode(x)) == x on "
          f"{round_trip}/{len(texts)} lines, add_special_tokens changes {special_differs}/{n_special} lines "
          f"-> {base}*.jsonl", file=sys.stderr)


def bench(a, tok):
    texts = read_corpus(a.corpus)
    size = sum(len(t.encode("utf-8")) for t in texts)

    def time_batch():
        best = float("inf")
        for _ in range(a.repeat):
            start = time.perf_counter()
            tok.encode_batch(texts, add_special_tokens=False)
            best = min(best, time.perf_counter() - start)
        return best

    if a.batch_only:  # the child run with a 1-thread rayon pool (or a caller's environment)
        tok.encode_batch(texts[:200], add_special_tokens=False)  # warm-up
        print(json.dumps({"seconds": time_batch()}))
        return

    for t in texts[:200]:  # warm-up
        tok.encode(t, add_special_tokens=False)
    tokens, best_single = 0, float("inf")
    for _ in range(a.repeat):
        start = time.perf_counter()
        tokens = sum(len(tok.encode(t, add_special_tokens=False)) for t in texts)
        best_single = min(best_single, time.perf_counter() - start)
    best_batch = time_batch()

    # encode_batch restricted to one thread, in a child process: the rayon pool's size is fixed when the pool
    # first starts, so it cannot change here. Unlike "single" it has no per-call binding overhead, so it is the
    # fairest single-core figure of the library itself.
    env = dict(os.environ, RAYON_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    child = subprocess.run([sys.executable, os.path.abspath(__file__), *sys.argv[1:], "--batch-only"],
                           env=env, capture_output=True, text=True, check=True).stdout
    batch_1 = json.loads(child.strip().splitlines()[-1])["seconds"]

    print(json.dumps({
        "name": a.name,
        "mb_per_s_single": round(size / 1e6 / best_single, 3),
        "mb_per_s_batch": round(size / 1e6 / best_batch, 3),
        "mb_per_s_batch_1thread": round(size / 1e6 / batch_1, 3),
        "bytes": size,
        "lines": len(texts),
        "tokens": tokens,
        "seconds_single": round(best_single, 3),
        "seconds_batch": round(best_batch, 3),
        "seconds_batch_1thread": round(batch_1, 3),
        "repeat": a.repeat,
        "batch_threads": os.environ.get("RAYON_NUM_THREADS") or "rayon default (all cores)",
        "library": LIBRARY,
    }, separators=(",", ":")))


def main():
    p = argparse.ArgumentParser(description="Reference encodings (golden files) or throughput of the HF "
                                            "tokenizers library for a tokenizer.json.")
    p.add_argument("--tokenizer", required=True, help="tokenizer.json")
    p.add_argument("--name", help="NAME in the output files' names (bench: default the tokenizer's folder)")
    p.add_argument("--corpus", default=os.path.join(ROOT, "tests", "data", "tokenizer", "corpus.jsonl"))
    p.add_argument("--out-dir", default=os.path.join(ROOT, "tests", "data", "tokenizer"))
    p.add_argument("--special-lines", type=int, default=200, help="lines encoded with special tokens too")
    p.add_argument("--bench", action="store_true", help="measure throughput instead of writing golden files")
    p.add_argument("--repeat", type=int, default=3, help="bench: timed runs per figure (best is kept)")
    p.add_argument("--batch-only", action="store_true", help=argparse.SUPPRESS)  # bench's child run
    a = p.parse_args()
    if a.name is None:
        if not a.bench:
            p.error("--name is required (except with --bench)")
        # .../tokenizers/llama3/tokenizer.json -> "llama3"
        folder = os.path.basename(os.path.dirname(os.path.abspath(a.tokenizer)))
        a.name = re.sub(r"[^A-Za-z0-9_.-]", "_", folder) or "tokenizer"
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", a.name):
        p.error("--name must match [A-Za-z0-9_.-]+")
    if a.special_lines < 0 or a.repeat < 1:
        p.error("--special-lines must be >= 0 and --repeat >= 1")
    tok = tokenizers.Tokenizer.from_file(a.tokenizer)
    (bench if a.bench else golden)(a, tok)


if __name__ == "__main__":
    main()
