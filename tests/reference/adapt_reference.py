#!/usr/bin/env python3
"""Independent reference of `slipway-engine adapt-vocab` and `lep` (Debian's python3-torch; no transformers,
no safetensors package, and no engine tokenizer: the old tokenizer's splits come from the HF tokenizers
library through encode_strings.py; run it with REFERENCE_DIR/python of tests/reference/install.sh, a venv that
has the library and sees Debian's torch).

  adapt_reference.py perturb --model DIR --out DIR --seed N [--embeddings-only] [--chat-template]
      a copy of DIR with perturbed weights (the tests' "instruct" and "trained adapted" models)
  adapt_reference.py adapt-vocab --model DIR --old-tokenizer A --new-tokenizer B --engine-out DIR --work DIR
  adapt_reference.py lep --base DIR --instruct DIR --adapted DIR --method M --engine-out DIR --work DIR
  (--work: where the texts the reference split and their ids are written, to look at when a check fails)

The formulas (engine/adapt/embeddings.h): a new token keeps the old row of the same token (by token string
when both tokenizers write tokens alike, else by the bytes they stand for), else takes the mean of the old
rows of the old tokenizer's split of its text ("\\n" + text with the prefix's ids dropped; per-byte tokens
for bytes that are not UTF-8), else the mean of all rows. LEP: E_out = E_A P with P = I (swap),
pinv(E_B[S]) E_I[S] (overlap) or pinv(C(E_B)) C(E_I) (conversion), then the adapted tokenizer's added
tokens that the instruct tokenizer has take the instruct rows. Least squares here go through the
pseudo-inverse (SVD), not the engine's LAPACK gelsd call.
"""
import argparse
import json
import os
import shutil
import struct
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from encode_strings import encode_all  # noqa: E402
from llama_reference import read_safetensors  # noqa: E402

NAMES = {torch.float32: "F32", torch.bfloat16: "BF16", torch.float16: "F16"}
TORCH_OF = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        raw = t.view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def dtype_of(folder):
    cfg = json.load(open(f"{folder}/config.json"))
    return TORCH_OF[cfg.get("torch_dtype", "float32")]


# --- tokenizers -------------------------------------------------------------------------------------

def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTE_CHAR = bytes_to_unicode()
CHAR_BYTE = {c: b for b, c in BYTE_CHAR.items()}


def mentions_byte_level(spec):
    if not isinstance(spec, dict):
        return False
    if spec.get("type") == "ByteLevel":
        return True
    return any(mentions_byte_level(s) for key in ("decoders", "pretokenizers") for s in spec.get(key) or [])


class Tok:
    def __init__(self, path):
        self.path = path
        doc = json.load(open(path, encoding="utf-8"))
        self.byte_level = mentions_byte_level(doc.get("decoder")) or mentions_byte_level(doc.get("pre_tokenizer"))
        self.id_to_token = {i: t for t, i in doc["model"]["vocab"].items()}
        self.added = {a["id"]: a["content"] for a in doc.get("added_tokens", [])}
        self.id_to_token.update(self.added)
        self.token_to_id = {t: i for i, t in self.id_to_token.items()}
        self.size = max(self.id_to_token) + 1

    def token_bytes(self, i):
        t = self.id_to_token[i]
        if i in self.added:
            return t.encode()
        if self.byte_level:
            return b"".join(bytes([CHAR_BYTE[c]]) if c in CHAR_BYTE else c.encode() for c in t)
        if len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
            return bytes([int(t[3:5], 16)])
        return t.replace("\u2581", " ").encode()

    def byte_token(self, b):
        name = BYTE_CHAR[b] if self.byte_level else f"<0x{b:02X}>"
        return self.token_to_id.get(name)


def encode_logged(tok, texts, work, name):
    ids = encode_all(tok.path, texts)
    os.makedirs(work, exist_ok=True)
    json.dump(texts, open(f"{work}/{name}-in.json", "w", encoding="utf-8"), ensure_ascii=False)
    json.dump(ids, open(f"{work}/{name}-out.json", "w"))
    return ids


