#!/usr/bin/env python3
"""The engine's LoRA adapters against PEFT itself (PyPI, pinned in tests/reference/requirements.txt) on CPU:
ctest's torch_latest_peft, run in Debian forky's root by tests/compat/torch2.sh pyref (torch and transformers
are the root's). Tiny random Llama-family models are written by transformers' save_pretrained
(tests/compat/hf_reference.py's FAMILIES: llama3, untied with llama3 RoPE scaling; llama2_tied), and:

  engine->peft  the engine trains LoRA adapters for a few steps on the demo corpus (q/v; rsLoRA on the seven
                projections with rank/alpha patterns and lm_head in modules_to_save; attention with dropout 0.1,
                which inference ignores on both sides; on the tied model "all-linear", and embed_tokens in
                modules_to_save (saved with ensure_weight_tying, as PEFT keeps a tied pair tied));
                peft.PeftModel.from_pretrained loads each (every trainable PEFT tensor must equal the file's,
                every file tensor must be used), then per token line the engine's `score --adapter` loss against
                PEFT's, the first line's `dump --adapter` logits against PEFT's, and the gradient of every
                trainable tensor (LoRA A/B, modules_to_save) against PEFT's.
  peft->engine  get_peft_model on the same models, A/B and modules_to_save drawn at random (PEFT's B = 0 would
                compare nothing), save_pretrained, then the same comparisons with the engine loading PEFT's
                folder: attention only; attention+MLP; rsLoRA with rank_pattern/alpha_pattern; modules_to_save
                (embed_tokens, lm_head); "all-linear" (PEFT writes the expanded module names); MiCA (an init
                only: plain LoRA's forward); on the tied model attention only, and embed_tokens in modules_to_save
                with ensure_weight_tying.
  refused       adapters PEFT saves for variants the engine does not implement (DoRA, lora_bias, bias "all",
                layers_to_transform, exclude_modules, trainable tokens, layer replication, aLoRA, target_parameters,
                QA-LoRA, VeLoRA, MonteCLoRA, BD-LoRA, KaSA, a regex target, LoHa; Arrow and fan_in_fan_out by
                editing a plain adapter's adapter_config.json; LoRA on lm_head, untied and tied: the engine
                applies the output layer as a plain weight): `score --adapter` must exit non-zero with a message
                naming the adapter_config.json field (use_dora, ...) or the module (lm_head); so must a tied
                model's embed_tokens in modules_to_save without ensure_weight_tying (PEFT then unties the
                input embedding from the output layer, which the engine cannot), and `train` of a run config
                with lm_head in target_modules.

Tolerances, fp32 on both sides (the same formulas, only summation order differs, ~1e-7): logits within 1e-5 of
the largest |logit|, loss |diff| / loss <= 1e-5, each gradient within 1e-4 of its largest |value| (summed over
the tokens, as tests/compat/hf_reference.py's dump). The adapter must move the logits by at least 1e-3 of the
largest |logit| (100x the tolerance), so agreement means the adapter was applied. Every check counts what it
compared and fails on zero. Only JSON lines of the engine's stdout are read.

  peft_check.py --engine BIN --work DIR [--threads N]
"""
import argparse
import dataclasses
import json
import os
import re
import shutil
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "gpu"))
sys.path.insert(0, os.path.join(REPO, "tests", "compat"))

import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

import peft  # noqa: E402

import gpu_common as g  # noqa: E402  (random lines, tables, verdict)
import hf_reference as hr  # noqa: E402  (the model families, engine runner, Check)

LOGITS_TOL, LOSS_TOL, GRAD_TOL, MIN_EFFECT = 1e-5, 1e-5, 1e-4, 1e-3
SCORE_LENGTHS = (96, 33, 200)
PROJECTIONS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
ATTENTION = PROJECTIONS[:4]
MODELS = ("llama3", "llama2_tied")

