"""Check 1: `slipway-engine score --device cuda` against HF transformers' LlamaForCausalLM and
MistralForCausalLM, on small random models that transformers wrote with save_pretrained (an independent
writer of HF folders; GQA, an explicit Mistral head_dim, untied head), per line of random token ids.

  fp32: the folder in float32; HF in float32, TF32 off in both (LibTorch's default, set here for HF).
        Per line |loss diff| / loss <= 1e-4: the same formulas differ only in kernels and summation order
        (~1e-6); a wrong formula (RoPE, GQA, norm eps) moves the loss by 1e-3 or more.
  bf16: the folder in bfloat16; the engine's --bf16 (fp32 weights, bf16 autocast, as its training) against
        HF in float32 under torch.autocast(bfloat16) (what HF Trainer's bf16=True runs) for the decoder, with
        the head in fp32 as the engine's: its lm_head and cross-entropy leave autocast
        (engine/model/chunked_loss.cpp), while HF's lm_head runs in bf16 under autocast. Gated per line:
        |loss diff| <= 1e-2: only the decoder's bf16 matmuls differ (the same inputs rounded alike, fp32
        accumulation in another order, a bf16 output ulp flipping here and there), ~1e-3 after 3 layers;
        1e-2 is a sixth of one bf16 step at a loss of ~8. Not gated: HF's own autocast loss (bf16 logits:
        up to half an ulp, 8e-3 at |logit| 2-4, on the 2-token line's one prediction) and HF with bfloat16
        weights (pure bf16), printed for information.
  accuracy: per line the share of argmax hits may differ by one token (a near tie flipping).
Every (model, precision, line) is compared: the count must be models x 2 x lines (zip would stop silently at
the shorter of the engine's and HF's lists), and is written as figures["compared"].

  check_score.py --out DIR
"""
import json
import os
import sys

import torch

import gpu_common as g

ARCHS = {
    "llama": dict(vocab_size=4096, hidden_size=256, intermediate_size=688, num_hidden_layers=3,
                  num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=1024,
                  rms_norm_eps=1e-5, rope_theta=10000.0, initializer_range=0.1, tie_word_embeddings=False),
    "mistral": dict(vocab_size=4096, hidden_size=256, intermediate_size=512, num_hidden_layers=3,
                    num_attention_heads=8, num_key_value_heads=2, head_dim=48, max_position_embeddings=1024,
                    rms_norm_eps=1e-6, rope_theta=1e6, sliding_window=4096, initializer_range=0.1,
                    tie_word_embeddings=False),
    # Mistral with a window shorter than the 700-token line, so the window's mask is exercised.
    "mistral_window": dict(vocab_size=4096, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                           num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=1024,
                           rms_norm_eps=1e-6, rope_theta=1e6, sliding_window=128, initializer_range=0.1,
                           tie_word_embeddings=False),
    "qwen2": dict(vocab_size=4096, hidden_size=256, intermediate_size=688, num_hidden_layers=3,
                  num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=1024, rms_norm_eps=1e-6,
                  rope_theta=1e6, use_sliding_window=False, initializer_range=0.1, tie_word_embeddings=True),
    "qwen3": dict(vocab_size=4096, hidden_size=256, intermediate_size=688, num_hidden_layers=3,
                  num_attention_heads=8, num_key_value_heads=4, head_dim=64, max_position_embeddings=1024,
                  rms_norm_eps=1e-6, rope_theta=1e6, attention_bias=False, initializer_range=0.1,
                  tie_word_embeddings=False),
}
LENGTHS = (96, 2, 33, 200, 700)


def hf_scores(model, lines, autocast, fp32_head=False):
    """(loss, accuracy) per line: HF's own loss (labels = ids, shifted inside: the mean over the T - 1
    predictions), or with fp32_head the decoder's last hidden state (under autocast when asked) through the
    lm_head and cross-entropy in fp32, outside autocast, as the engine's --bf16."""
    out = []
    for ids in lines:
        x = torch.tensor([ids], device="cuda")
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            if fp32_head:
                hidden = model.model(input_ids=x).last_hidden_state  # (1, T, C)
            else:
                result = model(input_ids=x, labels=x)
        with torch.no_grad():
            if fp32_head:
                logits = torch.nn.functional.linear(hidden[0, :-1].float(), model.lm_head.weight.float())
                loss = torch.nn.functional.cross_entropy(logits, x[0, 1:])
            else:
                logits, loss = result.logits[0, :-1], result.loss
            hits = (logits.argmax(-1) == x[0, 1:]).sum().item()
        out.append((loss.float().item(), hits / (len(ids) - 1)))
    return out


def main():
    a = g.start_check(exact_fp32=True)
    failures, rows, figures = [], [], {}
    compared, expected = 0, len(ARCHS) * 2 * len(LENGTHS)
    for arch, config in ARCHS.items():
        lines = g.random_lines(config["vocab_size"], LENGTHS)
        tokens = g.write_lines(os.path.join(a.out, f"{arch}-tokens.jsonl"), lines)
        for precision, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
            family = arch.split("_")[0]  # mistral_window is a Mistral
            folder = g.write_hf_model(os.path.join(a.out, f"{arch}-{precision}"), family, dtype, **config)
            args = ["score", "--model", folder, "--tokens", tokens, "--device", "cuda"]
            scored = g.engine(*args, *(["--bf16"] if precision == "bf16" else [])).stdout.splitlines()
            ours = [json.loads(line) for line in scored if line.strip()][:-1]  # the last is the summary
            if len(ours) != len(lines):
                failures.append(f"{arch} {precision}: the engine scored {len(ours)} lines of {len(lines)}")
            bf16 = precision == "bf16"
            hf32 = g.hf_causal_lm(folder, torch.float32)
            reference = hf_scores(hf32, lines, autocast=bf16, fp32_head=bf16)
            hf_autocast = hf_scores(hf32, lines, autocast=True) if bf16 else None
            info = hf_scores(g.hf_causal_lm(folder, torch.bfloat16), lines, False) if bf16 else None
            tolerance = 1e-4 if precision == "fp32" else 1e-2
            worst = 0.0
            for i, (ids, mine, (loss, accuracy)) in enumerate(zip(lines, ours, reference)):
                diff = abs(mine["loss"] - loss) / abs(loss) if precision == "fp32" else abs(mine["loss"] - loss)
                worst = max(worst, diff)
                compared += 1
                acc_ok = abs(mine["accuracy"] - accuracy) <= 1.0 / (len(ids) - 1) + 1e-12
                rows.append([arch, precision, len(ids), mine["loss"], loss, diff,
                             hf_autocast[i][0] if hf_autocast else "-", info[i][0] if info else "-",
                             f"{mine['accuracy']:.3f} / {accuracy:.3f}"])
                if not acc_ok:
                    failures.append(f"{arch} {precision} line {i + 1}: accuracy {mine['accuracy']} vs {accuracy}")
            figures[f"{arch}-{precision}"] = worst
            if worst > tolerance:
                failures.append(f"{arch} {precision}: max loss diff {worst:.3e} > {tolerance}")
    g.table(["model", "precision", "tokens", "engine loss", "HF loss (bf16: fp32 head)", "diff (fp32 rel, bf16 abs)",
             "HF autocast loss, bf16 logits (info)", "HF pure-bf16 loss (info)", "accuracy engine / HF"], rows)
    if compared != expected:
        failures.append(f"compared {compared} (model, precision, line) scores, expected {expected}")
    return g.verdict(failures, a.out, figures, compared=compared)


if __name__ == "__main__":
    sys.exit(main())
