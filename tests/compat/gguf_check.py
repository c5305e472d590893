"""The `gguf` check of hf_reference.py: a chat model trained by the engine, exported by `slipway-engine export
gguf`, run in llama.cpp (Debian forky's llama.cpp 0.7.0, llama-server) against the engine itself.

The chat demo itself (the demo model, tokenizer and chat template, trained in full on the demo
conversations), and for each tokenizer family (Llama 3 byte-level BPE on the llama architecture, Llama 2 / Mistral SentencePiece
BPE on the llama architecture with its q/k permutation, Qwen3 on the qwen3 architecture with q/k norms): a
small random model over the real tokenizer's whole vocabulary is written by transformers (save_pretrained,
with the chat template), the engine trains a LoRA on resources/demo/conversations.jsonl (answers only,
packed), and exports base + adapter, merged, in f32, f16, bf16 and q8_0. Then for chat prompts (rendered by
transformers' apply_chat_template):
  greedy  llama.cpp's greedy tokens equal the engine's `generate` tokens (over the tokens both produced).
          Where they part, the engine's own log-probabilities of the two tokens there must be a near tie
          (within the type's tolerance: rounded weights may flip a tie, nothing else), and the comparison
          of that prompt stops there;
  logprob llama.cpp's log-probabilities of its top-10 next tokens after each prompt against the engine's
          log-softmax of `dump`'s logits: max |diff| within the type's tolerance (the weights' rounding).
"""
import json
import os
import socket
import subprocess
import time
import urllib.request

import torch
import transformers
from safetensors.torch import load_file

import gpu_common as g

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONVERSATIONS = os.path.join(REPO, "resources", "demo", "conversations.jsonl")
TEMPLATES = os.path.join(REPO, "tests", "data", "chat-templates")
# (tokenizer, architecture, chat template, bos, eos)
CASES = [("llama3", "llama", "llama-3-instruct.jinja", "<|begin_of_text|>", "<|eot_id|>"),
         ("llama2", "mistral", "mistral-instruct-v0.2.jinja", "<s>", "</s>"),
         ("qwen3", "qwen3", "qwen3.jinja", None, "<|im_end|>")]
# Storage type -> tolerance on log-probabilities (f32 differs only in summation order).
TYPES = {"f32": 2e-3, "f16": 5e-3, "bf16": 5e-2, "q8_0": 5e-2}
NEW_TOKENS = 12
PROMPTS = 3
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def model_folder(out, tokenizer_path, arch, template_file, bos, eos, name=None):
    """The tokenizer (with the template) by tokenizer.save_pretrained, a random model by save_pretrained, in
    out/gguf-NAME (default: the architecture)."""
    folder = os.path.join(out, f"gguf-{name or arch}")
    special = {"eos_token": eos, **({"bos_token": bos} if bos else {})}
    tok = transformers.PreTrainedTokenizerFast(tokenizer_file=tokenizer_path, **special)
    with open(template_file, encoding="utf-8") as f:
        tok.chat_template = f.read()
    tok.save_pretrained(folder)
    config = dict(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024, rms_norm_eps=1e-5,
                  tie_word_embeddings=False, eos_token_id=tok.convert_tokens_to_ids(eos))
    if arch == "mistral":
        config["sliding_window"] = None  # llama.cpp's llama architecture has no window
    if arch == "qwen3":
        config["head_dim"] = 16
    g.write_hf_model(folder, arch, torch.float32, **config)
    return folder, transformers.AutoTokenizer.from_pretrained(folder)


def conversations_for(template, out):
    """The demo conversations; without their system turns for a template that refuses them (Mistral's)."""
    if not template.startswith("mistral"):
        return CONVERSATIONS
    path = out + "-conversations.jsonl"
    with open(CONVERSATIONS, encoding="utf-8") as f, open(path, "w", encoding="utf-8") as w:
        for line in f:
            messages = [m for m in json.loads(line)["messages"] if m["role"] != "system"]
            w.write(json.dumps({"messages": messages}, ensure_ascii=False) + "\n")
    return path


