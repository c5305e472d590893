#!/usr/bin/python3
"""Independent reference of `slipway-engine eval` (Debian's python3-torch, the plain-PyTorch LLaMA of
llama_reference.py, token ids from the HF tokenizers library through encode_strings.py), following
lm-evaluation-harness: acc / acc_norm from the summed log-likelihood of each choice's continuation tokens
(acc_norm divides by the choice's length in characters, lm_eval/api/task.py), context and continuation split
as HFLM._encode_pair does, inputs cut to the last max_length + 1 tokens; greedy generation with stop strings,
exact and prefix match; token-level perplexity (every token of a text, the first from the BOS prefix token,
long texts in lm-eval's rolling windows). Texts are encoded as HFLM.tok_encode does: with the special tokens
the tokenizer's post-processor adds (add_bos_token unset), none (add_bos_token false), and none for a text that
starts with the BOS token's text.

  eval_reference.py make-tasks --model DIR --tokenizer FILE --out DIR
      writes DIR/tasks.json and its JSONL files; generation targets are made from this reference's own greedy
      output (some equal, some a prefix, some wrong), so exact_match and prefix_match are not all zero
  eval_reference.py check --model DIR [--adapter DIR] --tokenizer FILE --tasks FILE
                          --engine-result FILE --engine-details FILE [--tolerance 1e-5]
      compares: every prediction, generation and count equal; log-likelihoods, NLLs and perplexity within the
      tolerance (relative)

Run it with a python that has both torch and the tokenizers library: REFERENCE_DIR/python after
tests/reference/install.sh REFERENCE_DIR (a venv that sees Debian's python3-torch).
"""
import argparse
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from encode_strings import encode_all  # noqa: E402
from llama_reference import Llama  # noqa: E402


class ByteLevelDecoder:
    """GPT-2 byte-level decoding (tokenizer.json with a ByteLevel decoder), special tokens skipped."""

    def __init__(self, path):
        with open(path) as f:
            t = json.load(f)
        assert (t.get("decoder") or {}).get("type") == "ByteLevel", "only byte-level tokenizers are decoded here"
        self.tokens = {i: s for s, i in t["model"]["vocab"].items()}
        self.special = set()
        for a in t.get("added_tokens", []):
            self.tokens[a["id"]] = a["content"]
            if a.get("special"):
                self.special.add(a["id"])
        bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
            list(range(ord("®"), ord("ÿ") + 1))
        cs, n = bs[:], 0
        for b in range(256):
            if b not in bs:
                bs.append(b)
                cs.append(256 + n)
                n += 1
        self.byte_of = {chr(c): b for b, c in zip(bs, cs)}

    def decode(self, ids):
        text = "".join(self.tokens[i] for i in ids if i not in self.special)
        return bytes(self.byte_of[c] for c in text).decode("utf-8", errors="replace")


