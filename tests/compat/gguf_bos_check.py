"""The `gguf_bos` check of hf_reference.py: plain text (no chat template) through an exported GGUF in llama.cpp
(Debian forky's 0.7.0) against the engine, so that the special tokens the tokenizer adds around a text
(tokenizer/special_tokens.h: tokenizer_config.json's add_bos_token, else the post-processor, else the
convention) reach llama.cpp and Ollama as tokenizer.ggml.add_bos_token / add_eos_token.

Five tokenizers: the demo's (TemplateProcessing adds <|begin_of_text|>), Llama 2's (SentencePiece, adds <s>),
a Llama 3 with Meta's current post-processor (Sequence[ByteLevel, TemplateProcessing]: adds
<|begin_of_text|>), the fixture's older Llama 3 (ByteLevel only: adds none) and Qwen3's (adds none); each on an
untrained random model and on a trained one (the demo trained in full, the others a LoRA; gguf_check.py's),
exported in f32. For each:
  prompt    the prompt's ids of the engine (`tokenize --add-special-tokens`), of transformers (the folder's
            AutoTokenizer) and of llama.cpp (llama-server /tokenize with add_special) are identical, and so is
            the BOS decision: `export gguf`'s printed add_bos_token against whether the ids start with the BOS;
  greedy    `generate` on each plain prompt equals llama-server's greedy completion of the same text token for
            token (parting only at a near tie of the engine's own log-probabilities, as gguf_check.py);
  chat      where the model has a chat template: llama-server's own chat prompt (/apply-template, then
            /tokenize with the GGUF's special tokens, and the prompt_tokens of a /v1/chat/completions) equals
            transformers' apply_chat_template ids, so a template that writes the BOS itself does not get a
            second one from the GGUF's add_bos_token;
  perplexity  llama-perplexity on a short text (n_ctx 64, its chunks with the BOS written over their first
            token where the GGUF adds one) against the same computation on the engine's `dump` logits over
            the engine's ids: relative difference <= 1e-3 (f32 differs in summation order only).
"""
import json
import math
import os
import re
import subprocess

import torch
import transformers
from safetensors.torch import load_file

import gguf_check as gc

PROMPTS = ["The ship", "Once upon a time there was", "Привет, как дела?", "1 2 3 4"]
# llama.cpp's own chat path: llama-server renders the GGUF's template and tokenizes it with the special tokens
# the GGUF adds, after stripping the BOS a template writes itself; its ids must be transformers' one-BOS ids.
CHAT = [{"role": "user", "content": "Привет, как дела?"}]
PPL_CONTEXT = 64
PPL_CHUNKS = 2
PPL_TOLERANCE = 1e-3
DEMO_CORPUS = os.path.join(gc.REPO, "resources", "demo", "corpus.jsonl")


