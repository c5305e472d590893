#!/usr/bin/python3
"""The reference for decode_bench.py: greedy decoding with a KV cache in plain PyTorch (Debian's
python3-torch), written the way a user would (per-layer key/value tensors grown with torch.cat, SDPA-free
matmul attention, the weights read from the engine's HF folder). Prints one JSON line: the new ids and the
decode rate (tokens after the first, per second)."""
import argparse
import json
import math
import sys
import time

import torch

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent / "reference"))
from llama_reference import inv_frequencies, read_safetensors  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--prompt", required=True, help="JSON list of ids")
    ap.add_argument("--new-tokens", type=int, required=True)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    cfg = json.load(open(f"{a.model}/config.json"))
    w = read_safetensors(f"{a.model}/model.safetensors")
    heads, kv = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
    d = cfg.get("head_dim") or cfg["hidden_size"] // heads
    eps, layers = cfg.get("rms_norm_eps", 1e-6), cfg["num_hidden_layers"]
    head = w["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else w["lm_head.weight"]
    inv = inv_frequencies(cfg, d)

    def rms(x, weight):
        return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))

    def rotate(x):
        return torch.cat((-x[..., d // 2:], x[..., :d // 2]), dim=-1)

    cache = [[None, None] for _ in range(layers)]

    def forward(ids, start):  # ids: (1, T) at positions start.. -> last logits (V)
        t = ids.shape[1]
        x = w["model.embed_tokens.weight"][ids]
        freqs = torch.outer(torch.arange(start, start + t, dtype=torch.float32), inv)
        emb = torch.cat((freqs, freqs), -1)
        cos, sin = emb.cos(), emb.sin()
        mask = torch.full((t, start + t), float("-inf")).triu(start + 1)
        for i in range(layers):
            p = f"model.layers.{i}."
            h = rms(x, w[p + "input_layernorm.weight"])
            q = (h @ w[p + "self_attn.q_proj.weight"].T).view(1, t, heads, d).transpose(1, 2)
            k = (h @ w[p + "self_attn.k_proj.weight"].T).view(1, t, kv, d).transpose(1, 2)
            v = (h @ w[p + "self_attn.v_proj.weight"].T).view(1, t, kv, d).transpose(1, 2)
            q, k = q * cos + rotate(q) * sin, k * cos + rotate(k) * sin
            if cache[i][0] is not None:
                k, v = torch.cat((cache[i][0], k), 2), torch.cat((cache[i][1], v), 2)
            cache[i] = [k, v]
            kx, vx = k.repeat_interleave(heads // kv, 1), v.repeat_interleave(heads // kv, 1)
            att = torch.softmax(q @ kx.transpose(2, 3) / math.sqrt(d) + mask, -1)
            x = x + (att @ vx).transpose(1, 2).reshape(1, t, -1) @ w[p + "self_attn.o_proj.weight"].T
            h = rms(x, w[p + "post_attention_layernorm.weight"])
            g = torch.nn.functional.silu(h @ w[p + "mlp.gate_proj.weight"].T)
            x = x + (g * (h @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
        return rms(x[0, -1], w["model.norm.weight"]) @ head.T

    prompt = json.loads(a.prompt)
    with torch.no_grad():
        out = [int(forward(torch.tensor([prompt]), 0).argmax())]
        start = time.perf_counter()
        while len(out) < a.new_tokens:
            out.append(int(forward(torch.tensor([[out[-1]]]), len(prompt) + len(out) - 1).argmax()))
        rate = (len(out) - 1) / (time.perf_counter() - start)
    print(json.dumps({"ids": out, "tokens_per_s": rate}))


if __name__ == "__main__":
    main()