class Reference:
    def __init__(self, model_dir, tokenizer, adapter=None):
        self.model = Llama(model_dir, adapter)
        self.max_length = self.model.cfg["max_position_embeddings"]
        eos = self.model.cfg.get("eos_token_id")
        self.eos = set(eos if isinstance(eos, list) else [] if eos is None else [eos])
        self.tokenizer = tokenizer
        self.decoder = ByteLevelDecoder(tokenizer)
        # lm-eval's prefix_token_id; this reference's tokenizers name it in the model's config.
        self.bos = self.model.cfg["bos_token_id"]
        self.bos_text = self.decoder.tokens[self.bos]

    def encode(self, texts, add_bos_token=None):
        """HFLM.tok_encode: add_bos_token None, the tokenizer's post-processor decides (the tokenizers library
        applies it); False, no special tokens; and none for a text that starts with the BOS token's text."""
        plain = encode_all(self.tokenizer, texts)
        if add_bos_token is False:
            return plain
        special = encode_all(self.tokenizer, texts, add_special_tokens=True)
        if add_bos_token:
            special = [ids if ids[:1] == [self.bos] else [self.bos] + ids for ids in special]
        return [p if t.startswith(self.bos_text) else s for t, p, s in zip(texts, plain, special)]

    def loglikelihood(self, context_enc, continuation_enc):
        """lm-eval _loglikelihood_tokens: (sum of log p, all greedy) of the continuation."""
        inp = (context_enc + continuation_enc)[-(self.max_length + 1):][:-1]
        with torch.no_grad():
            logits = self.model.logits(torch.tensor([inp]))[0]
        n = len(continuation_enc)
        logprobs = torch.log_softmax(logits[-n:].float(), dim=-1)
        target = torch.tensor(continuation_enc)
        ll = logprobs.gather(1, target[:, None]).squeeze(1).double().sum().item()
        return ll, bool((logprobs.argmax(-1) == target).all())

    def greedy(self, prompt, max_new_tokens, stop):
        seq, new = list(prompt), []
        while len(new) < max_new_tokens and len(seq) < self.max_length:
            with torch.no_grad():
                nxt = int(self.model.logits(torch.tensor([seq]))[0, -1].argmax())
            if nxt in self.eos:
                break
            seq.append(nxt)
            new.append(nxt)
            if stop and any(s in self.decoder.decode(new) for s in stop):
                break
        text = self.decoder.decode(new)
        cut = min([text.find(s) for s in stop if s in text], default=-1)
        return (text[:cut] if cut >= 0 else text), new


def rolling_windows(token_list, prefix_token, max_seq_len, context_len=1):
    """lm_eval/utils.py get_rolling_token_windows + make_disjoint_window: (context, predicted) pairs that
    predict every token of token_list once, the first from prefix_token."""
    pred_len = max_seq_len - context_len + 1
    predicted = 0
    first_seq_len = min(max_seq_len, len(token_list))
    windows = [([prefix_token] + token_list[: first_seq_len - 1], token_list[:first_seq_len])]
    predicted += first_seq_len
    while predicted < len(token_list):
        window_pred_len = min(len(token_list) - predicted, pred_len)
        window_end = predicted + window_pred_len
        windows.append((token_list[window_end - max_seq_len - 1: window_end - 1],
                        token_list[window_end - window_pred_len: window_end]))
        predicted += window_pred_len
    # make_disjoint_window: the context is what the window does not predict.
    out = []
    for context, pred in windows:
        whole = context + pred[-1:]
        out.append((whole[: len(whole) - len(pred)], pred))
    return out


def encode_pair_texts(context, continuation):
    n_spaces = len(context) - len(context.rstrip())
    if n_spaces > 0:
        continuation = context[-n_spaces:] + continuation
        context = context[:-n_spaces]
    return context, context + continuation


def argmax(values):
    best = 0
    for i, v in enumerate(values):
        if v > values[best]:
            best = i
    return best


def read_tasks(path):
    with open(path) as f:
        doc = json.load(f)
    base = os.path.dirname(path)
    for t in doc["tasks"]:
        with open(os.path.join(base, t["data"])) as f:
            t["samples"] = [json.loads(line) for line in f if line.strip()][: t.get("limit")]
    return doc["tasks"]