def meta_llama3_tokenizer(args):
    """The fixture's Llama 3 tokenizer.json with Meta's current post-processor: ByteLevel, then a template that
    puts <|begin_of_text|> before every sequence."""
    source = os.path.join(args.tokenizers, "tokenizers", "llama3", "tokenizer.json")
    with open(source, encoding="utf-8") as f:
        doc = json.load(f)
    bos = "<|begin_of_text|>"
    bos_id = next(t["id"] for t in doc["added_tokens"] if t["content"] == bos)
    doc["post_processor"] = {
        "type": "Sequence",
        "processors": [
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
            {"type": "TemplateProcessing",
             "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
             "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                      {"SpecialToken": {"id": bos, "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
             "special_tokens": {bos: {"id": bos, "ids": [bos_id], "tokens": [bos]}}}]}
    path = os.path.join(args.out, "llama3-meta-tokenizer.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)
    return path


def untrained_demo(args, run):
    """`init-model` of the demo config with the demo tokenizer beside it: the issue's own reproduction."""
    folder = os.path.join(args.out, "bos-demo-untrained")
    run(args, "init-model", "--config", os.path.join(gc.REPO, "resources", "demo", "model", "config.json"),
        "--out", folder)
    with open(os.path.join(gc.REPO, "resources", "demo", "tokenizer.json"), "rb") as src, \
            open(os.path.join(folder, "tokenizer.json"), "wb") as dst:
        dst.write(src.read())
    return folder


def cases(args, run):
    """(tokenizer name, state, model folder, adapter or None, HF tokenizer), untrained and trained."""
    for name, arch, folder, adapter, tok, _ in gc.trained_models(args, run):
        if name == "demo":
            yield name, "untrained", untrained_demo(args, run), None, tok
            yield name, "trained", folder, None, tok
        else:
            yield name, "untrained", folder, None, tok
            yield name, "trained", folder, adapter, tok
    template = os.path.join(gc.TEMPLATES, "llama-3-instruct.jinja")
    folder, tok = gc.model_folder(args.out, meta_llama3_tokenizer(args), "llama", template, "<|begin_of_text|>",
                                  "<|eot_id|>", name="llama3-meta")
    adapter_dir = os.path.join(args.out, "gguf-llama3-meta-lora")
    adapter = gc.train_adapter(args, run, folder, gc.CONVERSATIONS, adapter_dir)
    yield "llama3-meta", "untrained", folder, None, tok
    yield "llama3-meta", "trained", folder, adapter, tok


def engine_ids(args, run, folder, texts):
    lines = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in texts)
    out, _ = run(args, "tokenize", "--model", folder, "--add-special-tokens", stdin=lines)
    return [x["ids"] for x in out if "ids" in x]


def export_f32(args, run, folder, adapter, path):
    """Exports; returns (the BOS id the GGUF adds or None, the export's printed add_bos_token line)."""
    _, process = run(args, "export", "gguf", *gc.with_adapter(folder, adapter), "--out", path, "--type", "f32")
    line = next((x for x in process.stdout.splitlines() if x.startswith("tokenizer.ggml.add_bos_token")), None)
    if line is None:
        raise SystemExit(f"export gguf printed no add_bos_token decision: {process.stdout[-500:]}")
    added = re.match(r"tokenizer\.ggml\.add_bos_token true \(.*, id (\d+)\):", line)
    if line.split()[1] == "true" and not added:
        raise SystemExit(f"export gguf adds a BOS without naming its id: {line}")
    return (int(added.group(1)) if added else None), line


def perplexity_text(path):
    """Enough of the demo corpus for PPL_CHUNKS chunks of PPL_CONTEXT tokens with any of the tokenizers."""
    texts = []
    with open(DEMO_CORPUS, encoding="utf-8") as f:
        for line in f:
            texts.append(json.loads(line)["text"])
            if sum(map(len, texts)) > 4000:
                break
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n\n".join(texts))
    return path


def llama_perplexity(gguf, text_file, threads):
    """llama-perplexity's estimate after the last chunk: its running "[N]PPL," line (the "Final estimate" log
    line is written by a logging thread that may not flush before the process ends)."""
    # That thread sometimes loses chunk lines, the last one or all of them (exit 0, "0.00 minutes" only): run
    # again until the last chunk's line is there.
    for _ in range(5):
        r = subprocess.run(["llama-perplexity", "-m", gguf, "-f", text_file, "-c", str(PPL_CONTEXT), "-b",
                            str(PPL_CONTEXT), "--chunks", str(PPL_CHUNKS), "-t", str(threads)],
                           capture_output=True, text=True)
        chunks = re.findall(r"\[(\d+)\]([0-9.]+),", r.stdout + r.stderr)
        if r.returncode != 0 or (chunks and int(chunks[-1][0]) == PPL_CHUNKS):
            break
    if r.returncode != 0 or not chunks or int(chunks[-1][0]) != PPL_CHUNKS:
        raise SystemExit(f"llama-perplexity failed ({r.returncode}): {(r.stdout + r.stderr)[-1500:]}")
    return float(chunks[-1][1])


