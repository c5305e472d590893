"""Shared by the tests/gpu checks: running slipway-engine, its run configs and MLLOG lines, the engine's batch
order reproduced from its token cache (so HF is fed exactly the engine's batches), tables and verdicts.

The batch order, as the engine's trainer takes it (engine/train/trainer.cpp, engine/data/sampler.cpp): one
rank; each epoch the training blocks are shuffled by Fisher-Yates with SplitMix64 seeded from
mix(seed) ^ mix(epoch + 1) and Lemire's unbiased draw; each micro-step takes the next
per_device_train_batch_size blocks, a new epoch starts when fewer remain; a step is
gradient_accumulation_steps micro-steps and its loss the mean of the micro-steps' mean token losses.
"""
import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ENGINE = os.environ.get("SLIPWAY_ENGINE", os.path.join(REPO, "build", "bin", "slipway-engine"))
TOKENIZER = os.path.join(REPO, "resources", "demo", "tokenizer.json")
CORPUS = os.path.join(REPO, "resources", "demo", "corpus.jsonl")
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
MASK64 = (1 << 64) - 1

# Dense bf16 peak FLOP/s (no sparsity) from NVIDIA's data sheets, by a substring of the device name.
PEAK_BF16_FLOPS = [("H200", 989e12), ("H100 PCIe", 756e12), ("H100", 989e12), ("A100", 312e12),
                   ("L40S", 362e12), ("A10", 125e12)]


def fresh(out):
    """An empty output folder (a check starts from nothing)."""
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    return out


