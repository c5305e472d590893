#!/usr/bin/python3
"""Plain PyTorch DDP reference for tests/bench/dist_bench.py: the model of torch_train_loop.py wrapped in
torch.nn.parallel.DistributedDataParallel over Gloo (bucket_cap_mb 25, as the engine), AdamW fp32, one
thread per rank, random token ids. Started by any launcher that sets RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT (the bench uses `slipway-engine launch`); WORLD_SIZE=1 runs the plain loop without DDP. Rank 0
prints one JSON line: the median step time over the timed steps.

usage: torch_ddp_loop.py --dim D --layers L --heads H --vocab V --seq T --batch B --steps N [--warmup W]
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist

from torch_train_loop import Llama, llama2c_hidden


def main():
    ap = argparse.ArgumentParser()
    for name in ("dim", "layers", "heads", "vocab", "seq", "batch", "steps"):
        ap.add_argument(f"--{name}", type=int, required=True)
    ap.add_argument("--warmup", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(1)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    torch.manual_seed(0)
    model = Llama(a.vocab, a.dim, a.layers, a.heads, llama2c_hidden(a.dim), a.seq)
    if world > 1:
        dist.init_process_group("gloo", init_method="env://")
        model = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=25)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
    torch.manual_seed(1 + rank)
    ids = torch.randint(0, a.vocab, (a.steps + a.warmup, a.batch, a.seq))
    times = []
    for i in range(a.warmup + a.steps):
        start = time.perf_counter()
        loss = model(ids[i])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - start)
    if rank == 0:
        print(json.dumps({"step_seconds": statistics.median(times[a.warmup:]),
                          "parameters": sum(p.numel() for p in model.parameters())}), flush=True)
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