def engine_perplexity(args, run, folder, adapter, ids, bos_id):
    """llama-perplexity's computation on the engine's logits: chunks of n_ctx ids, the first written over by
    the BOS where one is added, the second half of each chunk predicted."""
    first, nll, count = PPL_CONTEXT // 2, 0.0, 0
    for chunk in range(PPL_CHUNKS):
        window = list(ids[chunk * PPL_CONTEXT:(chunk + 1) * PPL_CONTEXT])
        if bos_id is not None:
            window[0] = bos_id
        tokens = os.path.join(args.out, "ppl.jsonl")
        with open(tokens, "w") as f:
            f.write(json.dumps({"ids": window}) + "\n")
        dumped = os.path.join(args.out, "ppl.safetensors")
        run(args, "dump", *gc.with_adapter(folder, adapter), "--tokens", tokens, "--out", dumped)
        logp = torch.log_softmax(load_file(dumped)["logits"].double(), -1)
        for position in range(first, PPL_CONTEXT - 1):
            nll -= float(logp[position, window[position + 1]])
            count += 1
    return math.exp(nll / count)


def greedy_parts(args, run, folder, adapter, prompt_ids, mine, theirs):
    """The first position where the two greedy continuations part and the engine's log-probability gap there,
    or None when they agree on every token both produced."""
    n = min(len(mine), len(theirs))
    parted = next((k for k in range(n) if mine[k] != theirs[k]), None)
    if parted is None:
        return None
    at = gc.engine_probs(args, run, folder, adapter, prompt_ids + mine[:parted], args.out)
    return parted, abs(float(at[mine[parted]] - at[theirs[parted]]))


def has_chat_template(folder):
    """The folder exports a chat template (its chat_template.jinja, or tokenizer_config.json's)."""
    if os.path.exists(os.path.join(folder, "chat_template.jinja")):
        return True
    config = os.path.join(folder, "tokenizer_config.json")
    if not os.path.exists(config):
        return False
    with open(config, encoding="utf-8") as f:
        return bool(json.load(f).get("chat_template"))


def check_chat_path(c, server, name, state, tok, bos_id):
    """llama-server's chat prompt against transformers' apply_chat_template: the same ids (so one BOS where
    the GGUF adds one, though the template writes it too), and the count its chat completion reports."""
    out = tok.apply_chat_template(CHAT, add_generation_prompt=True, tokenize=True)
    hf = list(out["input_ids"] if hasattr(out, "keys") else out)
    rendered = server.post("/apply-template", {"messages": CHAT})["prompt"]
    theirs = server.post("/tokenize", {"content": rendered, "add_special": True, "parse_special": True})["tokens"]
    usage = server.post("/v1/chat/completions", {"messages": CHAT, "max_tokens": 1, "temperature": 0})["usage"]
    c.compared += 1
    if theirs != hf or usage["prompt_tokens"] != len(hf):
        c.fail(f"{name} {state} chat: llama.cpp's prompt {theirs} ({usage['prompt_tokens']} tokens in its chat "
               f"completion) vs transformers' {hf}")
        return "differs"
    bos_count = sum(1 for i in hf[:2] if bos_id is not None and i == bos_id)
    return f"{len(hf)}/{usage['prompt_tokens']}" + (f", {bos_count} BOS" if bos_id is not None else "")


