#!/usr/bin/env python3
"""`slipway-engine quantize` against bitsandbytes itself (PyPI, its CPU backend): ctest's torch_latest_bnb, run in
Debian forky's root by tests/compat/torch2.sh pyref (bitsandbytes pinned in tests/reference/requirements.txt;
torch and transformers are the root's). tests/quant/check_bnb_folder.py checks the same folders against our own
re-implementation of bitsandbytes' CUDA kernel; this one compares with the real library, on models written by
transformers' save_pretrained (fp32 Llama; bf16 Qwen2 with biases; an fp32 Llama with odd sizes, partial and
all-zero 64-blocks, and the 4 values that bnb's CPU thresholds code differently), each quantized by the engine
without and with --double-quant:

  bnb       bitsandbytes.functional.quantize_4bit(W, blocksize=64, quant_type="nf4", compress_statistics=DQ) of
            every base weight, as QuantState.as_dict(packed=True) (what Params4bit saves), must equal
            transformers' own save_pretrained of from_pretrained(BASE, BitsAndBytesConfig(...)) key for key and
            byte for byte (so the reference below is what HF users get).
  folder    our folder against those tensors, key by key: the same keys; unquantized tensors, packed NF4 codes,
            absmax and quant_map byte-equal; the quant_state JSON text equal. Allowed, counted and printed:
            codes of all-zero blocks (the engine keeps the CUDA kernel's codes 0, from 0 * (1/0) = NaN; bnb's CPU
            fallback scales by 1/max(absmax, 1e-38), giving code 7, and stores 1e-38 as a partial last block's
            absmax; both dequantize to zero), and a code one step apart where W/absmax is within 2 ulp of the
            threshold between them (bnb's CPU thresholds are the float32 midpoints of its table, 4 of 15 one ulp
            from the CUDA kernel's literals; it divides in a partial last block). Double quantization: nested_offset within 1 ulp (torch's float32 mean against the engine's
            sum in double; the quant_state text must still be json.dumps of the engine's own values, as bnb
            writes it), nested_absmax within 2 ulp of the offset, nested_quant_map within 2 ulp per value
            (create_dynamic_map's torch.linspace on this torch against the scalar loop the engine follows; one
            linspace ulp becomes 2 at 0.028), and the 8-bit absmax codes: bnb's CPU quantize_blockwise looks up a
            65536-entry table (csrc/cpu_ops.cpp build_quantize_lut) where the CUDA kernel (and the engine)
            binary-search the map, so codes near a midpoint differ. Every bnb code must equal that table's code
            (emulated here) for bnb's own inputs, and every engine code the CUDA rule's for the engine's
            (nf4_reference.dquantize_dynamic); the differing ones are counted, with the recovered absmax's
            largest relative difference.
  load      transformers' AutoModelForCausalLM.from_pretrained(OUR_FOLDER) on CPU: every decoder linear is a
            Linear4bit whose dequantize_4bit is, bit for bit, code value x absmax recovered from our saved keys
            (as it is of bnb's own state), and equals bnb's dequantized weight wherever the two states hold the
            same code and the same recovered absmax (-0 and 0 equal). The rest is counted with its max diff: the
            codes above, and with double quantization every block whose recovered absmax differs (a differing
            absmax code, or an offset one ulp apart), and zero blocks (code 0 times a recovered absmax that is
            not exactly 0, against code 7's 0).
  score     per line, `slipway-engine score` on our folder against transformers+bitsandbytes on the same folder:
            compute dtype float32, |loss diff| / loss <= 1e-4 and `dump` logits within 1e-4 of the largest
            |logit| (both dequantize the same bytes to the same fp32 weights; what is left is summation order,
            ~1e-7, while one NF4 code wrong moves logits by ~1e-3); compute dtype bfloat16 (the engine's default),
            |loss diff| <= 1e-2 absolute, as tests/compat/hf_reference.py's bf16: both run the 4-bit products in
            bf16, but bnb's Linear4bit adds a bias in bf16 inside the product and the engine adds it in fp32
            after it (Qwen2's q/k/v biases: ~3e-3; without biases ~1e-5).

Every check counts what it compared and fails on zero; tables per check and a summary. Only JSON lines of the
engine's stdout are read.

  bnb_check.py --engine BIN --work DIR [--threads N]
"""
import argparse
import json
import math
import os
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "gpu"))
sys.path.insert(0, os.path.join(REPO, "tests", "compat"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402

import bitsandbytes  # noqa: E402
import bitsandbytes.functional as F  # noqa: E402
import gpu_common as g  # noqa: E402  (HF model writer, random lines, tables, verdict)
import nf4_reference as ref  # noqa: E402  (the CUDA kernel's rules, written from bitsandbytes' source)
from hf_reference import Check, engine, hf_scores  # noqa: E402

BLOCK = 64
VOCAB = 512
NF4_CPU_BOUNDS = None  # bnb's CPU thresholds, set in main (backends/default/ops.py _get_4bit_quantize_bounds)


def zero_first(count):
    """An edit: the first `count` elements zeroed (all-zero blocks)."""
    return lambda t: t.view(-1)[:count].zero_()


def threshold_ties(t):
    """An edit: a first block of absmax 1.0 holding, for each threshold where bnb's CPU bound and the CUDA
    kernel's literal differ by an ulp, the larger of the two: the one value the two rules code differently."""
    ties = [max(a, b) for a, b in zip(ref.NF4_THRESHOLDS, NF4_CPU_BOUNDS) if a != b]
    t.view(-1)[:1 + len(ties)] = torch.tensor([1.0, *ties], dtype=t.dtype)


# name -> (family, dtype, config, edits of the saved weights: {weight name: edit}).
MODELS = {
    "llama_fp32": ("llama", torch.float32, dict(vocab_size=VOCAB, hidden_size=128, intermediate_size=344,
                                                num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                                tie_word_embeddings=False, initializer_range=0.1), {}),
    "qwen2_bf16": ("qwen2", torch.bfloat16, dict(vocab_size=VOCAB, hidden_size=128, intermediate_size=256,
                                                 num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                                 use_sliding_window=False, tie_word_embeddings=True,
                                                 initializer_range=0.1), {}),
    # 45 x 27 and 48 x 45 weights: odd element counts (a padding nibble) and partial last blocks; three all-zero
    # blocks; the four values on which bnb's CPU thresholds and the CUDA kernel's disagree.
    "llama_odd_zero": ("llama", torch.float32, dict(vocab_size=VOCAB, hidden_size=45, intermediate_size=27,
                                                    head_dim=16, num_hidden_layers=2, num_attention_heads=3,
                                                    num_key_value_heads=1, tie_word_embeddings=False,
                                                    initializer_range=0.1),
                       {"model.layers.0.self_attn.q_proj.weight": zero_first(2 * BLOCK + 7),
                        "model.layers.1.mlp.up_proj.weight": zero_first(BLOCK),
                        "model.layers.1.self_attn.v_proj.weight": threshold_ties}),
}
SCORE_LENGTHS = (96, 2, 33, 200)
BNB_ZERO_ABSMAX = struct.unpack("<f", struct.pack("<f", 1e-38))[0]  # clamp(min=1e-38) in bnb's CPU fallback


def ulp(x):
    """The float32 spacing at |x|."""
    return float(np.spacing(np.float32(abs(x))))


def bits(t):
    """A tensor's bytes as an integer tensor of the same width (compares -0/+0 and NaN payloads exactly)."""
    return t.contiguous().view({4: torch.int32, 2: torch.int16, 1: torch.uint8}[t.element_size()])


def same_bytes(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(bits(a), bits(b))


def codes_of(packed, n):
    """4-bit codes of a packed (.., 1) uint8 tensor, element 2k in the high nibble."""
    p = packed.reshape(-1).to(torch.int64)
    return torch.stack([p >> 4, p & 15], dim=1).reshape(-1)[:n]


# --- bitsandbytes' CPU quantize_blockwise, emulated: csrc/cpu_ops.cpp build_quantize_lut / norm_to_lut_index.
def lut_of(code):
    c = code.numpy().astype(np.float32)
    mid = (np.float32(0.5) * (c[:-1] + c[1:])).astype(np.float32)
    grid = (np.float32(-1.0) + (np.float32(2.0) * np.arange(65536, dtype=np.float32)) / np.float32(65535))
    return np.searchsorted(mid, grid.astype(np.float32), side="left").astype(np.int64)


def lut_codes(code, values):
    v = np.clip(np.asarray(values, dtype=np.float32), np.float32(-1), np.float32(1))
    i = ((v + np.float32(1)) * np.float32(0.5)).astype(np.float32) * np.float32(65535) + np.float32(0.5)
    return lut_of(code)[i.astype(np.float32).astype(np.uint16)]


def scaled(values, absmax):
    """float32 values * (1.0f / absmax), as both quantizers scale (one absmax per value)."""
    return (values * (1.0 / absmax)).tolist()


def write_base(out, family, dtype, config, edits):
    g.write_hf_model(out, family, dtype, **config)
    if edits:
        path = os.path.join(out, "model.safetensors")
        tensors = load_file(path)
        for name, edit in edits.items():
            edit(tensors[name])
        save_file(tensors, path, metadata={"format": "pt"})
    return out


def bnb_folder_tensors(base, quantized_names, dq):
    """bitsandbytes' quantize_4bit of each quantized weight, keyed as Params4bit saves it; the rest as in base.
    Also returns the undoubled absmax of each (bnb's own, before double quantization)."""
    out, absmax = {}, {}
    for name, t in base.items():
        if name not in quantized_names:
            out[name] = t
            continue
        packed, state = F.quantize_4bit(t, blocksize=BLOCK, compress_statistics=dq, quant_type="nf4")
        out[name] = packed
        for k, v in state.as_dict(packed=True).items():
            out[f"{name}.{k}"] = v
        absmax[name] = F.quantize_4bit(t, blocksize=BLOCK, quant_type="nf4")[1].absmax
    return out, absmax


def hf_quantized_folder(base_dir, out, dtype, dq):
    """transformers' own -bnb-4bit folder: from_pretrained with a BitsAndBytesConfig on CPU, save_pretrained."""
    qc = transformers.BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=dq,
                                         bnb_4bit_compute_dtype=torch.float32)
    model = transformers.AutoModelForCausalLM.from_pretrained(base_dir, quantization_config=qc, dtype=dtype,
                                                              device_map="cpu")
    model.save_pretrained(out)
    return load_file(os.path.join(out, "model.safetensors"))


class Nf4Diff:
    """Classifies the 4-bit codes (and absmax values) where the engine and bitsandbytes differ."""

    def __init__(self):
        self.zero_block_codes = self.threshold_ties = 0
        self.examples = []

    def add(self, name, x, ours_codes, bnb_codes, ours_absmax, bnb_absmax, bounds):
        """x: the weight as float32 (flat); absmax: the undoubled absmax vectors."""
        # All-zero blocks: absmax 0 on both sides (bnb clamps the stored value to 1e-38 in a partial last block
        # only); codes 0 (CUDA rule: 0 * (1/0) = NaN -> 0) against 7 (bnb CPU: 0 * (1/1e-38) = 0 -> 7).
        zero_blocks = {b for b in (ours_absmax == 0).nonzero().reshape(-1).tolist()
                       if (x[b * BLOCK:(b + 1) * BLOCK] == 0).all()}
        for b in (bits(ours_absmax) != bits(bnb_absmax)).nonzero().reshape(-1).tolist():
            if b not in zero_blocks or bnb_absmax[b].item() != BNB_ZERO_ABSMAX:
                self.fail(name, f"block {b}: absmax {ours_absmax[b].item()!r} vs bnb {bnb_absmax[b].item()!r}")
        for i in (ours_codes != bnb_codes).nonzero().reshape(-1).tolist():
            b = i // BLOCK
            o, t = int(ours_codes[i]), int(bnb_codes[i])
            if b in zero_blocks:
                if (o, t) == (0, 7):
                    self.zero_block_codes += 1
                else:
                    self.fail(name, f"element {i} in a zero block: codes {o} vs bnb {t}")
                continue
            a = ours_absmax[b].item()
            if a == 0 or not math.isfinite(a):
                self.fail(name, f"element {i}: codes {o} vs bnb {t} in a block of absmax {a!r}")
                continue
            # One step apart, with W/absmax (as either side scales it) within 2 ulp of a threshold between them.
            s_mul, s_div = ref.f32(x[i].item() * ref.recip(a)), ref.f32(x[i].item() / a)
            lo = min(o, t)
            if abs(o - t) == 1 and any(abs(s - th) <= 2 * ulp(th) for s in (s_mul, s_div)
                                       for th in (ref.NF4_THRESHOLDS[lo], bounds[lo])):
                self.threshold_ties += 1
            else:
                self.fail(name, f"element {i}: codes {o} vs bnb {t}, W/absmax {s_mul!r}")

    def fail(self, name, text):
        self.examples.append(f"{name}: {text}")


def compare_double_quant(c, name, ours, bnb, ours_absmax, bnb_absmax, figures):
    """Our nested state against bnb's (see the module doc); updates figures (max diffs, counts)."""
    ours_text = bytes(ours[f"{name}.quant_state.bitsandbytes__nf4"].tolist()).decode()
    ours_state = json.loads(ours_text)
    bnb_state = json.loads(bytes(bnb[f"{name}.quant_state.bitsandbytes__nf4"].tolist()).decode())
    # The text bitsandbytes would write for our values (json.dumps: the shortest repr of each float).
    if ours_text != json.dumps(ours_state):
        c.fail(f"{name}: quant_state text {ours_text!r} is not json.dumps of its own values "
               f"({json.dumps(ours_state)!r})")
    o_off, b_off = ours_state["nested_offset"], bnb_state["nested_offset"]
    d_off = abs(o_off - b_off)
    figures["offset ulps"] = max(figures["offset ulps"], d_off / ulp(b_off))
    figures["offsets differing"] += d_off != 0
    if d_off > ulp(b_off):
        c.fail(f"{name}: nested_offset {o_off!r} vs bnb {b_off!r} (more than 1 ulp)")
    if {**ours_state, "nested_offset": b_off} != bnb_state or list(ours_state) != list(bnb_state):
        c.fail(f"{name}: quant_state {ours_state} vs bnb {bnb_state}")
    o_nabs, b_nabs = ours[f"{name}.nested_absmax"], bnb[f"{name}.nested_absmax"]
    d_nabs = (o_nabs - b_nabs).abs().max().item()
    figures["nested_absmax ulps(offset)"] = max(figures["nested_absmax ulps(offset)"], d_nabs / ulp(b_off))
    if d_nabs > 2 * ulp(b_off):
        c.fail(f"{name}: nested_absmax differs by {d_nabs:.3e} (> 2 ulp of the offset)")
    o_map, b_map = ours[f"{name}.nested_quant_map"], bnb[f"{name}.nested_quant_map"]
    map_ulps = max(abs(a - b) / ulp(b) for a, b in zip(o_map.tolist(), b_map.tolist()))
    figures["map ulps"] = max(figures["map ulps"], map_ulps)
    figures["map values differing"] = max(figures["map values differing"], int((o_map != b_map).sum()))
    if map_ulps > 2:
        c.fail(f"{name}: nested_quant_map differs by {map_ulps} ulp (> 2)")
    # 8-bit codes: each side's own rule on its own inputs.
    o_codes, b_codes = ours[f"{name}.absmax"].to(torch.int64), bnb[f"{name}.absmax"].to(torch.int64)
    nested = 256
    o_norm = scaled(ours_absmax - o_off, o_nabs.repeat_interleave(nested)[:len(ours_absmax)])
    b_norm = scaled(bnb_absmax - b_off, b_nabs.repeat_interleave(nested)[:len(bnb_absmax)])
    cuda_rule = [ref.dquantize_dynamic(o_map.tolist(), v) for v in o_norm]
    if cuda_rule != o_codes.tolist():
        c.fail(f"{name}: the engine's absmax codes are not the CUDA kernel's rule (nf4_reference.dquantize_dynamic)")
    if lut_codes(b_map, b_norm).tolist() != b_codes.tolist():
        c.fail(f"{name}: bnb's absmax codes are not its CPU table's (the emulation in this check is wrong)")
    differing = int((o_codes != b_codes).sum())
    figures["absmax codes differing"] += differing
    figures["absmax codes"] += len(o_codes)
    figures["max code steps"] = max(figures["max code steps"], int((o_codes - b_codes).abs().max()))
    recovered = [F.dequantize_blockwise(ours[f"{name}.absmax"], absmax=o_nabs, code=o_map, blocksize=nested) + o_off,
                 F.dequantize_blockwise(bnb[f"{name}.absmax"], absmax=b_nabs, code=b_map, blocksize=nested) + b_off]
    rel = ((recovered[0] - recovered[1]).abs() / bnb_absmax.clamp_min(1e-30)).max().item()
    figures["recovered absmax rel"] = max(figures["recovered absmax rel"], rel)


def compare_folder(c, model_name, dq, ours, bnb, base, ours_absmax_of, bnb_absmax_of, bounds, figures):
    """Our folder's tensors against bitsandbytes' (module doc, `folder`)."""
    if set(ours) != set(bnb):
        c.fail(f"{model_name} dq={dq}: keys only ours {sorted(set(ours) - set(bnb))[:4]}, "
               f"only bnb {sorted(set(bnb) - set(ours))[:4]}")
    nf4 = Nf4Diff()
    quantized = [n for n in base if f"{n}.quant_state.bitsandbytes__nf4" in bnb]
    nested_keys = (".absmax", ".nested_absmax", ".nested_quant_map", ".quant_state.bitsandbytes__nf4")
    for key in sorted(set(ours) & set(bnb)):
        weight = next((n for n in quantized if key == n or key.startswith(n + ".")), None)
        if weight is not None and key != weight and dq and key[len(weight):] in nested_keys:
            continue  # compared in compare_double_quant
        c.compared += 1
        if key == weight:
            o, b = ours[key], bnb[key]
            if o.shape != b.shape or o.dtype != b.dtype:
                c.fail(f"{key}: {o.dtype} {tuple(o.shape)} vs bnb {b.dtype} {tuple(b.shape)}")
                continue
            n = base[key].numel()
            oc, bc = codes_of(o, n), codes_of(b, n)
            figures["codes"] += n
            figures["codes differing"] += int((oc != bc).sum())
            x = base[key].float().reshape(-1)
            nf4.add(key, x, oc, bc, ours_absmax_of[key], bnb_absmax_of[key], bounds)
            if n % 2 and (o.reshape(-1)[-1] & 15) != (b.reshape(-1)[-1] & 15):
                c.fail(f"{key}: the padding nibble differs")
            continue
        if key.endswith(".absmax") and not dq and weight is not None:
            continue  # absmax: compared with the codes (zero blocks allowed)
        if not same_bytes(ours[key], bnb[key]):
            if key.endswith(".bitsandbytes__nf4"):
                c.fail(f"{key}: {bytes(ours[key].tolist())!r} vs bnb {bytes(bnb[key].tolist())!r}")
            else:
                c.fail(f"{key}: bytes differ ({ours[key].dtype} {tuple(ours[key].shape)} vs "
                       f"{bnb[key].dtype} {tuple(bnb[key].shape)})")
    if dq:
        for name in quantized:
            c.compared += 1
            compare_double_quant(c, name, ours, bnb, ours_absmax_of[name], bnb_absmax_of[name], figures)
    figures["zero-block codes"] += nf4.zero_block_codes
    figures["threshold ties"] += nf4.threshold_ties
    for text in nf4.examples:  # Check.fail keeps the first 20
        c.fail(f"{model_name} dq={dq}: unexplained NF4 difference: {text}")


def linear4bit_weights(model):
    """name -> dequantize_4bit of every Linear4bit of a transformers model."""
    out = {}
    for name, module in model.named_modules():
        if isinstance(module, bitsandbytes.nn.Linear4bit):
            w = module.weight
            out[f"{name}.weight"] = F.dequantize_4bit(w.data, w.quant_state)
    return out


def recovered_absmax(tensors, name):
    """The block absmax as dequantize_4bit recovers it from saved tensors: stored, or dequantize_blockwise of the
    codes + nested_offset."""
    state = json.loads(bytes(tensors[f"{name}.quant_state.bitsandbytes__nf4"].tolist()).decode())
    if "nested_offset" not in state:
        return tensors[f"{name}.absmax"]
    return F.dequantize_blockwise(tensors[f"{name}.absmax"], absmax=tensors[f"{name}.nested_absmax"],
                                  code=tensors[f"{name}.nested_quant_map"], blocksize=state["nested_blocksize"]) + \
        torch.tensor(state["nested_offset"], dtype=torch.float32)


def bnb_dequantized(bnb, name):
    """dequantize_4bit of bnb's own saved state (QuantState.from_dict, as Params4bit loads it)."""
    qs = {k[len(name) + 1:]: v for k, v in bnb.items() if k.startswith(name + ".")}
    state = F.QuantState.from_dict(qs, device=torch.device("cpu"))
    return F.dequantize_4bit(bnb[name], state)


def check_load(c, model_name, dq, folder, ours, bnb, base, quantized_names, code4):
    """transformers loads our folder; dequantize_4bit of each Linear4bit is code value x recovered absmax of our
    saved state, bit for bit (so it reads our keys as they are), as bnb's is of its own; where the two states
    agree the weights are bit-equal, and the rest is counted (module doc, `load`). Returns the model."""
    model = g.hf_from_pretrained(folder, torch.float32).eval()
    mine_of = linear4bit_weights(model)
    faithful = equal = elements = agreeing = 0
    worst_abs = worst_rel = 0.0
    for name in sorted(quantized_names):
        c.compared += 1
        if name not in mine_of:
            c.fail(f"{model_name} dq={dq}: transformers did not load {name} as a Linear4bit")
            continue
        w = base[name]
        n = w.numel()
        mine, theirs = mine_of[name], bnb_dequantized(bnb, name)
        states = {}
        for side, got, tensors in (("ours", mine, ours), ("bnb", theirs, bnb)):
            codes, blocks = codes_of(tensors[name], n), recovered_absmax(tensors, name).repeat_interleave(BLOCK)[:n]
            states[side] = codes, blocks
            expected = (code4[codes] * blocks).to(w.dtype).reshape(w.shape)
            if same_bytes(got, expected):
                faithful += side == "ours"
            else:
                c.fail(f"{model_name} dq={dq} {name}: dequantize_4bit of the {side} state is not code x absmax")
        # Where both states hold the same code and the same absmax the weights must be equal (-0 == 0).
        agree = (states["ours"][0] == states["bnb"][0]) & (bits(states["ours"][1]) == bits(states["bnb"][1]))
        same = mine.reshape(-1) == theirs.reshape(-1)
        elements += n
        equal += int(same.sum())
        agreeing += int(agree.sum())
        if not same[agree].all():
            c.fail(f"{model_name} dq={dq} {name}: {int((~same[agree]).sum())} weights differ from bnb's where the "
                   f"states agree")
        d = (mine.float() - theirs.float()).abs().max().item()
        worst_abs = max(worst_abs, d)
        worst_rel = max(worst_rel, d / theirs.float().abs().max().item())
    c.rows.append([model_name, dq, f"{len(mine_of)}/{len(quantized_names)}", f"{faithful}/{len(quantized_names)}",
                   f"{agreeing}/{elements}", f"{equal}/{elements}", worst_abs, worst_rel])
    return model


def engine_scores(args, folder, tokens):
    scored, _ = engine(args, "score", "--model", folder, "--tokens", tokens, "--threads", args.threads)
    return [s for s in scored if "loss" in s and not s.get("summary")]


def check_scores(args, c, model_name, dq, folder, model, lines, tokens, compute):
    ours = engine_scores(args, folder, tokens)
    if len(ours) != len(lines):
        c.fail(f"{model_name} dq={dq} {compute}: {len(ours)} engine lines for {len(lines)}")
        return
    tolerance = 1e-4 if compute == "float32" else 1e-2
    worst = 0.0
    for mine, (loss, _) in zip(ours, hf_scores(model, lines, False)):
        diff = abs(mine["loss"] - loss) / abs(loss) if compute == "float32" else abs(mine["loss"] - loss)
        worst = max(worst, diff)
        c.compared += 1
    logits_rel = "-"
    if compute == "float32":
        dump_path = os.path.join(args.work, f"{model_name}-dq{int(dq)}-dump.safetensors")
        first = g.write_lines(os.path.join(args.work, f"{model_name}-first.jsonl"), lines[:1])
        engine(args, "dump", "--model", folder, "--tokens", first, "--out", dump_path)
        mine = load_file(dump_path)["logits"]
        with torch.no_grad():
            theirs = model(input_ids=torch.tensor(lines[:1])).logits[0]
        logits_rel = ((mine - theirs).abs().max() / theirs.abs().max()).item()
        c.compared += 1
        if logits_rel > 1e-4:
            c.fail(f"{model_name} dq={dq}: dump logits differ by {logits_rel:.3e} of the largest (> 1e-4)")
    c.rows.append([model_name, dq, compute, len(lines), worst, tolerance, logits_rel])
    if worst > tolerance:
        c.fail(f"{model_name} dq={dq} {compute}: max loss diff {worst:.3e} > {tolerance}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", required=True)
    ap.add_argument("--work", required=True, help="work folder (emptied first)")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    g.fresh(args.work)
    torch.set_num_threads(args.threads)
    version = engine(args, "--version")[1].stdout.splitlines()
    print(f"bitsandbytes {bitsandbytes.__version__}, transformers {transformers.__version__}, "
          f"torch {torch.__version__}, "
          f"{next((v for v in version if v.startswith('slipway-engine')), 'slipway-engine ?')}")
    global NF4_CPU_BOUNDS
    code4 = F.get_4bit_type("nf4", device="cpu")
    bounds = NF4_CPU_BOUNDS = ((code4[:-1] + code4[1:]) / 2).tolist()  # default/ops.py _get_4bit_quantize_bounds
    print(f"bnb CPU NF4 thresholds one ulp from the CUDA kernel's: "
          f"{sum(a != b for a, b in zip(bounds, ref.NF4_THRESHOLDS))} of 15")
    checks = {
        "bnb": Check("bnb", ["model", "double quant", "keys", "transformers' folder = quantize_4bit"]),
        "folder": Check("folder", ["model", "double quant", "keys", "codes", "differing", "zero-block",
                                   "threshold ties", "offsets differing", "offset ulps", "nested_absmax ulps",
                                   "map values differing", "absmax codes differing", "max code steps",
                                   "recovered absmax rel"]),
        "load": Check("load", ["model", "double quant", "Linear4bit", "= code x absmax of our keys",
                               "same code and absmax", "equal to bnb's", "max abs diff", "max diff (of max |W|)"]),
        "score": Check("score", ["model", "double quant", "compute", "lines", "max loss diff", "tolerance",
                                 "dump logits (of max)"]),
    }
    started = time.time()
    for model_name, (family, dtype, config, edits) in MODELS.items():
        base_dir = write_base(os.path.join(args.work, model_name), family, dtype, config, edits)
        base = load_file(os.path.join(base_dir, "model.safetensors"))
        lines = g.random_lines(VOCAB, SCORE_LENGTHS)
        tokens = g.write_lines(os.path.join(args.work, f"{model_name}-score.jsonl"), lines)
        ours_absmax_of = {}
        for dq in (False, True):
            tag = f"{model_name}-dq{int(dq)}"
            flags = ["--double-quant"] if dq else []
            ours_dir = os.path.join(args.work, f"{tag}-ours")
            engine(args, "quantize", "--model", base_dir, "--out", ours_dir, "--compute-dtype", "float32", *flags)
            ours = load_file(os.path.join(ours_dir, "model.safetensors"))
            hf = hf_quantized_folder(base_dir, os.path.join(args.work, f"{tag}-transformers"), dtype, dq)
            quantized_names = {k[:-len(".quant_state.bitsandbytes__nf4")] for k in hf
                               if k.endswith(".quant_state.bitsandbytes__nf4")}
            bnb, bnb_absmax_of = bnb_folder_tensors(base, quantized_names, dq)

            c = checks["bnb"]
            c.compared += len(hf)
            differing = [k for k in sorted(set(hf) | set(bnb)) if k not in hf or k not in bnb
                         or not same_bytes(hf[k], bnb[k])]
            c.rows.append([model_name, dq, len(hf), f"{len(hf) - len(differing)}/{len(hf)}"])
            if differing or not quantized_names:
                c.fail(f"{tag}: transformers' folder differs from quantize_4bit at {differing[:4]} "
                       f"({len(quantized_names)} quantized weights)")

            c = checks["folder"]
            if not dq:
                ours_absmax_of = {n: ours[f"{n}.absmax"] for n in quantized_names if f"{n}.absmax" in ours}
            figures = dict.fromkeys(["codes", "codes differing", "zero-block codes", "threshold ties",
                                     "offsets differing", "offset ulps", "nested_absmax ulps(offset)",
                                     "map values differing", "map ulps", "absmax codes differing", "absmax codes",
                                     "max code steps", "recovered absmax rel"], 0)
            compare_folder(c, model_name, dq, ours, bnb, base, ours_absmax_of, bnb_absmax_of, bounds, figures)
            dq_cells = ([figures["offsets differing"], figures["offset ulps"], figures["nested_absmax ulps(offset)"],
                         figures["map values differing"],
                         f"{figures['absmax codes differing']}/{figures['absmax codes']}", figures["max code steps"],
                         figures["recovered absmax rel"]] if dq else ["-"] * 7)
            c.rows.append([model_name, dq, len(ours), figures["codes"], figures["codes differing"],
                           figures["zero-block codes"], figures["threshold ties"], *dq_cells])

            model = check_load(checks["load"], model_name, dq, ours_dir, ours, bnb, base, quantized_names, code4)

            c = checks["score"]
            check_scores(args, c, model_name, dq, ours_dir, model, lines, tokens, "float32")
            bf16_dir = os.path.join(args.work, f"{tag}-ours-bf16")
            engine(args, "quantize", "--model", base_dir, "--out", bf16_dir, "--compute-dtype", "bfloat16", *flags)
            check_scores(args, c, model_name, dq, bf16_dir, g.hf_from_pretrained(bf16_dir, torch.float32).eval(),
                         lines, tokens, "bfloat16")
    failures, summary = [], []
    for name, c in checks.items():
        print(f"\n## {name}")
        g.table(c.headers, c.rows)
        if c.compared == 0:
            c.fail("nothing was compared")
        failures += c.failures
        summary.append([name, c.compared, len(c.failures), "FAIL" if c.failures else "PASS"])
    print(f"\n## summary ({time.time() - started:.1f} s)")
    g.table(["check", "compared", "failures", "result"], summary)
    return g.verdict(failures, args.work, {row[0]: row[1] for row in summary},
                     compared=sum(c.compared for c in checks.values()))


if __name__ == "__main__":
    sys.exit(main())
