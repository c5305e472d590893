#!/usr/bin/python3
"""Greedy decoding by the independent reference (llama_reference.py's model, Debian's python3-torch): every
step recomputes the whole sequence (no KV cache), so the engine's cached decoding is checked against the
plain definition. Compares the engine's `generate` output lines ({"ids": [...]}) token by token.

  generate_reference.py --model DIR --prompts FILE.jsonl --engine-output FILE --max-new-tokens N

A differing token is accepted only at a near tie: where the reference's two best logits are closer than
--tie (relative to the largest logit), fp32 rounding may order them either way; the comparison of that
line stops there. Exits 1 on any other difference.
"""
import argparse
import json
import sys

import torch

from llama_reference import Llama


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--prompts", required=True)
    ap.add_argument("--engine-output", required=True)
    ap.add_argument("--max-new-tokens", type=int, required=True)
    ap.add_argument("--tie", type=float, default=1e-5)
    a = ap.parse_args()
    torch.set_num_threads(1)
    model = Llama(a.model)
    prompts = [json.loads(l)["ids"] for l in open(a.prompts) if l.strip()]
    engine = [json.loads(l) for l in open(a.engine_output) if l.strip()]
    assert len(engine) == len(prompts), f"{len(engine)} output lines for {len(prompts)} prompts"
    compared, ties, failures = 0, 0, []
    with torch.no_grad():
        for n, (prompt, got) in enumerate(zip(prompts, engine), 1):
            assert got["finish_reason"] == "length" and len(got["ids"]) == a.max_new_tokens, got
            ids = list(prompt)
            for step, engine_id in enumerate(got["ids"]):
                logits = model.logits(torch.tensor([ids]))[0, -1]
                best = int(logits.argmax())
                if best != engine_id:
                    top2 = logits.topk(2).values
                    gap = (top2[0] - top2[1]).item() / logits.abs().max().item()
                    if gap < a.tie and engine_id in logits.topk(2).indices.tolist():
                        print(f"line {n} step {step}: near tie (relative gap {gap:.1e}); stops comparing here")
                        ties += 1
                        break
                    failures.append(f"line {n} step {step}: engine {engine_id}, reference {best} (gap {gap:.1e})")
                    break
                compared += 1
                ids.append(best)
    print(f"{compared} tokens compared over {len(prompts)} prompts, {ties} near ties")
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    print("OK: the engine's greedy tokens equal the reference's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
