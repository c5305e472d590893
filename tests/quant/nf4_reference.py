#!/usr/bin/env python3
"""Independent NF4 reference, written from bitsandbytes' source (not from Slipway's C++).

Plain Python (no numpy, no torch): float32 arithmetic is emulated by rounding every double result to
float32 once, which is exact for one +, -, * or / of two float32 values (53 >= 2*24 + 2).

    nf4_reference.py INPUT DTYPE BLOCKSIZE OUTDIR
INPUT: raw little-endian values, DTYPE f32 (float32) or bf16 (uint16 bit patterns), or absmax (float32
absmax values: only the double quantization, in blocks of BLOCKSIZE). Writes to OUTDIR:
    packed.u8         quantize_4bit(..., quant_type="nf4") packed bytes, (n + 1) // 2
    absmax.f32        the block absmax values
    deq.f32, deq.bf16 dequantize_4bit into float32 and into bfloat16 (uint16 bits)
    dq_codes.u8, dq_nested_absmax.f32, dq_quant_map.f32, dq_offset.f32
                      compress_statistics=True: the absmax quantized blockwise (256) with the dynamic map
    dq_absmax.f32     the absmax values recovered from the double quantization
    deq_dq.f32        dequantize_4bit through the recovered absmax
    quant_state.json  the `quant_state.bitsandbytes__nf4` JSON text (shape (n), nested)
    torch_packed.u8, torch_absmax.f32, torch_deq.f32
                      (only when torch imports, finite input, no zero block) the same through torch's float math
    torch_map.f32     (only when torch >= 2 imports) bitsandbytes' create_dynamic_map run verbatim on torch

Sources (bitsandbytes-foundation/bitsandbytes, see engine/quant/README.md for the lines):
csrc/kernels.cu nf4_dequantization_lut, dQuantizeNF4, dQuantize<0>, kQuantizeBlockwise,
kDequantizeBlockwise; bitsandbytes/functional.py create_dynamic_map, quantize_4bit, quantize_blockwise,
dequantize_blockwise; bitsandbytes/backends/cuda/ops.py quantize_4bit (output shapes).
"""
import bisect
import json
import math
import os
import struct
from fractions import Fraction
import sys

FLT_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]