def start_check(device=False, exact_fp32=False):
    """A check's command line (--out DIR, and --device cpu|cuda when asked) with DIR emptied; exact_fp32 turns
    TF32 off for this process's matmuls (LibTorch's default, which the engine keeps)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    if device:
        ap.add_argument("--device", choices=["cpu", "cuda"], required=True)
    a = ap.parse_args()
    fresh(a.out)
    if exact_fp32:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    return a


def peak_bf16_flops(device_name):
    for key, flops in PEAK_BF16_FLOPS:
        if key in device_name:
            return flops
    return None


def engine(*args, check=True, **kw):
    """Runs slipway-engine; returns the CompletedProcess (stdout: MLLOG and results, stderr: progress)."""
    r = subprocess.run([ENGINE, *map(str, args)], capture_output=True, text=True, **kw)
    if check and r.returncode != 0:
        sys.stderr.write(r.stdout[-4000:] + r.stderr[-4000:])
        raise SystemExit(f"slipway-engine {args[0]} failed with exit code {r.returncode}")
    return r


def mllog(text):
    """The MLLOG events of a log text, in order."""
    return [json.loads(line.split(":::MLLOG ", 1)[1]) for line in text.splitlines() if ":::MLLOG " in line]


def values(events, key):
    return [e["value"] for e in events if e["key"] == key]


def run_config(out, model, *, steps, batch, block, accumulation=1, lr=1e-3, warmup=3, seed=1234, dropout=0.0,
               bf16=False, gpu=False, r=8, alpha=16, save_steps=None, grad_checkpointing=False, train_file=CORPUS,
               base_dtype="auto", method="lora"):
    """A LoRA run on the demo corpus (one rank, blocks of `block` tokens packed end to end, no validation),
    every step logged. Written to <out>/run.json; returns its path."""
    config = {
        "schema": "slipway.run/1",
        "name": os.path.basename(out),
        "model": {"path": model, "dtype": "float32", "base_dtype": base_dtype},
        "tokenizer": {"path": TOKENIZER},
        "data": {"train_file": train_file, "block_size": block, "split": "concat",
                 "validation_split_percentage": 0, "cache_dir": os.path.join(out, "cache")},
        "training": {
            "learning_rate": lr, "weight_decay": 0.01, "adam_beta1": 0.9, "adam_beta2": 0.999,
            "adam_epsilon": 1e-8, "max_grad_norm": 1.0, "max_steps": steps, "lr_scheduler_type": "cosine",
            "warmup_steps": warmup, "per_device_train_batch_size": batch,
            "gradient_accumulation_steps": accumulation, "bf16": bf16, "seed": seed, "logging_steps": 1,
            "save_steps": save_steps or steps, "output_dir": os.path.join(out, "run"),
            "overwrite_output_dir": True, "gradient_checkpointing": grad_checkpointing,
        },
        "adapter": {"method": method, "r": r, "lora_alpha": alpha, "lora_dropout": dropout,
                    "target_modules": LORA_TARGETS},
        "eval": {"metric": "loss"},
        "slurm": {"nodes": 1, "gpus_per_node": 1 if gpu else 0, "ntasks_per_node": 1},
    }
    if method == "qlora":  # QLoRA's usual settings (bitsandbytes' NF4, double quantization, bf16 products)
        config["adapter"].update(bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                                 bnb_4bit_compute_dtype="bfloat16" if bf16 else "float32")
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "run.json")
    with open(path, "w") as f:
        json.dump(config, f, indent=1)
    return path


def write_hf_model(out, arch="llama", dtype=torch.float32, seed=0, device=None, **config):
    """A random model written by transformers' own save_pretrained (safetensors): Llama, Mistral, Qwen2 or
    Qwen3 ForCausalLM with `config` (that family's Config arguments). HF initializes biases to zero, so they
    are drawn at random here for the check to see them. `device` is where it is initialized (a GPU for large
    shapes). Returns `out`."""
    import transformers
    config_class, model_class = {
        "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
        "mistral": (transformers.MistralConfig, transformers.MistralForCausalLM),
        "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM),
        "qwen3": (transformers.Qwen3Config, transformers.Qwen3ForCausalLM),
    }[arch]
    torch.manual_seed(seed)
    with torch.device(device) if device else contextlib.nullcontext():  # torch.device as a context: torch 2
        model = model_class(config_class(**config)).to(dtype)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(".bias") or name.endswith("_norm.weight"):
                p.normal_(1.0 if name.endswith("norm.weight") else 0.0, 0.1)
    # safetensors is save_pretrained's default since transformers 4.35; v5 removed the safe_serialization argument.
    model.save_pretrained(out)
    del model
    assert any(name.endswith(".safetensors") for name in os.listdir(out)), f"{out}: no safetensors written"
    return out


def hf_from_pretrained(folder, dtype):
    """AutoModelForCausalLM.from_pretrained in `dtype`: transformers 4.56+ names the argument dtype, earlier
    versions torch_dtype (and would pass an unknown name on to the config, loading float32)."""
    import transformers
    major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    key = "dtype" if (major, minor) >= (4, 56) else "torch_dtype"
    return transformers.AutoModelForCausalLM.from_pretrained(folder, **{key: dtype})


def hf_causal_lm(folder, dtype=torch.float32, adapter=None, device="cuda"):
    """An HF folder loaded by transformers (and a PEFT adapter on it), in eval mode on `device`."""
    model = hf_from_pretrained(folder, dtype).to(device)
    if adapter:
        import peft
        model = peft.PeftModel.from_pretrained(model, adapter).to(device)
    return model.eval()


def lm_batch(rows):
    """The data collator of the HF Trainer runs: rows (T,) ids -> input_ids (B, T) and labels, the same ids with
    the first position -100. HF shifts inside the model, so the first label is never predicted and the loss is
    unchanged; but Trainer's num_items_in_batch (the token count its summed loss is divided by under gradient
    accumulation) counts labels != -100: older transformers over the unshifted labels (B T), newer over
    labels[..., 1:] (B (T - 1)). With the first label -100 both count the B (T - 1) predicted tokens, so HF's
    gradient is exactly the mean over the step's predictions, as the engine's (the mean of equal micro-batch means)."""
    ids = torch.stack(rows)
    labels = ids.clone()
    labels[:, 0] = -100
    return {"input_ids": ids, "labels": labels}


def random_lines(vocab, lengths, seed=11):
    """Token lines {"ids": [...]} of the given lengths, reproducible."""
    rng = torch.Generator().manual_seed(seed)
    return [torch.randint(0, vocab, (n,), generator=rng).tolist() for n in lengths]


def write_lines(path, lines):
    with open(path, "w") as f:
        for ids in lines:
            f.write(json.dumps({"ids": ids}) + "\n")
    return path


def head_of_corpus(path, lines):
    """The first `lines` documents of the demo corpus, as a JSONL file at `path` (returned)."""
    with open(CORPUS) as src, open(path, "w") as dst:
        for _, line in zip(range(lines), src):
            dst.write(line)
    return path


def train(config_path, *extra, threads=None):
    """`slipway-engine train`: (MLLOG events, stderr text)."""
    args = ["train", config_path, *extra]
    if threads:
        args += ["--threads", threads]
    r = engine(*args)
    return mllog(r.stdout), r.stderr


def train_until_sigterm(config_path, after_step, *extra):
    """Starts `train`, sends SIGTERM once the MLLOG shows step `after_step`; returns (exit code, events)."""
    p = subprocess.Popen([ENGINE, "train", config_path, *map(str, extra)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    lines = []
    for line in p.stdout:
        lines.append(line)
        if ":::MLLOG " in line and mllog(line)[0]["key"] == "train_loss" and \
                mllog(line)[0]["metadata"].get("step_num") == after_step:
            p.send_signal(signal.SIGTERM)
            break
    out, err = p.communicate(timeout=600)
    lines.append(out)
    return p.returncode, mllog("".join(lines)), err


def token_cache(cache_root):
    """The one prepared cache under `cache_root`: (meta, train tokens (N,) int64, train block offsets)."""
    folders = [d for d in os.listdir(cache_root) if os.path.exists(os.path.join(cache_root, d, "meta.json"))]
    assert len(folders) == 1, f"{cache_root}: expected one token cache, found {folders}"
    folder = os.path.join(cache_root, folders[0])
    with open(os.path.join(folder, "meta.json")) as f:
        meta = json.load(f)
    with open(os.path.join(folder, "train.tokens"), "rb") as f:
        tokens = torch.frombuffer(bytearray(f.read()), dtype=torch.int32).to(torch.int64)  # ids < 2^31
    with open(os.path.join(folder, "train.blocks"), "rb") as f:
        offsets = torch.frombuffer(bytearray(f.read()), dtype=torch.int64)
    return meta, tokens, offsets


def _mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def shuffled_indices(n, seed, epoch):
    """engine/data/sampler.cpp's shuffled_indices, transcribed."""
    order = list(range(n))
    state = _mix(seed & MASK64) ^ _mix(epoch + 1)

    def below(bound):
        nonlocal state
        while True:
            state = (state + 0x9E3779B97F4A7C15) & MASK64
            m = _mix(state) * bound
            low = m & MASK64
            if low >= bound or low >= ((1 << 64) - bound) % bound:
                return m >> 64

    for i in range(n, 1, -1):
        j = below(i)
        order[i - 1], order[j] = order[j], order[i - 1]
    return order