def check_case(args, c, run, name, state, folder, adapter, tok, text_file):
    gguf = os.path.join(args.out, f"bos-{name}-{state}.gguf")
    bos_id, decision = export_f32(args, run, folder, adapter, gguf)
    adds_bos = bos_id is not None
    ours = engine_ids(args, run, folder, PROMPTS)
    hf = [list(tok(p)["input_ids"]) for p in PROMPTS]
    prompt_file = os.path.join(args.out, f"bos-{name}-{state}-prompts.jsonl")
    with open(prompt_file, "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"text": p}, ensure_ascii=False) + "\n" for p in PROMPTS)
    generated, _ = run(args, "generate", *gc.with_adapter(folder, adapter), "--prompts", prompt_file,
                       "--max-new-tokens", gc.NEW_TOKENS, "--threads", args.threads)
    generated = [x for x in generated if "ids" in x or "error" in x]
    same_prompt, same_greedy, ties, counts = 0, 0, 0, []
    with gc.LlamaServer(gguf, args.threads, gguf + ".log") as server:
        for text, mine_prompt, hf_prompt, out in zip(PROMPTS, ours, hf, generated):
            theirs_prompt = server.tokenize(text)
            counts.append(f"{len(mine_prompt)}/{len(theirs_prompt)}")
            c.compared += 1
            starts_with_bos = bool(mine_prompt) and adds_bos and mine_prompt[0] == bos_id
            if mine_prompt == hf_prompt == theirs_prompt and starts_with_bos == adds_bos:
                same_prompt += 1
            else:
                c.fail(f"{name} {state} {text!r}: prompt ids engine {mine_prompt}, transformers {hf_prompt}, "
                       f"llama.cpp {theirs_prompt}; export: {decision}")
                continue
            answer = server.complete(text)
            theirs = answer.get("tokens") or [s["id"] for s in answer.get("completion_probabilities", [])]
            mine = out.get("ids", [])
            if out.get("prompt_tokens") != len(mine_prompt):
                c.fail(f"{name} {state} {text!r}: generate fed {out.get('prompt_tokens')} prompt tokens, "
                       f"tokenize gives {len(mine_prompt)}")
            parted = greedy_parts(args, run, folder, adapter, mine_prompt, mine, theirs) if mine and theirs else (0, 1e9)
            if parted is None:
                same_greedy += 1
            elif parted[1] <= gc.TYPES["f32"]:
                ties += 1
            else:
                c.fail(f"{name} {state} {text!r}: greedy parts at token {parted[0]} (engine log-probability gap "
                       f"{parted[1]:.3f}): engine {mine} {tok.decode(mine)!r} vs llama.cpp {theirs} "
                       f"{tok.decode(theirs)!r}")
        chat = (check_chat_path(c, server, name, state, tok, bos_id) if has_chat_template(folder)
                else "no template")
        with open(text_file, encoding="utf-8") as f:
            ppl_ids = engine_ids(args, run, folder, [f.read()])[0]
        with open(text_file, encoding="utf-8") as f:
            theirs_ids = server.tokenize(f.read())
        if ppl_ids != theirs_ids:
            at = next((k for k in range(min(len(ppl_ids), len(theirs_ids))) if ppl_ids[k] != theirs_ids[k]),
                      min(len(ppl_ids), len(theirs_ids)))
            c.fail(f"{name} {state}: the perplexity text's ids part at {at}: engine {ppl_ids[at:at + 5]} vs "
                   f"llama.cpp {theirs_ids[at:at + 5]} ({len(ppl_ids)} vs {len(theirs_ids)} ids)")
    theirs_ppl = llama_perplexity(gguf, text_file, args.threads)
    mine_ppl = engine_perplexity(args, run, folder, adapter, ppl_ids, bos_id)
    relative = abs(mine_ppl - theirs_ppl) / theirs_ppl
    c.worst = max(c.worst, relative)
    if relative > PPL_TOLERANCE:
        c.fail(f"{name} {state}: perplexity engine {mine_ppl:.4f} vs llama-perplexity {theirs_ppl:.4f} "
               f"(relative {relative:.2e} > {PPL_TOLERANCE})")
    c.rows.append([name, state, "yes" if adds_bos else "no", decision.split(": ", 1)[1], " ".join(counts),
                   f"{same_prompt}/{len(PROMPTS)}", f"{same_greedy}/{len(PROMPTS)}" + (f" ({ties} tie)" if ties else ""),
                   chat, f"{mine_ppl:.3f}", f"{theirs_ppl:.3f}", f"{relative:.1e}"])


def check_gguf_bos(args, c, run):
    text_file = perplexity_text(os.path.join(args.out, "ppl.txt"))
    for name, state, folder, adapter, tok in cases(args, run):
        check_case(args, c, run, name, state, folder, adapter, tok, text_file)
