#!/usr/bin/python3
"""Independent LLaMA-family reference in plain PyTorch (Debian's python3-torch; no transformers, no safetensors
package): builds the model from an HF folder (config.json + model.safetensors) following HF's
modeling_llama, modeling_mistral (sliding window), modeling_qwen2 (q/k/v biases) and modeling_qwen3 (q/k
RMSNorm per head before RoPE) formulas, and checks the engine against it.

  llama_reference.py score --model DIR --tokens FILE.jsonl --engine-scores FILE    compare per-line loss/accuracy
  llama_reference.py dump  --model DIR --tokens FILE.jsonl --engine-dump FILE      compare logits, loss, gradients
  (score also takes --adapter DIR: a PEFT LoRA adapter applied as W + scaling * B @ A)

Prints the max relative difference per quantity and exits 1 when one exceeds --tolerance (default 1e-5;
relative to the largest magnitude of the reference tensor).
"""
import argparse
import json
import math
import struct
import sys

import torch

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        raw = bytearray(data[base + begin:base + end])
        dtype = DTYPES[entry["dtype"]]
        t = torch.frombuffer(raw, dtype=torch.uint8).view(dtype) if raw else torch.empty(0, dtype=dtype)
        out[name] = t.reshape(entry["shape"]).to(torch.float32)
    return out


def inv_frequencies(cfg, head_dim):
    base = cfg.get("rope_theta", 10000.0)
    inv = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    scaling = cfg.get("rope_scaling") or {}
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind == "linear":
        inv = inv / scaling["factor"]
    elif kind == "llama3":
        factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
        old = scaling["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old / low, old / high
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > low_wavelen, inv / factor, inv)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
        inv = torch.where(medium, smoothed, scaled)
    return inv


def apply_adapter(weights, folder):
    """W + scaling * B @ A for every lora_A/lora_B pair; modules_to_save weights replace the base's."""
    import re
    with open(f"{folder}/adapter_config.json") as f:
        cfg = json.load(f)
    tensors = read_safetensors(f"{folder}/adapter_model.safetensors")
    prefix = "base_model.model."
    for key, value in tensors.items():
        assert key.startswith(prefix), key
        name = key[len(prefix):]
        if name.endswith(".lora_B.weight"):
            continue
        if name.endswith(".lora_A.weight"):
            module = name[: -len(".lora_A.weight")]
            r, alpha = cfg["r"], cfg["lora_alpha"]
            for pattern, v in (cfg.get("rank_pattern") or {}).items():
                if re.match(rf"(.*\.)?({pattern})$", module):
                    r = v
                    break
            for pattern, v in (cfg.get("alpha_pattern") or {}).items():
                if re.match(rf"(.*\.)?({pattern})$", module):
                    alpha = v
                    break
            scaling = alpha / math.sqrt(r) if cfg.get("use_rslora") else alpha / r
            b = tensors[prefix + module + ".lora_B.weight"]
            assert value.shape[0] == r and b.shape[1] == r, f"{module}: rank {r} vs A {list(value.shape)}"
            weights[module + ".weight"] = weights[module + ".weight"] + scaling * (b @ value)
        else:
            weights[name] = value


