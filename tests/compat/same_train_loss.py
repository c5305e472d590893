#!/usr/bin/env python3
"""Whether two runs' train_loss curves agree: every step of one MLLOG log is in the other, there are
`--steps` of them, and the largest |difference| is at most `--tolerance`. Prints both curves and the worst
difference; exits 1 when they disagree. For engines built against another torch (not bit for bit).
Usage: same_train_loss.py REFERENCE_MLLOG OTHER_MLLOG --steps N --tolerance T --label TEXT"""
import argparse
import json
import sys


def losses(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        if ":::MLLOG" not in line:
            continue
        event = json.loads(line.split(":::MLLOG", 1)[1])
        if event.get("key") == "train_loss":
            out[event["metadata"]["step_num"]] = event["value"]
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("reference")
    parser.add_argument("other")
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--tolerance", type=float, required=True)
    parser.add_argument("--label", required=True)
    args = parser.parse_args()
    reference, other = losses(args.reference), losses(args.other)
    if len(reference) != args.steps or reference.keys() != other.keys():
        print(f"{args.label}: the steps differ: {sorted(reference)} against {sorted(other)}")
        return 1
    for step in sorted(reference):
        print(f"step {step}: reference {reference[step]:.6f}  other {other[step]:.6f}")
    worst = max(abs(reference[s] - other[s]) for s in reference)
    print(f"{args.label}: max |diff| {worst:.2e} (<= {args.tolerance:g})")
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