def run(ref, tasks):
    """Per task: metrics, counts and per-sample details, in the engine's --details shape."""
    out = {}
    for t in tasks:
        details = []
        if t["kind"] == "multiple_choice":
            delim = t.get("target_delimiter", " ")
            texts = []
            for s in t["samples"]:
                for c in s["choices"]:
                    texts += list(encode_pair_texts(s["context"], delim + c))
            ids = iter(ref.encode(texts, t.get("add_bos_token")))
            hits = [0, 0]
            for s in t["samples"]:
                lls = []
                for c in s["choices"]:
                    ctx, whole = next(ids), next(ids)
                    lls.append(ref.loglikelihood(ctx, whole[len(ctx):])[0])
                pred = argmax(lls)
                pred_norm = argmax([ll / float(len(c)) for ll, c in zip(lls, s["choices"])])
                hits[0] += pred == s["gold"]
                hits[1] += pred_norm == s["gold"]
                details.append({"loglikelihoods": lls, "pred": pred, "pred_norm": pred_norm})
            n = len(t["samples"])
            out[t["name"]] = ({"acc": hits[0] / n, "acc_norm": hits[1] / n}, {"samples": n}, details)
        elif t["kind"] == "generation":
            prompts = ref.encode([s["prompt"] for s in t["samples"]], t.get("add_bos_token"))
            hits, new_tokens = [0, 0], 0
            strip = t.get("strip", True)
            for s, prompt in zip(t["samples"], prompts):
                text, new = ref.greedy(prompt, t.get("max_new_tokens", 64), t.get("stop", []))
                g, target = (text.strip(), s["target"].strip()) if strip else (text, s["target"])
                hits[0] += g == target
                hits[1] += g.startswith(target)
                new_tokens += len(new)
                details.append({"generated": text, "new_ids": new})
            n = len(t["samples"])
            out[t["name"]] = ({"exact_match": hits[0] / n, "prefix_match": hits[1] / n},
                              {"samples": n, "new_tokens": new_tokens}, details)
        else:
            nll, tokens = 0.0, 0
            for ids in ref.encode([s["text"] for s in t["samples"]], t.get("add_bos_token")):
                if not ids:
                    continue
                text_ll = 0.0
                windows = rolling_windows(ids, ref.bos, ref.max_length)
                for context, pred in windows:
                    text_ll += ref.loglikelihood(context, pred)[0]
                nll -= text_ll
                tokens += len(ids)
                details.append({"nll_sum": -text_ll, "tokens": len(ids), "windows": len(windows)})
            out[t["name"]] = ({"perplexity": math.exp(nll / tokens), "nll": nll / tokens},
                              {"samples": len(t["samples"]), "tokens": tokens}, details)
    return out


