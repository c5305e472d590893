#!/usr/bin/python3
"""Plain-PyTorch reference training loop for tests/bench/train_bench.sh: the same LLaMA architecture as
slipway-engine (RMSNorm, RoPE, GQA-free attention, SwiGLU, untied lm_head), AdamW in fp32, one thread,
random token ids. Prints one JSON line: tokens/s over the timed steps and the process's peak RSS.
--lora-r R trains LoRA adapters (PEFT's update, B zero at the start) on the seven projections of each block
instead of the full weights, everything else frozen: the bench's LoRA row.

usage: torch_train_loop.py --dim D --layers L --heads H --vocab V --seq T --batch B --steps N [--warmup W]
                           [--lora-r R --lora-alpha A]
"""
import argparse
import json
import math
import resource
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class LoRALinear(nn.Module):
    """A frozen nn.Linear plus a LoRA update as PEFT computes it: y = x W^T + (alpha / r) (x A^T) B^T."""

    def __init__(self, base, r, alpha):
        super().__init__()
        self.base = base.requires_grad_(False)
        self.a = nn.Parameter(torch.empty(r, base.in_features))
        nn.init.kaiming_uniform_(self.a, a=math.sqrt(5))  # PEFT's init of A; B starts at zero
        self.b = nn.Parameter(torch.zeros(base.out_features, r))
        self.scale = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.a.t()) @ self.b.t() * self.scale


def rotate(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Block(nn.Module):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim, bias=False) for _ in range(4))
        self.gate, self.up = nn.Linear(dim, hidden, bias=False), nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)
        self.norm1, self.norm2 = RMSNorm(dim), RMSNorm(dim)

    def forward(self, x, cos, sin, mask):
        b, t, c = x.shape
        h = self.norm1(x)
        q = self.q(h).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(h).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        v = self.v(h).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        q, k = q * cos + rotate(q) * sin, k * cos + rotate(k) * sin
        att = torch.softmax((q / math.sqrt(self.head_dim)) @ k.transpose(2, 3) + mask, dim=-1)
        x = x + self.o((att @ v).transpose(1, 2).reshape(b, t, c))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module):
    def __init__(self, vocab, dim, layers, heads, hidden, seq):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, hidden) for _ in range(layers))
        self.norm = RMSNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        inv = 1.0 / (10000.0 ** (torch.arange(0, dim // heads, 2).float() / (dim // heads)))
        freqs = torch.outer(torch.arange(seq).float(), inv)
        emb = torch.cat((freqs, freqs), -1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())
        self.register_buffer("mask", torch.full((seq, seq), float("-inf")).triu(1))

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x, self.cos, self.sin, self.mask)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))


def llama2c_hidden(dim, multiple_of=32):
    """SwiGLU width as llama2.c sizes it: 2/3 of 4 x dim, rounded up to a multiple of 32."""
    hidden = int(2 * 4 * dim / 3)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def main():
    ap = argparse.ArgumentParser()
    for name in ("dim", "layers", "heads", "vocab", "seq", "batch", "steps", "hidden"):
        ap.add_argument(f"--{name}", type=int, required=name != "hidden")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--lora-r", type=int, default=0, help="0: train the full weights")
    ap.add_argument("--lora-alpha", type=float, default=16.0)
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    hidden = a.hidden or llama2c_hidden(a.dim)
    model = Llama(a.vocab, a.dim, a.layers, a.heads, hidden, a.seq)
    if a.lora_r:
        model.requires_grad_(False)
        for block in model.blocks:
            for name in ("q", "k", "v", "o", "gate", "up", "down"):
                setattr(block, name, LoRALinear(getattr(block, name), a.lora_r, a.lora_alpha))
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=1e-3, weight_decay=0.0)
    ids = torch.randint(0, a.vocab, (a.steps + a.warmup, a.batch, a.seq))
    for i in range(a.warmup + a.steps):
        if i == a.warmup:
            start = time.perf_counter()
        loss = model(ids[i])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    seconds = time.perf_counter() - start
    print(json.dumps({"tokens_per_second": a.steps * a.batch * a.seq / seconds,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "parameters": sum(p.numel() for p in model.parameters()),
                      "trainable": sum(p.numel() for p in trainable), "hidden": hidden, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