def vocab_map(old, new, work):
    """One entry per new id: ("same", [id]) | ("mean", ids) | ("all", [])."""
    same_style = old.byte_level == new.byte_level
    by_bytes = {}
    if not same_style:
        for plain_first in (True, False):
            for i in range(old.size):
                if i not in old.id_to_token or (old.id_to_token[i].startswith("<0x")) == plain_first:
                    continue
                by_bytes.setdefault(old.token_bytes(i), i)
    rows, pending = [], {}
    for i in range(new.size):
        if i not in new.id_to_token:
            rows.append(("all", []))
            continue
        text = new.token_bytes(i)
        found = old.token_to_id.get(new.id_to_token[i]) if same_style else by_bytes.get(text)
        if found is not None:
            rows.append(("same", [found]))
            continue
        rows.append(None)
        pending[i] = text
    texts = []
    for text in pending.values():
        try:
            s = text.decode("utf-8")
        except UnicodeDecodeError:
            continue
        texts += ["\n" + s, s]
    ids = encode_logged(old, ["\n"] + texts, work, "split")
    prefix, encoded = ids[0], dict(zip(texts, ids[1:]))
    for i, text in pending.items():
        try:
            s = text.decode("utf-8")
            got = encoded["\n" + s]
            split = got[len(prefix):] if got[:len(prefix)] == prefix else encoded[s]
        except UnicodeDecodeError:
            split = [t for t in (old.byte_token(b) for b in text) if t is not None]
        rows[i] = ("mean", split) if split else ("all", [])
    return rows


def convert(e, rows):
    e = e.double()
    out = torch.empty(len(rows), e.shape[1], dtype=torch.float64)
    for i, (kind, ids) in enumerate(rows):
        out[i] = e.mean(0) if kind == "all" else e[ids].mean(0)
    return out


# --- checks -----------------------------------------------------------------------------------------

def compare(label, got, want, tolerance):
    diff = (got.double() - want.double()).abs().max().item() if got.numel() else 0.0
    scale = max(1.0, want.double().abs().max().item())
    ok = got.shape == want.shape and diff <= tolerance * scale
    print(f"{label}: shape {list(got.shape)}, max |engine - reference| = {diff:.3e} (tolerance {tolerance * scale:.1e})")
    return ok


def check_folder(engine_out, source_dir, tokenizer, vocab, new_id):
    """Everything but the two matrices: the other tensors equal, vocab_size, bos/eos ids through new_id (an
    old id -> the new id or None), the tokenizer (a JSON value)."""
    ok = True
    cfg, src_cfg = json.load(open(f"{engine_out}/config.json")), json.load(open(f"{source_dir}/config.json"))
    if cfg["vocab_size"] != vocab:
        print(f"config.json vocab_size {cfg['vocab_size']}, expected {vocab}")
        ok = False
    for key in ("bos_token_id", "eos_token_id", "pad_token_id"):
        want = new_id(src_cfg[key]) if key in src_cfg else None
        if cfg.get(key) != want:
            print(f"config.json {key}: {cfg.get(key)}, expected {want}")
            ok = False
        elif want is not None:
            print(f"config.json {key}: {src_cfg[key]} -> {want}")
    if json.load(open(f"{engine_out}/tokenizer.json", encoding="utf-8")) != tokenizer:
        print("tokenizer.json is not the expected tokenizer")
        ok = False
    got, src = read_safetensors(f"{engine_out}/model.safetensors"), read_safetensors(f"{source_dir}/model.safetensors")
    for name, t in src.items():
        if name in ("model.embed_tokens.weight", "lm_head.weight"):
            continue
        if name not in got or not torch.equal(got[name], t):
            print(f"{name}: not carried over unchanged")
            ok = False
    return ok, got


def tolerance_of(dtype):
    return 1e-6 if dtype == torch.float32 else 2.0 ** -8  # fp32: rounding; bf16/fp16: one ulp


def cmd_adapt_vocab(a):
    old, new = Tok(a.old_tokenizer), Tok(a.new_tokenizer)
    rows = vocab_map(old, new, a.work)
    dtype = dtype_of(a.model)
    ok, got = check_folder(a.engine_out, a.model, json.load(open(a.new_tokenizer, encoding="utf-8")), new.size,
                           lambda i: new.token_to_id.get(old.id_to_token.get(i)))
    src = read_safetensors(f"{a.model}/model.safetensors")
    kinds = {k: sum(1 for r in rows if r[0] == k) for k in ("same", "mean", "all")}
    print(f"reference map: {kinds['same']} same, {kinds['mean']} means of sub-tokens, {kinds['all']} means of all")
    for name in ("model.embed_tokens.weight", "lm_head.weight"):
        if name not in src:
            continue
        want = convert(src[name], rows).to(dtype).float()
        ok &= compare(f"adapt-vocab {name}", got[name], want, tolerance_of(dtype))
    return ok