def engine_batches(cache_root, *, seed, steps, batch, accumulation):
    """The engine's micro-batches of one rank: steps x accumulation tensors of (batch, block_size) ids."""
    meta, tokens, offsets = token_cache(cache_root)
    block = meta["block_size"]
    epoch, order, cursor, out = 0, shuffled_indices(len(offsets), seed, 0), 0, []
    for _ in range(steps):
        micro = []
        for _ in range(accumulation):
            if cursor + batch > len(order):
                epoch += 1
                order, cursor = shuffled_indices(len(offsets), seed, epoch), 0
            rows = [tokens[offsets[i]:offsets[i] + block] for i in order[cursor:cursor + batch]]
            micro.append(torch.stack(rows))  # (B, T)
            cursor += batch
        out.append(micro)
    return out


def table(headers, rows):
    """Prints a markdown table; floats in short scientific or fixed form."""
    def cell(v):
        if isinstance(v, float):
            return f"{v:.3e}" if v != 0 and (abs(v) < 1e-2 or abs(v) >= 1e5) else f"{v:.4f}"
        return str(v)
    print("| " + " | ".join(headers) + " |")
    print("|" + "---|" * len(headers))
    for row in rows:
        print("| " + " | ".join(cell(v) for v in row) + " |")


def verdict(failures, out_dir=None, figures=None, compared=0):
    """Prints PASS or FAIL with the failures, saves figures as <out_dir>/result.json; returns the exit code.
    `compared` is how many items (lines, steps, rows, sizes) the check compared, written as figures["compared"]:
    a check that compared nothing fails, since agreement over nothing proves nothing (tests/gpu/summary.py
    reads the count too)."""
    failures = list(failures)
    if not isinstance(compared, int) or compared < 1:
        failures.append(f"compared nothing ({compared!r} items): the check ran nothing")
    figures = {**(figures or {}), "compared": compared}
    if out_dir is not None:
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "result.json"), "w") as f:
            json.dump({"pass": not failures, "failures": failures, "figures": figures,
                       "time": time.strftime("%Y-%m-%dT%H:%M:%S")}, f, indent=1)
    for failure in failures:
        print(f"  - {failure}")
    print("FAIL" if failures else "PASS")
    return 1 if failures else 0