class Llama:
    def __init__(self, folder, adapter=None):
        with open(f"{folder}/config.json") as f:
            self.cfg = json.load(f)
        c = self.cfg
        weights = read_safetensors(f"{folder}/model.safetensors")
        if adapter:
            apply_adapter(weights, adapter)
        self.w = {k: v.clone().requires_grad_(True) for k, v in weights.items()}
        self.heads = c["num_attention_heads"]
        self.kv_heads = c.get("num_key_value_heads", self.heads)
        self.head_dim = c.get("head_dim") or c["hidden_size"] // self.heads
        self.eps = c.get("rms_norm_eps", 1e-6)
        self.tied = c.get("tie_word_embeddings", False)
        self.inv_freq = inv_frequencies(c, self.head_dim)
        kind = c.get("model_type", "llama")
        # MistralConfig's sliding_window defaults to 4096; null means none. Llama and Qwen have none here.
        self.window = (c.get("sliding_window", 4096) or 0) if kind == "mistral" else 0
        self.qk_norm = kind == "qwen3"
        # Which projections carry a bias, as each family's modeling file builds them; the checkpoint must agree.
        attention_bias = c.get("attention_bias", False)
        biased = {"llama": ["q_proj", "k_proj", "v_proj", "o_proj"] if attention_bias else [],
                  "mistral": [], "qwen2": ["q_proj", "k_proj", "v_proj"],
                  "qwen3": ["q_proj", "k_proj", "v_proj", "o_proj"] if attention_bias else []}[kind]
        if kind == "llama" and c.get("mlp_bias"):
            biased += ["gate_proj", "up_proj", "down_proj"]
        have = sorted({k.split(".")[-2] for k in self.w if k.endswith(".bias")})
        assert have == sorted(biased), f"{kind}: biases on {have}, the family has them on {sorted(biased)}"

    def rms(self, x, w):
        return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))

    def linear(self, x, module):
        """x W^T, plus the bias where the checkpoint has one (which modules have one is the family's)."""
        y = x @ self.w[module + ".weight"].T
        bias = self.w.get(module + ".bias")
        return y if bias is None else y + bias

    @staticmethod
    def rotate(x):
        h = x.shape[-1] // 2
        return torch.cat((-x[..., h:], x[..., :h]), dim=-1)

    def logits(self, ids):
        w = self.w
        b, t = ids.shape
        x = w["model.embed_tokens.weight"][ids]
        freqs = torch.outer(torch.arange(t, dtype=torch.float32), self.inv_freq)
        emb = torch.cat((freqs, freqs), -1)
        cos, sin = emb.cos(), emb.sin()
        mask = torch.full((t, t), float("-inf")).triu(1)
        if self.window:  # key j hidden from query i when i - j >= window
            mask = mask + torch.full((t, t), float("-inf")).tril(-self.window)
        for i in range(self.cfg["num_hidden_layers"]):
            p = f"model.layers.{i}."
            h = self.rms(x, w[p + "input_layernorm.weight"])
            q = self.linear(h, p + "self_attn.q_proj").view(b, t, self.heads, self.head_dim)
            k = self.linear(h, p + "self_attn.k_proj").view(b, t, self.kv_heads, self.head_dim)
            v = self.linear(h, p + "self_attn.v_proj").view(b, t, self.kv_heads, self.head_dim)
            if self.qk_norm:
                q = self.rms(q, w[p + "self_attn.q_norm.weight"])
                k = self.rms(k, w[p + "self_attn.k_norm.weight"])
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            q = q * cos + self.rotate(q) * sin
            k = k * cos + self.rotate(k) * sin
            rep = self.heads // self.kv_heads
            k = k[:, :, None].expand(b, self.kv_heads, rep, t, self.head_dim).reshape(b, self.heads, t, self.head_dim)
            v = v[:, :, None].expand(b, self.kv_heads, rep, t, self.head_dim).reshape(b, self.heads, t, self.head_dim)
            att = torch.softmax(q @ k.transpose(2, 3) / math.sqrt(self.head_dim) + mask, dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, -1)
            x = x + self.linear(y, p + "self_attn.o_proj")
            h = self.rms(x, w[p + "post_attention_layernorm.weight"])
            gate = torch.nn.functional.silu(self.linear(h, p + "mlp.gate_proj"))
            x = x + self.linear(gate * self.linear(h, p + "mlp.up_proj"), p + "mlp.down_proj")
        x = self.rms(x, w["model.norm.weight"])
        head = w["model.embed_tokens.weight"] if self.tied else w["lm_head.weight"]
        return x @ head.T

    def loss(self, ids):
        logits = self.logits(ids)
        targets = ids[:, 1:]
        pred = logits[:, :-1]
        loss = torch.nn.functional.cross_entropy(pred.reshape(-1, pred.shape[-1]), targets.reshape(-1))
        correct = (pred.argmax(-1) == targets).sum().item()
        return logits, loss, correct, targets.numel()


def rel(a, b):
    return ((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["score", "dump"])
    ap.add_argument("--model", required=True)
    ap.add_argument("--tokens", required=True)
    ap.add_argument("--engine-scores")
    ap.add_argument("--engine-dump")
    ap.add_argument("--adapter")
    ap.add_argument("--tolerance", type=float, default=1e-5)
    a = ap.parse_args()
    torch.set_num_threads(1)
    model = Llama(a.model, a.adapter)
    lines = [json.loads(l)["ids"] for l in open(a.tokens) if l.strip()]
    worst = {}
    if a.mode == "score":
        engine = [json.loads(l) for l in open(a.engine_scores) if l.strip()]
        with torch.no_grad():
            for ids, got in zip(lines, engine):
                _, loss, correct, n = model.loss(torch.tensor([ids]))
                worst["loss"] = max(worst.get("loss", 0), abs(got["loss"] - loss.item()) / abs(loss.item()))
                worst["accuracy"] = max(worst.get("accuracy", 0), abs(got["accuracy"] - correct / n))
                assert got["tokens"] == n, f"tokens {got['tokens']} != {n}"
        assert len(engine) == len(lines) + 1 and engine[-1].get("summary"), "the engine's summary line is missing"
    else:
        dump = read_safetensors(a.engine_dump)
        logits, loss, _, _ = model.loss(torch.tensor([lines[0]]))
        loss.backward()
        worst["logits"] = rel(dump["logits"], logits.detach()[0])
        worst["loss"] = rel(dump["loss"], loss.detach().reshape(1))
        for name, w in model.w.items():
            worst["grad." + name] = rel(dump["grad." + name], w.grad)
    bad = {k: v for k, v in worst.items() if v > a.tolerance}
    for k, v in sorted(worst.items(), key=lambda kv: -kv[1])[:8]:
        print(f"{k:60s} max rel diff {v:.3e}")
    if bad:
        print(f"FAIL: {len(bad)} quantities over {a.tolerance}: {sorted(bad)}", file=sys.stderr)
        return 1
    print(f"OK: {len(worst)} quantities within {a.tolerance}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