def cmd_lep(a):
    instruct_tok, adapted_tok = Tok(f"{a.instruct}/tokenizer.json"), Tok(f"{a.adapted}/tokenizer.json")
    rows = vocab_map(instruct_tok, adapted_tok, a.work)
    dtype = dtype_of(a.instruct)
    b, i, ad = (read_safetensors(f"{d}/model.safetensors") for d in (a.base, a.instruct, a.adapted))
    copies = [(n, instruct_tok.token_to_id[c]) for n, c in adapted_tok.added.items() if c in instruct_tok.token_to_id]
    # The instruct tokenizer's added tokens the adapted one lacks: appended after the adapted model's rows.
    tokenizer = json.load(open(f"{a.adapted}/tokenizer.json", encoding="utf-8"))
    first = json.load(open(f"{a.adapted}/config.json"))["vocab_size"]
    instruct_doc = json.load(open(f"{a.instruct}/tokenizer.json", encoding="utf-8"))
    extra = [t for t in instruct_doc["added_tokens"] if t["content"] not in adapted_tok.token_to_id]
    for k, t in enumerate(extra):
        tokenizer["added_tokens"].append(dict(t, id=first + k))
    out_ids = {t["content"]: t["id"] for t in tokenizer["added_tokens"]}
    ok, got = check_folder(a.engine_out, a.instruct, tokenizer, first + len(extra), lambda i: adapted_tok.token_to_id.get(
        instruct_tok.id_to_token.get(i), out_ids.get(instruct_tok.id_to_token.get(i))))
    for name in ("model.embed_tokens.weight", "lm_head.weight"):
        if name not in i:
            continue
        eb, ei, ea = b[name].double(), i[name].double(), ad[name].double()
        n = min(eb.shape[0], ei.shape[0])
        if a.method == "swap":
            p = torch.eye(ei.shape[1], dtype=torch.float64)
        elif a.method == "overlap":
            s = sorted(ids[0] for kind, ids in rows if kind == "same" and ids[0] < n)
            p = torch.linalg.pinv(eb[s]) @ ei[s]
        else:
            keep = [r for r in rows if r[0] != "all" and all(j < n for j in r[1])]
            p = torch.linalg.pinv(convert(eb, keep)) @ convert(ei, keep)
        want = ea @ p
        for new_id, old_id in copies:
            want[new_id] = ei[old_id]
        want = torch.cat([want, ei[[t["id"] for t in extra]]]) if extra else want
        ok &= compare(f"lep {a.method} {name}", got[name], want.to(dtype).float(), max(1e-5, tolerance_of(dtype)))
    return ok


def cmd_perturb(a):
    torch.manual_seed(a.seed)
    shutil.copytree(a.model, a.out, dirs_exist_ok=True)
    tensors = read_safetensors(f"{a.model}/model.safetensors")
    dtype = dtype_of(a.model)
    out = {}
    for name, t in tensors.items():
        is_emb = name in ("model.embed_tokens.weight", "lm_head.weight")
        if is_emb:
            # A linear change of the space plus noise: what LEP's projections try to recover.
            h = t.shape[1]
            m = torch.eye(h) + 0.1 * torch.randn(h, h)
            t = t @ m + 0.01 * t.std() * torch.randn_like(t)
        elif not a.embeddings_only:
            t = t + 0.05 * t.std() * torch.randn_like(t) if t.numel() > 1 else t
        out[name] = t.to(dtype)
    write_safetensors(f"{a.out}/model.safetensors", out)
    if a.chat_template:
        # An instruct tokenizer with a chat token of its own (the demo tokenizer's <|pad|> renamed), which
        # the adapted tokenizer lacks: LEP appends it.
        tok = json.load(open(f"{a.out}/tokenizer.json", encoding="utf-8"))
        for t in tok["added_tokens"]:
            if t["content"] == "<|pad|>":
                t["content"] = "<|end_of_turn|>"
        json.dump(tok, open(f"{a.out}/tokenizer.json", "w", encoding="utf-8"), ensure_ascii=False, indent=2)
        cfg = {"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_turn|>",
               "chat_template": "{% for m in messages %}<|begin_of_text|>{{ m['role'] }}\n{{ m['content'] }}"
                                "<|end_of_turn|>{% endfor %}{% if add_generation_prompt %}<|begin_of_text|>"
                                "assistant\n{% endif %}",
               "added_tokens_decoder": {"4093": {"content": "<|begin_of_text|>", "special": True}}}
        json.dump(cfg, open(f"{a.out}/tokenizer_config.json", "w"), indent=2)
    return True


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("perturb")
    q.add_argument("--model", required=True)
    q.add_argument("--out", required=True)
    q.add_argument("--seed", type=int, default=0)
    q.add_argument("--embeddings-only", action="store_true")
    q.add_argument("--chat-template", action="store_true")
    q = sub.add_parser("adapt-vocab")
    for k in ("--model", "--old-tokenizer", "--new-tokenizer", "--engine-out", "--work"):
        q.add_argument(k, required=True)
    q = sub.add_parser("lep")
    for k in ("--base", "--instruct", "--adapted", "--method", "--engine-out", "--work"):
        q.add_argument(k, required=True)
    a = p.parse_args()
    ok = {"perturb": cmd_perturb, "adapt-vocab": cmd_adapt_vocab, "lep": cmd_lep}[a.cmd](a)
    print("OK" if ok else "FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
