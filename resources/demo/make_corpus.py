#!/usr/bin/env python3
"""Builds resources/demo/corpus.jsonl, the demo corpus of the "This computer" profile, from Debian's
fortune packages: fortunes-ru (Russian, GPL-2) and fortunes (English, BSD fortune-mod data). One JSON
object a line: {"text": ..., "domain": "fortunes-ru/<file>" | "fortunes/<file>"}. Deterministic: files in
sorted order, Russian and English interleaved, stopped at a byte budget.

Usage: sudo apt-get install fortunes-ru fortunes && resources/demo/make_corpus.py [BUDGET_BYTES]
"""
import json
import pathlib
import sys

ROOT = pathlib.Path("/usr/share/games/fortunes")
# English files with plain quotations (the .u8 variants are UTF-8).
ENGLISH = ["computers", "science", "wisdom", "work", "literature", "people", "education", "fortunes",
           "definitions", "humorists", "law", "linux", "magic", "medicine", "miscellaneous", "platitudes",
           "politics", "songs-poems", "sports", "startrek", "zippy", "goedel", "love", "pets", "food"]


def fortunes(path):
    text = path.read_text(encoding="utf-8", errors="strict")
    for chunk in text.split("\n%\n"):
        chunk = chunk.strip("%\n").rstrip()
        if chunk.strip():
            yield chunk


def main():
    budget = int(sys.argv[1]) if len(sys.argv) > 1 else 1_900_000
    russian = []
    for path in sorted((ROOT / "ru").iterdir()):
        if path.suffix or not path.is_file():
            continue
        try:
            russian += [(f"fortunes-ru/{path.name}", t) for t in fortunes(path)]
        except UnicodeDecodeError:
            continue  # a few files are not UTF-8: skip them rather than guess
    english = []
    for name in ENGLISH:
        path = ROOT / f"{name}.u8"
        if path.exists():
            english += [(f"fortunes/{name}", t) for t in fortunes(path)]
    out = pathlib.Path(__file__).with_name("corpus.jsonl")
    written = lines = 0
    with out.open("w", encoding="utf-8") as f:
        for i in range(max(len(russian), len(english))):
            for source in (russian, english):
                if i < len(source):
                    domain, text = source[i]
                    line = json.dumps({"text": text, "domain": domain}, ensure_ascii=False) + "\n"
                    if written + len(line.encode()) > budget:
                        print(f"{out}: {lines} documents, {written} bytes", file=sys.stderr)
                        return
                    f.write(line)
                    written += len(line.encode())
                    lines += 1
    print(f"{out}: {lines} documents, {written} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