def f32(x):
    """Round a double to the nearest float32 (ties to even), as a C cast does."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def f32_literal(text):
    """A C float literal such as `0.1202552504837513f`: the decimal rounded once, straight to float32.
    (Rounding through a double first gives a different float for 4 of dQuantizeNF4's 15 thresholds.)"""
    exact = Fraction(text)
    near = f32(float(text))
    u = struct.unpack("<I", struct.pack("<f", near))[0]
    candidates = [struct.unpack("<f", struct.pack("<I", v))[0] for v in (u - 1, u, u + 1)
                  if 0 <= v <= 0xFFFFFFFF]
    return min(candidates, key=lambda c: (abs(Fraction(c) - exact), struct.unpack("<I", struct.pack("<f", c))[0] & 1))


def fmaxf(a, b):
    """C fmaxf: a NaN operand is ignored."""
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return a if a >= b else b


def recip(a):
    """float32 1.0f / a."""
    if a == 0.0:
        return math.copysign(math.inf, a)
    return f32(1.0 / a)


def mul(a, b):
    if (a == 0.0 and math.isinf(b)) or (b == 0.0 and math.isinf(a)):
        return math.nan
    return f32(a * b)


# csrc/kernels.cu nf4_dequantization_lut (float literals; functional.py get_4bit_type's list rounds to the same).
NF4 = [f32_literal(v) for v in (
    "-1.0", "-0.6961928009986877", "-0.5250730514526367", "-0.39491748809814453", "-0.28444138169288635",
    "-0.18477343022823334", "-0.09105003625154495", "0.0", "0.07958029955625534", "0.16093020141124725",
    "0.24611230194568634", "0.33791524171829224", "0.44070982933044434", "0.5626170039176941",
    "0.7229568362236023", "1.0")]

# The 15 thresholds of dQuantizeNF4's decision tree, in ascending order (float literals): the code is the
# number of thresholds that x is strictly greater than (every node of the tree tests `x > t`).
NF4_THRESHOLDS = [f32_literal(v) for v in (
    "-0.8480964004993439", "-0.6106329262256622", "-0.4599952697753906", "-0.33967943489551544",
    "-0.23460740596055984", "-0.13791173323988914", "-0.045525018125772476", "0.03979014977812767",
    "0.1202552504837513", "0.2035212516784668", "0.2920137718319893", "0.3893125355243683",
    "0.5016634166240692", "0.6427869200706482", "0.8614784181118011")]


def nf4_code(x):
    if math.isnan(x):
        return 0  # every `x > t` is false
    return bisect.bisect_left(NF4_THRESHOLDS, x)  # count of thresholds t < x


def linspace_f32(start, end, steps):
    """torch.linspace(start, end, steps, dtype=float32) on CPU, scalar path of aten's linspace kernel."""
    start, end = f32(start), f32(end)
    step = f32(f32(end - start) / (steps - 1))
    halfway = steps // 2
    return [f32(start + f32(step * i)) if i < halfway else f32(end - f32(step * (steps - i - 1)))
            for i in range(steps)]


def create_dynamic_map(signed=True, max_exponent_bits=7, total_bits=8):
    """functional.py create_dynamic_map with torch's float32 tensor ops emulated."""
    data = []
    non_sign_bits = total_bits - 1
    additional_items = 2 ** (non_sign_bits - max_exponent_bits) - 1
    assert additional_items == 0 and signed
    for i in range(max_exponent_bits):
        fraction_items = int(2 ** (i + non_sign_bits - max_exponent_bits) + 1)
        boundaries = linspace_f32(0.1, 1, fraction_items)
        means = [f32(f32(boundaries[k] + boundaries[k + 1]) / 2.0) for k in range(fraction_items - 1)]
        scale = f32(10 ** (-(max_exponent_bits - 1) + i))  # a Python scalar times a float32 tensor
        data += [f32(scale * m) for m in means]
        data += [f32(-scale * m) for m in means]
    data.append(0.0)
    data.append(1.0)
    assert len(data) == 2 ** total_bits
    data.sort()
    return data


def torch_dynamic_map():
    """bitsandbytes' create_dynamic_map, verbatim, on torch (a cross-check of the emulation above)."""
    import torch
    max_exponent_bits, total_bits, signed = 7, 8, True
    data = []
    non_sign_bits = total_bits - 1
    additional_items = 2 ** (non_sign_bits - max_exponent_bits) - 1
    for i in range(max_exponent_bits):
        fraction_items = int(2 ** (i + non_sign_bits - max_exponent_bits) + 1 if signed
                             else 2 ** (i + non_sign_bits - max_exponent_bits + 1) + 1)
        boundaries = torch.linspace(0.1, 1, fraction_items, dtype=torch.float32)
        means = (boundaries[:-1] + boundaries[1:]) / 2.0
        data += ((10 ** (-(max_exponent_bits - 1) + i)) * means).tolist()
        if signed:
            data += (-(10 ** (-(max_exponent_bits - 1) + i)) * means).tolist()
    assert additional_items == 0
    data.append(0)
    data.append(1.0)
    data.sort()
    return torch.tensor(data, dtype=torch.float32).tolist()


def dquantize_dynamic(code, x):
    """kernels.cu dQuantize<0>: binary search from pivot 127, then the midpoint with the neighbour."""
    pivot, upper_pivot, lower_pivot = 127, 255, 0
    lower, upper = -1.0, 1.0
    val = code[pivot]
    i = 64
    while i > 0:
        if x > val:
            lower_pivot, lower = pivot, val
            pivot += i
        else:
            upper_pivot, upper = pivot, val
            pivot -= i
        val = code[pivot]
        i >>= 1
    if upper_pivot == 255:
        upper = code[upper_pivot]
    if lower_pivot == 0:
        lower = code[lower_pivot]
    if x > val:
        midpoint = f32(f32(upper + val) * 0.5)
        return upper_pivot if x > midpoint else pivot
    midpoint = f32(f32(lower + val) * 0.5)
    return lower_pivot if x < midpoint else pivot


def block_absmax(vals):
    m = -FLT_MAX  # kQuantizeBlockwise: local_abs_max = -FLT_MAX, then fmaxf(.., fabsf(v))
    for v in vals:
        m = fmaxf(m, abs(v))
    return m


def quantize_nf4(x, blocksize):
    n = len(x)
    blocks = -(n // -blocksize)
    absmax = []
    codes = []
    for b in range(blocks):
        vals = x[b * blocksize:(b + 1) * blocksize]
        amax = block_absmax(vals)
        absmax.append(amax)
        scale = recip(amax)  # smem_absmax_value[0] = 1.0f / local_abs_max
        if len(vals) % 2:
            vals = vals + [0.0]  # BlockLoad pads with (T)0.0f; an odd tail byte keeps the padding's code
        codes += [nf4_code(mul(v, scale)) for v in vals]
    packed = bytes((codes[2 * k] << 4) | codes[2 * k + 1] for k in range(len(codes) // 2))
    assert len(packed) == (n + 1) // 2
    return packed, absmax


def dequantize_nf4(packed, absmax, n, blocksize):
    out = []
    for k in range(n):
        byte = packed[k // 2]
        code = byte >> 4 if k % 2 == 0 else byte & 0x0F
        out.append(mul(NF4[code], absmax[k // blocksize]))
    return out


def to_bf16_bits(x):
    if math.isnan(x):
        return 0x7FC0
    u = struct.unpack("<I", struct.pack("<f", x))[0]
    hi, lo = u >> 16, u & 0xFFFF
    if lo > 0x8000 or (lo == 0x8000 and (hi & 1)):
        hi += 1
    return hi & 0xFFFF


def double_quantize(absmax, code, blocksize=256):
    # quantize_4bit(compress_statistics=True): offset = _absmax.mean(); quantize_blockwise(_absmax - offset,
    # blocksize=256). The mean: summed in double in order, rounded once to float32 (stated in the README).
    s = 0.0
    for a in absmax:
        s += a
    offset = f32(s / len(absmax))
    centred = [f32(a - offset) for a in absmax]
    nested_absmax, codes = [], []
    for b in range(-(len(centred) // -blocksize)):
        vals = centred[b * blocksize:(b + 1) * blocksize]
        amax = block_absmax(vals)
        nested_absmax.append(amax)
        scale = recip(amax)
        codes += [dquantize_dynamic(code, mul(v, scale)) for v in vals]
    return codes, nested_absmax, offset


def dequantize_absmax(codes, nested_absmax, code, offset, blocksize=256):
    # dequantize_blockwise: code[q] * absmax[block]; then `absmax += quant_state.offset`.
    return [f32(mul(code[q], nested_absmax[i // blocksize]) + offset) for i, q in enumerate(codes)]


def write_f32(path, vals):
    with open(path, "wb") as f:
        f.write(struct.pack("<%df" % len(vals), *vals))


def torch_quantize(x, blocksize):
    """A second reference with torch doing the float math (finite inputs only): abs().amax per block,
    1.0 / absmax, a product, torch.bucketize over the same thresholds (right=False: ties go down)."""
    import torch
    n = len(x)
    blocks = -(n // -blocksize)
    t = torch.zeros(blocks * blocksize, dtype=torch.float32)
    t[:n] = torch.tensor(x, dtype=torch.float32)
    t = t.view(blocks, blocksize)
    absmax = t.abs().amax(dim=1)
    scaled = t * (1.0 / absmax).view(-1, 1)
    codes = torch.bucketize(scaled.reshape(-1), torch.tensor(NF4_THRESHOLDS, dtype=torch.float32))
    codes = codes[: n + (n % 2)].to(torch.uint8)  # an odd n keeps the padding's code
    packed = (codes[0::2] << 4) | codes[1::2]
    lut = torch.tensor(NF4, dtype=torch.float32)
    deq = lut[codes[:n].long()] * absmax.repeat_interleave(blocksize)[:n]
    return bytes(packed.tolist()), absmax.tolist(), deq.tolist()


def main():
    inp, dtype, blocksize, outdir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    raw = open(inp, "rb").read()
    if dtype == "f32":
        x = list(struct.unpack("<%df" % (len(raw) // 4), raw))
    elif dtype == "bf16":
        bits = struct.unpack("<%dH" % (len(raw) // 2), raw)
        x = [struct.unpack("<f", struct.pack("<I", b << 16))[0] for b in bits]
    elif dtype == "absmax":  # the input is an absmax vector: only the double quantization (dq_* files)
        absmax = list(struct.unpack("<%df" % (len(raw) // 4), raw))
        code = create_dynamic_map()
        codes, nested_absmax, offset = double_quantize(absmax, code, blocksize)
        os.makedirs(outdir, exist_ok=True)
        open(os.path.join(outdir, "dq_codes.u8"), "wb").write(bytes(codes))
        write_f32(os.path.join(outdir, "dq_nested_absmax.f32"), nested_absmax)
        write_f32(os.path.join(outdir, "dq_offset.f32"), [offset])
        write_f32(os.path.join(outdir, "dq_absmax.f32"), dequantize_absmax(codes, nested_absmax, code, offset, blocksize))
        return
    else:
        sys.exit("dtype must be f32, bf16 or absmax")
    n = len(x)
    packed, absmax = quantize_nf4(x, blocksize)
    deq = dequantize_nf4(packed, absmax, n, blocksize)
    code = create_dynamic_map()
    codes, nested_absmax, offset = double_quantize(absmax, code)
    dq_absmax = dequantize_absmax(codes, nested_absmax, code, offset)
    deq_dq = dequantize_nf4(packed, dq_absmax, n, blocksize)
    os.makedirs(outdir, exist_ok=True)
    open(os.path.join(outdir, "packed.u8"), "wb").write(packed)
    write_f32(os.path.join(outdir, "absmax.f32"), absmax)
    write_f32(os.path.join(outdir, "deq.f32"), deq)
    with open(os.path.join(outdir, "deq.bf16"), "wb") as f:
        f.write(struct.pack("<%dH" % n, *[to_bf16_bits(v) for v in deq]))
    open(os.path.join(outdir, "dq_codes.u8"), "wb").write(bytes(codes))
    write_f32(os.path.join(outdir, "dq_nested_absmax.f32"), nested_absmax)
    write_f32(os.path.join(outdir, "dq_quant_map.f32"), code)
    write_f32(os.path.join(outdir, "dq_offset.f32"), [offset])
    write_f32(os.path.join(outdir, "dq_absmax.f32"), dq_absmax)
    write_f32(os.path.join(outdir, "deq_dq.f32"), deq_dq)
    # QuantState.as_dict(packed=True) non-tensor items, json.dumps'd (pack_dict_to_tensor).
    state = {"quant_type": "nf4", "blocksize": blocksize, "dtype": "bfloat16" if dtype == "bf16" else "float32",
             "shape": [n], "nested_blocksize": 256, "nested_dtype": "float32", "nested_offset": offset}
    open(os.path.join(outdir, "quant_state.json"), "w").write(json.dumps(state))
    if all(math.isfinite(v) for v in x) and all(a > 0 for a in absmax):
        try:
            t_packed, t_absmax, t_deq = torch_quantize(x, blocksize)
            open(os.path.join(outdir, "torch_packed.u8"), "wb").write(t_packed)
            write_f32(os.path.join(outdir, "torch_absmax.f32"), t_absmax)
            write_f32(os.path.join(outdir, "torch_deq.f32"), t_deq)
        except ImportError:
            pass
    try:
        import torch
        # torch >= 2 builds linspace with the scalar loop emulated above; 1.13's vectorized loop differs.
        if int(torch.__version__.split(".")[0]) >= 2:
            write_f32(os.path.join(outdir, "torch_map.f32"), torch_dynamic_map())
    except ImportError:
        pass


if __name__ == "__main__":
    main()