def train_adapter(args, run, folder, conversations, out):
    config = {"name": os.path.basename(out),
              "model": {"path": folder, "dtype": "float32"},
              "data": {"train_file": conversations, "format": "messages", "train_on": "assistant",
                       "validation_split_percentage": 0, "block_size": 256, "cache_dir": out + "-cache"},
              "training": {"learning_rate": 1e-2, "max_steps": 40, "per_device_train_batch_size": 4,
                           "logging_steps": 10, "seed": 1, "output_dir": out},
              "adapter": {"method": "lora", "r": 16, "lora_alpha": 32, "target_modules": TARGETS},
              "slurm": {"gpus_per_node": 0}}
    path = out + ".json"
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f)
    run(args, "train", "--threads", args.threads, path)
    return out


def chat_prompts(tok, conversations):
    prompts = []
    with open(conversations, encoding="utf-8") as f:
        for line in f:
            messages = json.loads(line)["messages"]
            last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
            out = tok.apply_chat_template(messages[:last_user + 1], add_generation_prompt=True, tokenize=True)
            prompts.append(list(out["input_ids"] if hasattr(out, "keys") else out))
            if len(prompts) == PROMPTS:
                return prompts
    return prompts


def with_adapter(folder, adapter):
    return ["--model", folder] + (["--adapter", adapter] if adapter else [])