# Engine training runs: name -> (model, the run config's "adapter" section).
ENGINE_RUNS = {
    "lora_qv": ("llama3", dict(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"])),
    "rslora_patterns_save_head": ("llama3", dict(r=8, lora_alpha=16, target_modules=PROJECTIONS, use_rslora=True,
                                                 rank_pattern={"down_proj": 4},
                                                 alpha_pattern={"layers.1.self_attn.q_proj": 4},
                                                 modules_to_save=["lm_head"])),
    "attention_dropout": ("llama3", dict(r=4, lora_alpha=8, target_modules=ATTENTION, lora_dropout=0.1)),
    "all_linear_tied": ("llama2_tied", dict(r=4, lora_alpha=8, target_modules=["all-linear"])),
    "tied_save_embedding": ("llama2_tied", dict(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                                modules_to_save=["embed_tokens"])),
}
# PEFT-saved adapters: name -> (model, LoraConfig arguments).
PEFT_ADAPTERS = {
    "attention": ("llama3", dict(r=8, lora_alpha=16, target_modules=ATTENTION)),
    "attention_mlp": ("llama3", dict(r=8, lora_alpha=16, target_modules=PROJECTIONS)),
    "rslora_patterns": ("llama3", dict(r=8, lora_alpha=16, target_modules=PROJECTIONS, use_rslora=True,
                                       rank_pattern={"down_proj": 4, "layers.0.self_attn.k_proj": 2},
                                       alpha_pattern={"gate_proj": 4})),
    "modules_to_save": ("llama3", dict(r=8, lora_alpha=16, target_modules=ATTENTION,
                                       modules_to_save=["embed_tokens", "lm_head"])),
    "all_linear": ("llama3", dict(r=4, lora_alpha=8, target_modules="all-linear", use_rslora=True)),
    "mica_init": ("llama3", dict(r=4, lora_alpha=8, target_modules=ATTENTION, init_lora_weights="mica")),
    "attention_tied": ("llama2_tied", dict(r=8, lora_alpha=16, target_modules=ATTENTION)),
    "tied_save_embedding": ("llama2_tied", dict(r=8, lora_alpha=16, target_modules=ATTENTION,
                                                modules_to_save=["embed_tokens"], ensure_weight_tying=True)),
}
# Variants the engine must refuse: name -> (model, LoraConfig arguments (or a PEFT config class and its
# arguments), adapter_config.json edits, the word its message must hold).
QV = ["q_proj", "v_proj"]
REFUSED = {
    "DoRA": ("llama3", dict(target_modules=QV, use_dora=True), None, "use_dora"),
    "lora_bias": ("llama3", dict(target_modules=QV, lora_bias=True), None, "lora_bias"),
    "bias all": ("llama3", dict(target_modules=QV, bias="all"), None, "bias"),
    "layers_to_transform": ("llama3", dict(target_modules=QV, layers_to_transform=[0], layers_pattern="layers"),
                            None, "layers_to_transform"),
    "exclude_modules": ("llama3", dict(target_modules=QV + ["k_proj"], exclude_modules=["k_proj"]), None,
                        "exclude_modules"),
    "trainable tokens": ("llama3", dict(target_modules=QV, trainable_token_indices=[1, 2, 3]), None,
                         "trainable_token_indices"),
    "layer_replication": ("llama3", dict(target_modules=QV, layer_replication=[[0, 2], [1, 2]]), None,
                          "layer_replication"),
    "aLoRA": ("llama3", dict(target_modules=QV, alora_invocation_tokens=[5, 6]), None, "alora_invocation_tokens"),
    "target_parameters": ("llama3", dict(target_modules=[], target_parameters=["mlp.down_proj.weight"]), None,
                          "target_parameters"),
    "QA-LoRA": ("llama3", dict(target_modules=QV, use_qalora=True), None, "use_qalora"),
    "VeLoRA": ("llama3", dict(target_modules=QV, velora_config=("VeloraConfig", {})), None, "velora_config"),
    "MonteCLoRA": ("llama3", dict(target_modules=QV, monteclora_config=("MontecloraConfig", {})), None,
                   "monteclora_config"),
    "BD-LoRA": ("llama3", dict(target_modules=QV, use_bdlora=("BdLoraConfig", dict(
        target_modules_bd_a=["q_proj"], target_modules_bd_b=["v_proj"], nblocks=2))), None, "use_bdlora"),
    "KaSA": ("llama3", dict(target_modules=QV, kasa_config=("KasaConfig", {})), None, "kasa_config"),
    "Arrow": ("llama3", dict(target_modules=QV), {"arrow_config": ("ArrowConfig", {})}, "arrow_config"),
    "fan_in_fan_out": ("llama3", dict(target_modules=QV), {"fan_in_fan_out": True}, "fan_in_fan_out"),
    "regex target_modules": ("llama3", dict(target_modules=r".*\.(q|v)_proj"), None, "target_modules"),
    "LoHa": ("llama3", ("LoHaConfig", dict(r=4, target_modules=QV)), None, "peft_type"),
    "LoRA on lm_head": ("llama3", dict(target_modules=PROJECTIONS + ["lm_head"]), None, "lm_head"),
    "LoRA on lm_head, tied model": ("llama2_tied", dict(target_modules=["q_proj", "lm_head"]), None, "lm_head"),
    "tied embedding saved untied": ("llama2_tied", dict(target_modules=QV, modules_to_save=["embed_tokens"]), None,
                                    "ensure_weight_tying"),
}


class EngineFailed(Exception):
    def __init__(self, command, returncode, stderr):
        super().__init__(f"slipway-engine {command} failed with exit code {returncode}: {stderr.strip()[-1000:]}")
        self.returncode, self.stderr = returncode, stderr


def engine(args, *command):
    """slipway-engine COMMAND...: (its stdout's JSON objects, the process); EngineFailed when it fails, so one
    case's failure is that case's and the others still run."""
    objects, r = hr.engine(args, *command, check=False)
    if r.returncode != 0:
        raise EngineFailed(command[0], r.returncode, r.stderr)
    return objects, r


def peft_class(spec):
    """("VeloraConfig", {...}) -> peft.VeloraConfig(...)."""
    name, kwargs = spec
    return getattr(peft, name)(**kwargs)


def engine_name(peft_name):
    """A PEFT model's parameter name -> the engine's (its adapter file's key without base_model.model.)."""
    name = peft_name.removeprefix("base_model.model.")
    name = name.replace(".modules_to_save.default.", ".").replace(".base_layer.", ".")
    return re.sub(r"\.(lora_[AB])\.default\.", r".\1.", name)


def relative(a, b):
    return ((a.float() - b.float()).abs().max() / b.float().abs().max().clamp_min(1e-30)).item()


def write_models(work):
    """family -> folder, written by transformers' save_pretrained (hf_reference's configurations)."""
    folders = {}
    for family in MODELS:
        arch, config = hr.FAMILIES[family]
        folders[family] = g.write_hf_model(os.path.join(work, "models", family), arch, torch.float32, **config)
        shutil.copy(hr.DEMO_TOKENIZER, os.path.join(folders[family], "tokenizer.json"))
    return folders


def engine_train(args, work, name, model_dir, adapter):
    """`slipway-engine train` of a LoRA run (8 steps, learning rate 1e-2) on the demo corpus' first 400 lines;
    returns the adapter folder."""
    out = os.path.join(work, "engine", name)
    os.makedirs(out, exist_ok=True)
    data = os.path.join(work, "engine", "data.jsonl")
    if not os.path.exists(data):
        g.head_of_corpus(data, 400)
    config = {
        "name": name,
        "model": {"path": model_dir, "dtype": "float32"},
        "tokenizer": {"path": hr.DEMO_TOKENIZER},
        "data": {"train_file": data, "block_size": 64, "validation_split_percentage": 0,
                 "cache_dir": os.path.join(work, "engine", "cache")},
        "training": {"learning_rate": 1e-2, "max_steps": 8, "per_device_train_batch_size": 4, "logging_steps": 1,
                     "seed": 1234, "output_dir": os.path.join(out, "adapter")},
        "adapter": {"method": "lora", "lora_dropout": 0.0, **adapter},
        "slurm": {"gpus_per_node": 0},
    }
    path = os.path.join(out, "run.json")
    with open(path, "w") as f:
        json.dump(config, f, indent=1)
    _, r = engine(args, "train", path, "--threads", args.threads)
    losses = [e["value"] for e in g.mllog(r.stdout) if e["key"] == "train_loss"]
    return os.path.join(out, "adapter"), losses


def randomize(model, seed):
    """A PEFT model's trainable tensors drawn at random (LoRA A, B ~ N(0, 0.05^2); modules_to_save copies
    perturbed by N(0, 0.02^2)), so the adapter changes the output."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if not p.requires_grad:
                continue
            noise = torch.randn(p.shape, generator=gen, dtype=p.dtype)
            if ".lora_" in name:
                p.copy_(noise * 0.05)
            else:
                p.add_(noise * 0.02)


def check_loaded(c, label, model, adapter_dir):
    """PeftModel.from_pretrained took every tensor of the engine's file, each unchanged."""
    saved = load_file(os.path.join(adapter_dir, "adapter_model.safetensors"))
    used = set()
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        key = "base_model.model." + engine_name(name)
        if key not in saved:
            c.fail(f"{label}: PEFT's trainable {name} has no tensor {key} in the engine's adapter")
            continue
        used.add(key)
        if not torch.equal(p.detach(), saved[key].to(p.dtype)):
            c.fail(f"{label}: {name} differs from the engine's {key} after from_pretrained")
    # A tied model's trained embedding is saved twice (ensure_weight_tying): PEFT holds the one matrix once.
    tied_head, embed = "base_model.model.lm_head.weight", "base_model.model.model.embed_tokens.weight"
    if tied_head in saved and tied_head not in used and embed in used:
        with open(os.path.join(adapter_dir, "adapter_config.json"), encoding="utf-8") as f:
            tying = json.load(f).get("ensure_weight_tying", False)
        if not tying:
            c.fail(f"{label}: the engine saved {tied_head} beside the tied embedding without ensure_weight_tying")
        elif not torch.equal(saved[tied_head], saved[embed]):
            c.fail(f"{label}: the engine's tied {tied_head} differs from its {embed}")
        used.add(tied_head)
    unused = sorted(set(saved) - used)
    if unused:
        c.fail(f"{label}: the engine's adapter tensors {unused[:4]} are not trainable tensors of PEFT's model")
    return len(used)


def compare(args, c, label, model_dir, adapter_dir, peft_model, base_model, lines):
    """The engine with adapter_dir against peft_model (eval mode, its trainable tensors those of the adapter):
    per-line loss, the first line's logits and gradients. Adds a row; returns nothing."""
    tokens = g.write_lines(os.path.join(args.work, f"{label}-tokens.jsonl"), lines)
    scored, _ = engine(args, "score", "--model", model_dir, "--adapter", adapter_dir, "--tokens", tokens,
                          "--threads", args.threads)
    ours = [s for s in scored if "loss" in s and not s.get("summary")]
    if len(ours) != len(lines):
        c.fail(f"{label}: {len(ours)} score lines for {len(lines)} token lines")
    loss_diff = 0.0
    for ids, mine in zip(lines, ours):
        x = torch.tensor([ids])
        with torch.no_grad():
            loss = peft_model(input_ids=x, labels=x).loss.item()
        loss_diff = max(loss_diff, abs(mine["loss"] - loss) / abs(loss))
        c.compared += 1

    first = g.write_lines(os.path.join(args.work, f"{label}-first.jsonl"), lines[:1])
    dump_path = os.path.join(args.work, f"{label}-dump.safetensors")
    engine(args, "dump", "--model", model_dir, "--adapter", adapter_dir, "--tokens", first, "--out", dump_path)
    dump = load_file(dump_path)
    x = torch.tensor([lines[0]])
    peft_model.zero_grad(set_to_none=True)
    result = peft_model(input_ids=x, labels=x)
    result.loss.backward()
    theirs = result.logits[0].detach()
    logits_diff = relative(dump["logits"], theirs)
    c.compared += 1
    with torch.no_grad():
        effect = relative(base_model(input_ids=x).logits[0], theirs)
    grad_diff, grad_name, grads = 0.0, "-", 0
    for name, p in peft_model.named_parameters():
        if not p.requires_grad:
            continue
        key = "grad." + engine_name(name)
        if key == "grad.lm_head.weight" and key not in dump:  # tied: the engine's one matrix
            key = "grad.model.embed_tokens.weight"
        if p.grad is None or key not in dump:
            c.fail(f"{label}: no gradient of {name} ({key}) on {'PEFT' if p.grad is None else 'the engine'}'s side")
            continue
        diff = relative(dump[key], p.grad)
        if diff >= grad_diff:
            grad_diff, grad_name = diff, engine_name(name)
        grads += 1
        c.compared += 1
    if not grads:
        c.fail(f"{label}: no trainable tensor's gradient compared")
    for what, value, tolerance in (("loss", loss_diff, LOSS_TOL), ("logits", logits_diff, LOGITS_TOL),
                                   ("gradient", grad_diff, GRAD_TOL)):
        if not value <= tolerance:  # NaN fails too
            c.fail(f"{label}: {what} max rel diff {value:.3e} > {tolerance}")
    if not effect >= MIN_EFFECT:
        c.fail(f"{label}: the adapter moves the logits by only {effect:.3e} of the largest (< {MIN_EFFECT}): "
               "it was not applied, or is near zero")
    c.worst = max(c.worst, loss_diff, logits_diff)
    c.rows.append([label, len(lines), loss_diff, logits_diff, grads, f"{grad_diff:.3e} ({grad_name})", effect])


def check_engine_to_peft(args, folders, lines, c):
    for name, (family, adapter) in ENGINE_RUNS.items():
        try:
            adapter_dir, losses = engine_train(args, args.work, name, folders[family], adapter)
        except EngineFailed as e:
            c.fail(f"{name}: {e}")
            continue
        if len(losses) != 8 or not all(l == l for l in losses):
            c.fail(f"{name}: training logged {losses}")
        base = hr.hf_model(folders[family])
        model = peft.PeftModel.from_pretrained(hr.hf_model(folders[family]), adapter_dir, is_trainable=True).eval()
        loaded = check_loaded(c, name, model, adapter_dir)
        c.compared += loaded
        try:
            compare(args, c, f"engine:{name}", folders[family], adapter_dir, model, base, lines)
        except EngineFailed as e:
            c.fail(f"engine:{name}: {e}")
            continue
        c.rows[-1].insert(1, f"{family}, {loaded} tensors, loss {losses[0]:.3f}->{losses[-1]:.3f}")


def peft_model_for(folders, family, config):
    base = hr.hf_model(folders[family])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PEFT's notes on lm_head targets and embedding layers
        return peft.get_peft_model(hr.hf_model(folders[family]), config), base


def check_peft_to_engine(args, folders, lines, c):
    for i, (name, (family, kwargs)) in enumerate(PEFT_ADAPTERS.items()):
        model, base = peft_model_for(folders, family, peft.LoraConfig(task_type="CAUSAL_LM", lora_dropout=0.0,
                                                                      **kwargs))
        randomize(model, seed=100 + i)
        adapter_dir = os.path.join(args.work, "peft", name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.save_pretrained(adapter_dir)
        keys = load_file(os.path.join(adapter_dir, "adapter_model.safetensors"))
        model.eval()
        try:
            compare(args, c, f"peft:{name}", folders[family], adapter_dir, model, base, lines)
        except EngineFailed as e:
            c.fail(f"peft:{name}: {e}")
            continue
        c.rows[-1].insert(1, f"{family}, {len(keys)} tensors")


def check_refused(args, folders, c):
    for name, (family, spec, edits, word) in REFUSED.items():
        if isinstance(spec, tuple):
            config = peft_class(spec)
            config.task_type = "CAUSAL_LM"
        else:
            spec = {k: peft_class(v) if isinstance(v, tuple) else v for k, v in spec.items()}
            config = peft.LoraConfig(task_type="CAUSAL_LM", r=4, lora_alpha=8, **spec)
        model, _ = peft_model_for(folders, family, config)
        randomize(model, seed=7)
        adapter_dir = os.path.join(args.work, "refused", re.sub(r"\W+", "_", name))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.save_pretrained(adapter_dir)
        config_path = os.path.join(adapter_dir, "adapter_config.json")
        with open(config_path) as f:
            saved = json.load(f)
        for key, value in (edits or {}).items():
            saved[key] = dataclasses.asdict(peft_class(value)) if isinstance(value, tuple) else value
        with open(config_path, "w") as f:
            json.dump(saved, f, indent=2)
        tokens = g.write_lines(os.path.join(args.work, "refused-tokens.jsonl"), g.random_lines(4096, (16,)))
        _, r = hr.engine(args, "score", "--model", folders[family], "--adapter", adapter_dir, "--tokens", tokens,
                         "--threads", args.threads, check=False)
        message = next((line for line in r.stderr.splitlines() if adapter_dir in line), r.stderr.strip()[-300:])
        c.compared += 1
        named = re.search(rf"\b{re.escape(word)}\b", message) is not None
        if r.returncode == 0:
            c.fail(f"{name}: the engine scored the adapter (exit 0) instead of refusing {word}")
        elif not named:
            c.fail(f"{name}: refused (exit {r.returncode}) without naming {word}: {message}")
        shown = message.replace(adapter_dir, "ADAPTER")
        c.rows.append([name, family, word, r.returncode, "yes" if named else "NO", shown[:150]])
    # Training: a run config with lm_head in target_modules.
    try:
        engine_train(args, args.work, "refused_lm_head", folders["llama3"],
                     dict(r=4, lora_alpha=8, target_modules=["q_proj", "lm_head"]))
        code, message = 0, "trained"
    except EngineFailed as e:
        # The last such line: the run's name (refused_lm_head) is in earlier notes' paths, the refusal ends the log.
        code, message = e.returncode, next((line for line in reversed(e.stderr.splitlines()) if "lm_head" in line),
                                           e.stderr.strip()[-300:])
    c.compared += 1
    named = re.search(r"\blm_head\b", message) is not None
    if code == 0 or not named:
        c.fail(f"train with lm_head in target_modules: exit {code}, {message}")
    c.rows.append(["train: LoRA on lm_head", "llama3", "lm_head", code, "yes" if named else "NO", message[:150]])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", required=True)
    ap.add_argument("--work", required=True, help="work folder (emptied first)")
    ap.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "2")))
    ap.add_argument("--only", default="engine_to_peft,peft_to_engine,refused")
    args = ap.parse_args()
    g.fresh(args.work)
    torch.set_num_threads(args.threads)
    version = hr.engine(args, "--version")[1].stdout.splitlines()
    print(f"peft {peft.__version__}, transformers {transformers.__version__}, torch {torch.__version__}, "
          f"{next((v for v in version if v.startswith('slipway-engine')), 'slipway-engine ?')}")
    started = time.time()
    folders = write_models(args.work)
    lines = g.random_lines(4096, SCORE_LENGTHS)
    print(f"models: {', '.join(folders)} written by save_pretrained in {time.time() - started:.1f} s")
    compared_headers = ["adapter", "model", "lines", "loss (rel)", "logits (of max)", "gradients",
                        "worst gradient (of max)", "adapter's effect on logits"]
    checks = {
        "engine_to_peft": hr.Check("engine_to_peft", compared_headers),
        "peft_to_engine": hr.Check("peft_to_engine", compared_headers),
        "refused": hr.Check("refused", ["variant", "model", "must name", "exit", "named", "engine's message"]),
    }
    runs = {"engine_to_peft": lambda c: check_engine_to_peft(args, folders, lines, c),
            "peft_to_engine": lambda c: check_peft_to_engine(args, folders, lines, c),
            "refused": lambda c: check_refused(args, folders, c)}
    failures, summary = [], []
    for name in args.only.split(","):
        c = checks[name]
        started = time.time()
        runs[name](c)
        c.seconds = time.time() - started
        print(f"\n## {name} ({c.seconds:.1f} s)")
        g.table(c.headers, c.rows)
        if c.compared == 0:
            c.fail("nothing was compared")
        failures += c.failures
        summary.append([name, c.compared, c.worst if name != "refused" else "-", len(c.failures),
                        f"{c.seconds:.1f}", "FAIL" if c.failures else "PASS"])
    print(f"\ntolerances: loss {LOSS_TOL} relative, logits {LOGITS_TOL} of the largest |logit|, gradients "
          f"{GRAD_TOL} of the largest |value|; the adapter must move the logits by >= {MIN_EFFECT}")
    print("\n## summary")
    g.table(["check", "compared", "worst loss/logits (rel)", "failures", "seconds", "result"], summary)
    return g.verdict(failures, args.work, {row[0]: row[1] for row in summary},
                     compared=sum(c.compared for c in checks.values()))


if __name__ == "__main__":
    sys.exit(main())
