#!/usr/bin/env python3
"""Encodes a list of strings with the Hugging Face tokenizers library (its Python package from PyPI), for
references that need token ids without the engine: eval_reference.py and adapt_reference.py import encode_all,
scripts run it as a command:

  encode_strings.py TOKENIZER.json IN.json OUT.json

IN.json is a JSON list of strings; OUT.json gets the list of their ids, encode(text, add_special_tokens=False)
(encode_all's add_special_tokens=True: with what the tokenizer's post-processor puts around a text).
Run it with a python that has the library (REFERENCE_DIR/python after tests/reference/install.sh REFERENCE_DIR).
"""
import functools
import json
import sys

import tokenizers


@functools.lru_cache(maxsize=8)
def load(tokenizer_path):
    return tokenizers.Tokenizer.from_file(tokenizer_path)


def encode_all(tokenizer_path, texts, add_special_tokens=False):
    tok = load(tokenizer_path)
    return [tok.encode(t, add_special_tokens=add_special_tokens).ids for t in texts]


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: encode_strings.py TOKENIZER.json IN.json OUT.json")
    tokenizer_path, in_path, out_path = sys.argv[1:]
    with open(in_path, encoding="utf-8") as f:
        texts = json.load(f)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(encode_all(tokenizer_path, texts), f, separators=(",", ":"))


if __name__ == "__main__":
    main()