def engine_probs(args, run, folder, adapter, ids, work):
    tokens = os.path.join(work, "probe.jsonl")
    with open(tokens, "w") as f:
        f.write(json.dumps({"ids": ids}) + "\n")
    dumped = os.path.join(work, "probe.safetensors")
    run(args, "dump", *with_adapter(folder, adapter), "--tokens", tokens, "--out", dumped)
    return torch.log_softmax(load_file(dumped)["logits"][-1].double(), -1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """llama-server on a GGUF, on a free port of 127.0.0.1, stopped on exit."""

    def __init__(self, gguf, threads, log):
        self.port = free_port()
        self.log = open(log, "w")
        self.process = subprocess.Popen(
            ["llama-server", "-m", gguf, "--host", "127.0.0.1", "--port", str(self.port), "-c", "1024", "-np", "1",
             "--no-warmup", "-t", str(threads)], stdout=self.log, stderr=subprocess.STDOUT)

    def __enter__(self):
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama-server exited with {self.process.returncode} (log {self.log.name})")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"llama-server did not become healthy in 120 s (log {self.log.name})")

    def __exit__(self, *exc):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()

    def post(self, path, body):
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as r:
            return json.loads(r.read())

    def complete(self, prompt):
        """Greedy completion of `prompt`: ids as they are, or a text llama.cpp tokenizes (with the special
        tokens its GGUF says to add)."""
        return self.post("/completion", {"prompt": prompt, "n_predict": NEW_TOKENS, "temperature": 0,
                                         "n_probs": 10, "cache_prompt": False, "return_tokens": True})

    def tokenize(self, text):
        """llama.cpp's ids of `text` with the special tokens its GGUF adds (add_bos_token, add_eos_token)."""
        return self.post("/tokenize", {"content": text, "add_special": True})["tokens"]


def demo_model(args, run):
    """The chat demo itself: the demo model (its tokenizer and chat template) trained in full from random on
    the demo conversations, as resources/presets/demo-chat.json does, shorter."""
    out = os.path.join(args.out, "gguf-demo")
    config = {"name": "gguf-demo",
              "model": {"path": os.path.join(REPO, "resources", "demo", "model"), "dtype": "float32",
                        "init": "random"},
              "tokenizer": {"path": os.path.join(REPO, "resources", "demo", "tokenizer.json")},
              "data": {"train_file": CONVERSATIONS, "format": "messages", "validation_split_percentage": 0,
                       "block_size": 128, "cache_dir": out + "-cache"},
              "training": {"learning_rate": 3e-3, "max_steps": 120, "per_device_train_batch_size": 4,
                           "logging_steps": 40, "seed": 1, "output_dir": out},
              "adapter": {"method": "full"}, "slurm": {"gpus_per_node": 0}}
    with open(out + ".json", "w", encoding="utf-8") as f:
        json.dump(config, f)
    run(args, "train", "--threads", args.threads, out + ".json")
    return out, transformers.AutoTokenizer.from_pretrained(out)


def trained_models(args, run):
    """models(), trained once per work folder: the gguf and gguf_bos checks share them."""
    if getattr(args, "gguf_models", None) is None:
        args.gguf_models = list(models(args, run))
    return args.gguf_models


def models(args, run):
    """(name, architecture, model folder, adapter or None, HF tokenizer, conversations) to export."""
    folder, tok = demo_model(args, run)
    yield "demo", "llama", folder, None, tok, CONVERSATIONS
    for tokenizer_name, arch, template, bos, eos in CASES:
        tokenizer_path = os.path.join(args.tokenizers, "tokenizers", tokenizer_name, "tokenizer.json")
        folder, tok = model_folder(args.out, tokenizer_path, arch, os.path.join(TEMPLATES, template), bos, eos)
        adapter_dir = os.path.join(args.out, f"gguf-{arch}-lora")
        conversations = conversations_for(template, adapter_dir)
        yield tokenizer_name, arch, folder, train_adapter(args, run, folder, conversations, adapter_dir), tok, \
            conversations


def check_gguf(args, c, run, json_lines):
    for tokenizer_name, arch, folder, adapter, tok, conversations in trained_models(args, run):
        prompts = chat_prompts(tok, conversations)
        prompt_file = g.write_lines(os.path.join(args.out, f"gguf-{tokenizer_name}-prompts.jsonl"), prompts)
        generated, _ = run(args, "generate", *with_adapter(folder, adapter), "--prompts", prompt_file,
                           "--max-new-tokens", NEW_TOKENS, "--threads", args.threads)
        ours = [x.get("ids", []) for x in generated if "ids" in x or "error" in x]
        probs = [engine_probs(args, run, folder, adapter, ids, args.out) for ids in prompts]
        for kind, tolerance in TYPES.items():
            gguf = os.path.join(args.out, f"gguf-{tokenizer_name}-{kind}.gguf")
            run(args, "export", "gguf", *with_adapter(folder, adapter), "--out", gguf, "--type", kind)
            same, ties, worst, compared_tokens, widest_tie = 0, 0, 0.0, 0, 0.0
            with LlamaServer(gguf, args.threads, gguf + ".log") as server:
                for ids, mine, logp in zip(prompts, ours, probs):
                    answer = server.complete(ids)
                    steps = answer.get("completion_probabilities", [])
                    # The generated ids as sampled ("tokens"): the probabilities leave out a token that ends
                    # inside a UTF-8 character (a byte-level BPE's half of "«").
                    theirs = answer.get("tokens") or [s["id"] for s in steps]
                    n = min(len(mine), len(theirs))
                    parted = next((k for k in range(n) if mine[k] != theirs[k]), n)
                    compared_tokens += parted
                    c.compared += 1
                    if parted == n and n > 0:
                        same += 1
                    elif n == 0:
                        c.fail(f"{tokenizer_name} {kind}: no tokens (engine {mine}, llama.cpp {theirs})")
                    else:  # parted at a position: only a near tie of the engine's own may part them
                        at = engine_probs(args, run, folder, adapter, ids + mine[:parted], args.out)
                        gap = abs(float(at[mine[parted]] - at[theirs[parted]]))
                        if gap > tolerance:
                            c.fail(f"{tokenizer_name} {kind}: greedy parts at token {parted} where the engine's "
                                   f"log-probability gap is {gap:.3f} > {tolerance}: engine {mine} vs llama.cpp "
                                   f"{theirs} ({tok.decode(mine)!r} vs {tok.decode(theirs)!r})")
                        else:
                            ties += 1
                            widest_tie = max(widest_tie, gap)
                    first_step = steps[0] if steps and theirs and steps[0]["id"] == theirs[0] else {}
                    for top in first_step.get("top_logprobs", []):
                        worst = max(worst, abs(top["logprob"] - float(logp[top["id"]])))
            if worst > tolerance:
                c.fail(f"{tokenizer_name} {kind}: top-10 probability diff {worst:.3e} > {tolerance}")
            if kind == "f32":
                c.worst = max(c.worst, worst)
            c.rows.append([tokenizer_name, arch, kind, f"{same}/{len(prompts)}",
                           f"{ties} (gap {widest_tie:.1e})" if ties else 0, compared_tokens, worst, tolerance,
                           os.path.getsize(gguf)])
        print(f"  {tokenizer_name}: engine answers {[tok.decode(x) for x in ours]}", flush=True)