def make_tasks(ref, out_dir):
    """Multiple choice with trailing spaces, Cyrillic (characters != bytes) and contexts longer than the model
    (left truncation); generation whose targets come from this reference's own greedy output; texts."""
    os.makedirs(out_dir, exist_ok=True)
    words = ["кот", "dog", "Москва", "river", "ёж", "computer", "снег", "tea", "программа", "x"]
    mc = []
    for i in range(12):
        context = " ".join(words[(i + k) % len(words)] for k in range(3 + i))
        if i % 3 == 0:
            # trailing whitespace moves into the continuation, Unicode whitespace too (str.rstrip)
            context += {3: "\u00a0", 6: "\u3000 "}.get(i, " ")
        if i == 11:
            context = " ".join(words * 12)  # longer than max_position_embeddings: cut on the left
        choices = [words[(i * 7 + k) % len(words)] + ("." * k) for k in range(2 + i % 3)]
        mc.append({"context": context, "choices": choices, "gold": i % len(choices)})
    prompts = [f"Повтори: {words[i]} {words[(i + 3) % 10]}\nОтвет:" for i in range(8)]
    prompts[5] = ref.bos_text + prompts[5]  # written with its BOS: the tokenizer's is not added again
    stop = ["\n", "."]
    gen = []
    for i, (p, ids) in enumerate(zip(prompts, ref.encode(prompts))):
        text, _ = ref.greedy(ids, 12, stop)
        if not text.strip():
            gen.append({"prompt": p, "target": "none"})
        elif i % 3 == 0:
            gen.append({"prompt": p, "target": text})  # exact match
        elif i % 3 == 1:
            gen.append({"prompt": p, "target": text.strip()[: max(1, len(text.strip()) // 2)]})  # prefix only
        else:
            gen.append({"prompt": p, "target": "wrong " + text})
    texts = [{"text": " ".join(words[i:] + words[:i]) + "."} for i in range(6)] + [{"text": "x"}]
    texts.append({"text": " ".join(words * 8)})  # longer than the model: rolling windows
    for name, rows in (("mc.jsonl", mc), ("gen.jsonl", gen), ("ppl.jsonl", texts)):
        with open(os.path.join(out_dir, name), "w") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    tasks = {"schema": "slipway.eval/1", "tasks": [
        {"name": "mc", "kind": "multiple_choice", "data": "mc.jsonl"},
        {"name": "mc-nodelim", "kind": "multiple_choice", "data": "mc.jsonl", "target_delimiter": "", "limit": 5},
        {"name": "gen", "kind": "generation", "data": "gen.jsonl", "max_new_tokens": 12, "stop": stop},
        {"name": "ppl", "kind": "perplexity", "data": "ppl.jsonl"},
        {"name": "mc-nobos", "kind": "multiple_choice", "data": "mc.jsonl", "limit": 4, "add_bos_token": False},
        {"name": "ppl-nobos", "kind": "perplexity", "data": "ppl.jsonl", "add_bos_token": False},
    ]}
    with open(os.path.join(out_dir, "tasks.json"), "w") as f:
        json.dump(tasks, f, ensure_ascii=False, indent=1)


def check(ref, tasks, engine_result, engine_details, tolerance):
    expected = run(ref, tasks)
    got = {t["name"]: t for t in engine_result["tasks"]}
    per_task = {}
    for d in engine_details:
        per_task.setdefault(d["task"], []).append(d)
    problems, worst = [], 0.0

    def close(what, a, b):
        nonlocal worst
        r = abs(a - b) / max(abs(b), 1e-30)
        worst = max(worst, r)
        if r > tolerance:
            problems.append(f"{what}: engine {a!r} vs reference {b!r} (rel {r:.2e})")

    for name, (metrics, counts, details) in expected.items():
        e = got.get(name)
        if e is None:
            problems.append(f"{name}: missing from the engine's result")
            continue
        for k, v in counts.items():
            if e.get(k) != v:
                problems.append(f"{name}: {k} engine {e.get(k)} vs reference {v}")
        for k, v in metrics.items():
            if k in ("perplexity", "nll"):
                close(f"{name}.{k}", e["metrics"][k], v)
            elif e["metrics"][k] != v:
                problems.append(f"{name}.{k}: engine {e['metrics'][k]} vs reference {v}")
        ed = per_task.get(name, [])
        if len(ed) != len(details):
            problems.append(f"{name}: {len(ed)} detail lines vs {len(details)}")
            continue
        for i, (a, b) in enumerate(zip(ed, details)):
            for k, v in b.items():
                if k in ("loglikelihoods",):
                    for j, (x, y) in enumerate(zip(a[k], v)):
                        close(f"{name}[{i}].{k}[{j}]", x, y)
                elif k == "nll_sum":
                    close(f"{name}[{i}].{k}", a[k], v)
                elif a[k] != v:
                    problems.append(f"{name}[{i}].{k}: engine {a[k]!r} vs reference {v!r}")
        print(f"{name:12s} engine {json.dumps(e['metrics'])}  reference {json.dumps(metrics)}")
    print(f"max relative difference of log-likelihoods / NLL / perplexity: {worst:.3e}")
    for p in problems:
        print("FAIL: " + p, file=sys.stderr)
    return 1 if problems else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["make-tasks", "check"])
    ap.add_argument("--model", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--adapter", help="a PEFT LoRA adapter folder (W + scaling * B @ A)")
    ap.add_argument("--out")
    ap.add_argument("--tasks")
    ap.add_argument("--engine-result")
    ap.add_argument("--engine-details")
    ap.add_argument("--tolerance", type=float, default=1e-5)
    a = ap.parse_args()
    torch.set_num_threads(1)
    ref = Reference(a.model, a.tokenizer, a.adapter)
    if a.mode == "make-tasks":
        make_tasks(ref, a.out)
        return 0
    with open(a.engine_result) as f:
        result = json.load(f)
    with open(a.engine_details) as f:
        details = [json.loads(line) for line in f if line.strip()]
    return check(ref, read_tasks(a.tasks), result, details, a.tolerance)


if __name__ == "__main__":
    sys.exit(main())
