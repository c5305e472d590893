#!/usr/bin/env python3
"""Checks a "-bnb-4bit" folder written by `slipway-engine quantize` against the independent NF4 reference
(nf4_reference.py, written from bitsandbytes' source), key by key and bit for bit: for every decoder linear
weight of the fp32 BASE folder, the reference's quantize_4bit (and, with nested quant_state, its
compress_statistics double quantization) must give exactly the stored weight, absmax, quant_map,
nested_absmax, nested_quant_map and quant_state JSON; every other tensor must equal the base's; config.json's
quantization_config must be bitsandbytes' 4-bit nf4.

    check_bnb_folder.py BASE_DIR QUANTIZED_DIR
Plain Python (no torch), like the reference.
"""
import json
import struct
import sys

import nf4_reference as ref


def read_safetensors(path):
    """name -> (dtype, shape, raw bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, e in header.items():
        if name != "__metadata__":
            begin, end = e["data_offsets"]
            out[name] = (e["dtype"], e["shape"], data[8 + n + begin:8 + n + end])
    return out


def f32s(raw):
    return list(struct.unpack("<%df" % (len(raw) // 4), raw))


def main():
    base_dir, q_dir = sys.argv[1], sys.argv[2]
    config = json.load(open(f"{q_dir}/config.json"))
    qc = config["quantization_config"]
    assert qc["quant_method"] == "bitsandbytes" and qc["load_in_4bit"] and qc["bnb_4bit_quant_type"] == "nf4", qc
    base = read_safetensors(f"{base_dir}/model.safetensors")
    quantized = read_safetensors(f"{q_dir}/model.safetensors")
    code = ref.create_dynamic_map(signed=True)
    checked, failures = 0, []

    def expect(key, got, want):
        if got != want:
            failures.append(key)

    suffixes = (".absmax", ".quant_map", ".nested_absmax", ".nested_quant_map", ".quant_state.bitsandbytes__nf4")
    for name, (dtype, shape, raw) in sorted(base.items()):
        state_key = name + ".quant_state.bitsandbytes__nf4"
        if state_key not in quantized:
            expect(name, quantized.get(name), (dtype, shape, raw))  # kept as it was (fp32 in, fp32 out)
            continue
        assert dtype == "F32", f"{name}: the check quantizes fp32 bases, got {dtype}"
        state = json.loads(quantized[state_key][2].decode())
        nested = "nested_offset" in state
        x = f32s(raw)
        packed, absmax = ref.quantize_nf4(x, state["blocksize"])
        expect(name, quantized[name], ("U8", [len(packed), 1], packed))
        expect(name + ".quant_map", f32s(quantized[name + ".quant_map"][2]), [float(v) for v in ref.NF4])
        want_state = {"quant_type": "nf4", "blocksize": 64, "dtype": "float32", "shape": shape}
        if nested:
            codes, nested_absmax, offset = ref.double_quantize(absmax, code)
            expect(name + ".absmax", quantized[name + ".absmax"][2], bytes(codes))
            expect(name + ".nested_absmax", f32s(quantized[name + ".nested_absmax"][2]), nested_absmax)
            expect(name + ".nested_quant_map", f32s(quantized[name + ".nested_quant_map"][2]), code)
            want_state.update(nested_blocksize=256, nested_dtype="float32", nested_offset=offset)
        else:
            expect(name + ".absmax", f32s(quantized[name + ".absmax"][2]), absmax)
        # The JSON text itself, as json.dumps writes it (the bytes bitsandbytes' from_dict reads).
        expect(state_key, quantized[state_key][2].decode(), json.dumps(want_state))
        checked += 1
    extra = set(quantized) - set(base) - {n + s for n in base for s in suffixes}
    if extra:
        failures.append(f"unexpected keys {sorted(extra)}")
    if failures:
        print(f"FAIL: {len(failures)} keys differ from the reference: {failures[:8]}", file=sys.stderr)
        return 1
    print(f"OK: {checked} quantized weights and {len(base) - checked} other tensors equal the reference's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
