#!/usr/bin/env python3
"""The engine against Hugging Face transformers and tokenizers on CPU: the `torch-latest` label's reference
checks, run inside Debian forky's root (tests/compat/torch2.sh reference), where python3-transformers,
python3-tokenizers and LibTorch 2.14 are Debian packages. Small random models of every family the engine
reads are written by transformers' own save_pretrained (tests/gpu/gpu_common.py's writer, biases and norms
drawn at random), then slipway-engine's commands are compared with transformers on the same folders:

  score     per line, fp32: |loss diff| / loss <= 1e-4 (the same formulas differ only in summation order,
            ~1e-7; a wrong RoPE, GQA, window or norm moves the loss by 1e-3 or more). bf16: the folder in
            bfloat16, the engine's --bf16 (fp32 weights, bf16 autocast) against HF in float32 under CPU
            autocast for the decoder and the head in fp32 as the engine's: |loss diff| <= 1e-2 absolute.
  generate  greedy tokens identical to model.generate(do_sample=False), prompts of 1, 7 and 30 tokens.
  dump      the first line's logits within 1e-4 of the largest |logit|; the loss and every parameter's
            gradient within 1e-4 of its largest value.
  tokenizer ids identical to python3-tokenizers (encode without and with special tokens, decode of its
            ids) for every reference tokenizer of the tokenizer suite's fixture and the demo tokenizer, on the
            tokenizer test corpus and the demo corpus.
  chat      `generate --chat --echo-prompt` renders each chat template of tests/data/chat-templates exactly
            as tokenizer.apply_chat_template(add_generation_prompt=True) does (and raises where it raises),
            with the same prompt ids, from a folder that transformers' tokenizer.save_pretrained wrote.
  chat_labels  `tokenize --model DIR --format messages` on conversations to train on (multi-turn, system
            prompts, empty answers, Russian): ids identical to apply_chat_template(tokenize=True) (or both
            refuse), and labels equal to a computation from transformers' own renders (hf_labels): for each
            assistant turn, the tokens from the end of apply_chat_template(the turns before it,
            add_generation_prompt=True), or from where its content starts where that prompt is not a prefix,
            through the next end-of-turn token (the template's eos), -100 elsewhere; also --train-on
            last_assistant.
  gguf      `export gguf` of an engine-trained chat LoRA (Llama 3, Llama 2 / Mistral and Qwen3 tokenizers) run
            in llama.cpp's llama-server: greedy tokens identical to the engine's (parting only at a near tie),
            top-10 log-probabilities within a tolerance per storage type (tests/compat/gguf_check.py).
  gguf_bos  plain text (no chat template) through f32 exports of five tokenizers (demo, Llama 2, Llama 3 with
            Meta's current post-processor, the older Llama 3, Qwen3), untrained and trained: the prompt ids of
            the engine, transformers and llama.cpp identical with the BOS the export says it adds, greedy
            continuations identical, llama-perplexity against the engine's within 1e-3
            (tests/compat/gguf_bos_check.py).

Every check counts what it compared and fails on zero. Prints a table per check and a summary.
Only JSON lines of the engine's stdout are read (LibTorch may print UCX/cpuinfo notes there).

  hf_reference.py --engine BIN --tokenizers DIR [--threads N] [--out DIR] [--only score,generate,...]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "gpu"))

import tokenizers  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

import gpu_common as g  # noqa: E402  (the HF model writer, random lines and tables of the GPU checks)
from gguf_bos_check import check_gguf_bos  # noqa: E402
from gguf_check import check_gguf  # noqa: E402

DEMO_TOKENIZER = os.path.join(REPO, "resources", "demo", "tokenizer.json")  # 4096 ids, as the models' vocab
CORPORA = {"tokenizer-corpus": os.path.join(REPO, "tests", "data", "tokenizer", "corpus.jsonl"),
           "demo-corpus": os.path.join(REPO, "resources", "demo", "corpus.jsonl")}
TEMPLATES = os.path.join(REPO, "tests", "data", "chat-templates")

_COMMON = dict(vocab_size=4096, hidden_size=128, intermediate_size=344, num_hidden_layers=2,
               max_position_embeddings=1024, initializer_range=0.1)
# family name -> (transformers family, config). Lines of 96 and 200 tokens pass mistral_window's window.
FAMILIES = {
    "llama3": ("llama", dict(_COMMON, num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5,
                             rope_theta=500000.0, tie_word_embeddings=False,
                             rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                           "high_freq_factor": 4.0, "original_max_position_embeddings": 64})),
    "llama2_tied": ("llama", dict(_COMMON, num_attention_heads=4, num_key_value_heads=4, rms_norm_eps=1e-6,
                                  rope_theta=10000.0, tie_word_embeddings=True)),
    "llama_head_dim": ("llama", dict(_COMMON, num_attention_heads=4, num_key_value_heads=1, head_dim=48,
                                     rms_norm_eps=1e-5, tie_word_embeddings=False)),
    "mistral": ("mistral", dict(_COMMON, num_attention_heads=4, num_key_value_heads=2, head_dim=48,
                                rms_norm_eps=1e-6, rope_theta=1e6, sliding_window=None, tie_word_embeddings=False)),
    "mistral_window": ("mistral", dict(_COMMON, num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-6,
                                       rope_theta=1e6, sliding_window=32, tie_word_embeddings=False)),
    "qwen2": ("qwen2", dict(_COMMON, num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-6,
                            rope_theta=1e6, use_sliding_window=False, tie_word_embeddings=True)),
    "qwen2_untied": ("qwen2", dict(_COMMON, num_attention_heads=4, num_key_value_heads=1, rms_norm_eps=1e-6,
                                   rope_theta=1e6, use_sliding_window=False, tie_word_embeddings=False)),
    "qwen3": ("qwen3", dict(_COMMON, num_attention_heads=4, num_key_value_heads=2, head_dim=64, rms_norm_eps=1e-6,
                            rope_theta=1e6, attention_bias=False, tie_word_embeddings=False)),
    "qwen3_tied": ("qwen3", dict(_COMMON, num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                                 rms_norm_eps=1e-6, rope_theta=1e6, attention_bias=False, tie_word_embeddings=True)),
}
SCORE_LENGTHS = (96, 2, 33, 200)
PROMPT_LENGTHS = (1, 7, 30)
NEW_TOKENS = 24

# Chat templates -> the reference tokenizer (tests/data/tokenizers/NAME) and the special tokens its model has.
TEMPLATE_TOKENIZERS = {"llama-3": ("llama3", "<|begin_of_text|>", "<|eot_id|>"),
                       "mistral": ("llama2", "<s>", "</s>"),
                       "qwen": ("qwen3", None, "<|im_end|>")}


def message(role, content):
    return {"role": role, "content": content}


def conversations():
    """What generate --chat renders (messages only; add_generation_prompt is always on there): the
    conversations of tests/chat/chat_template_test.cpp that need no other template variables."""
    function = {"name": "get_weather", "arguments": {"city": "Moscow"}}
    call = {"role": "assistant", "content": "",
            "tool_calls": [{"id": "call00001", "type": "function", "function": function}]}  # Mistral: 9 characters
    tool_result = {"role": "tool", "content": "{\"temp\": 5}", "tool_call_id": "call00001"}
    return {
        "system_user": [message("system", "You are a helpful assistant."), message("user", "Hello!")],
        "no_system": [message("user", "What is 2+2?")],
        "multi_turn": [message("user", "Hi"), message("assistant", "Hello! How can I help?"),
                       message("user", "Tell me a joke.")],
        "ends_with_assistant": [message("system", "Be brief."), message("user", "Hi"),
                                message("assistant", "Hello."), message("user", "Bye"),
                                message("assistant", "Goodbye.")],
        "russian": [message("system", "Ты — Сайга, русскоязычный автоматический ассистент."),
                    message("user", "Почему трава зелёная?"), message("assistant", "Из-за хлорофилла."),
                    message("user", "А небо — голубое?")],
        "quotes_newlines_braces": [
            message("user", "  He said \"hi\" and 'bye'\n\nthen {{ x }} {% if %} {# c #} \\n \t "),
            message("assistant", "\n{\"a\": [1, 2]}\n"), message("user", "}}{{")],
        "whitespace_content": [message("user", "   "), message("assistant", ""), message("user", "\n")],
        "thinking_assistant": [message("user", "2+2?"), message("assistant", "<think>\nadd them\n</think>\n\n4"),
                               message("user", "3+3?")],
        "assistant_first": [message("assistant", "I speak first."), message("user", "OK")],
        "two_users": [message("user", "one"), message("user", "two")],
        "unknown_role": [message("user", "hi"), message("critic", "meh")],
        "tool_call": [message("user", "Weather in Moscow?"), call, tool_result, message("user", "Thanks")],
        "emoji_specials": [message("user", "🙂 <|im_start|> </s> [INST] <|eot_id|> done")],
    }


class Check:
    """One comparison kind: rows for its table, what it compared, its failures and its time."""

    def __init__(self, name, headers):
        self.name, self.headers = name, headers
        self.rows, self.failures = [], []
        self.compared, self.worst, self.seconds = 0, 0.0, 0.0

    def fail(self, text):
        if len(self.failures) < 20:
            self.failures.append(f"{self.name}: {text}")
        elif len(self.failures) == 20:
            self.failures.append(f"{self.name}: ... (more)")


def engine(args, *command, stdin=None, check=True):
    """Runs slipway-engine; returns (JSON objects of its stdout, the process)."""
    r = subprocess.run([args.engine, *map(str, command)], input=stdin, capture_output=True, encoding="utf-8")
    if check and r.returncode != 0:
        sys.stderr.write(r.stdout[-3000:] + r.stderr[-3000:])
        raise SystemExit(f"slipway-engine {command[0]} failed with exit code {r.returncode}")
    return json_lines(r.stdout), r


def json_lines(text):
    out = []
    for line in text.split("\n"):  # not splitlines: a decoded text may hold U+2028, U+0085 and such
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass  # a library's note that happens to start with a brace
    return out


def hf_model(folder):
    return g.hf_from_pretrained(folder, torch.float32).eval()


def hf_scores(model, lines, bf16):
    """(loss, accuracy) per line: HF's own loss in fp32, or for bf16 the decoder under CPU autocast and the
    lm_head and cross-entropy in fp32 outside it (as the engine's --bf16)."""
    out = []
    for ids in lines:
        x = torch.tensor([ids])
        with torch.no_grad():
            if bf16:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    hidden = model.model(input_ids=x).last_hidden_state  # (1, T, C)
                logits = torch.nn.functional.linear(hidden[0, :-1].float(), model.lm_head.weight.float())
                loss = torch.nn.functional.cross_entropy(logits, x[0, 1:])
            else:
                result = model(input_ids=x, labels=x)
                logits, loss = result.logits[0, :-1], result.loss
            hits = (logits.argmax(-1) == x[0, 1:]).sum().item()
        out.append((loss.item(), hits / (len(ids) - 1)))
    return out


def check_score(args, folders, c):
    for family, (fp32, bf16_folder) in folders.items():
        lines = g.random_lines(4096, SCORE_LENGTHS)
        tokens = g.write_lines(os.path.join(args.out, f"{family}-score.jsonl"), lines)
        for precision, folder in (("fp32", fp32), ("bf16", bf16_folder)):
            bf16 = precision == "bf16"
            scored, _ = engine(args, "score", "--model", folder, "--tokens", tokens, "--threads", args.threads,
                               *(["--bf16"] if bf16 else []))
            ours = [s for s in scored if "loss" in s and not s.get("summary")]
            if len(ours) != len(lines):
                c.fail(f"{family} {precision}: {len(ours)} score lines for {len(lines)} token lines")
                continue
            tolerance = 1e-2 if bf16 else 1e-4
            worst = 0.0
            for ids, mine, (loss, accuracy) in zip(lines, ours, hf_scores(hf_model(folder), lines, bf16)):
                diff = abs(mine["loss"] - loss) if bf16 else abs(mine["loss"] - loss) / abs(loss)
                worst = max(worst, diff)
                c.compared += 1
                if abs(mine["accuracy"] - accuracy) > 1.0 / (len(ids) - 1) + 1e-12:  # one near tie may flip
                    c.fail(f"{family} {precision} {len(ids)} tokens: accuracy {mine['accuracy']} vs {accuracy}")
            c.rows.append([family, precision, len(lines), worst, tolerance])
            if worst > tolerance:
                c.fail(f"{family} {precision}: max loss diff {worst:.3e} > {tolerance}")
            if not bf16:
                c.worst = max(c.worst, worst)


def check_generate(args, folders, c):
    for family, (folder, _) in folders.items():
        prompts = g.random_lines(4096, PROMPT_LENGTHS, seed=3)
        path = g.write_lines(os.path.join(args.out, f"{family}-prompts.jsonl"), prompts)
        generated, _ = engine(args, "generate", "--model", folder, "--prompts", path, "--max-new-tokens", NEW_TOKENS,
                              "--threads", args.threads)
        generated = [x for x in generated if "ids" in x or "error" in x]
        model = hf_model(folder)
        same = 0
        for ids, mine in zip(prompts, generated):
            x = torch.tensor([ids])
            with torch.no_grad():
                theirs = model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=NEW_TOKENS,
                                        do_sample=False, pad_token_id=model.generation_config.eos_token_id)
            theirs = theirs[0, len(ids):].tolist()
            c.compared += 1
            if mine.get("ids") == theirs:
                same += 1
            else:
                c.fail(f"{family} prompt of {len(ids)}: engine {mine.get('ids', mine)} vs HF {theirs}")
        if len(generated) != len(prompts):
            c.fail(f"{family}: {len(generated)} results for {len(prompts)} prompts")
        c.rows.append([family, len(prompts), NEW_TOKENS, f"{same}/{len(prompts)}"])


def relative(a, b):
    return ((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item()


def check_dump(args, folders, c):
    from safetensors.torch import load_file
    for family, (folder, _) in folders.items():
        ids = g.random_lines(4096, (96,), seed=5)[0]
        tokens = g.write_lines(os.path.join(args.out, f"{family}-dump.jsonl"), [ids])
        out = os.path.join(args.out, f"{family}-dump.safetensors")
        engine(args, "dump", "--model", folder, "--tokens", tokens, "--out", out)
        dump = load_file(out)
        model = hf_model(folder)
        x = torch.tensor([ids])
        result = model(input_ids=x, labels=x)
        result.loss.backward()
        figures = {"logits": relative(dump["logits"], result.logits[0].detach()),
                   "loss": relative(dump["loss"], result.loss.detach().reshape(1))}
        grads = 0
        for name, p in model.named_parameters():
            if p.grad is None:
                continue
            if "grad." + name not in dump:
                c.fail(f"{family}: the engine's dump has no gradient of {name}")
                continue
            figures["grad." + name] = relative(dump["grad." + name], p.grad)
            grads += 1
        c.compared += len(figures)
        name, worst = max(figures.items(), key=lambda kv: kv[1])
        c.worst = max(c.worst, worst)
        c.rows.append([family, len(ids), figures["logits"], figures["loss"], grads, f"{worst:.3e} ({name})"])
        for key, value in figures.items():
            if value > 1e-4:
                c.fail(f"{family} {key}: {value:.3e} of the largest > 1e-4")


def reference_tokenizers(args):
    """(name, tokenizer.json) of the tokenizer suite's fixture (tests/reference/setup_fixture.sh) and the demo.
    The Unigram ones exist only where slipway-tokenizer was built (SentencePiece's headers usable)."""
    found = []
    for name in ("llama3", "qwen3", "llama2"):
        found.append((name, os.path.join(args.tokenizers, "tokenizers", name, "tokenizer.json")))
    for name in ("trained", "metaspace", "extended", "extended-llama3", "extended-qwen3", "extended-llama2"):
        found.append((name, os.path.join(args.tokenizers, name, "tokenizer.json")))
    for name in ("unigram", "unigram-f32"):
        path = os.path.join(args.tokenizers, name, "tokenizer.json")
        if os.path.exists(path) or os.path.exists(os.path.join(os.path.dirname(args.engine), "slipway-tokenizer")):
            found.append((name, path))
    found.append(("demo", DEMO_TOKENIZER))
    return found


def check_tokenizer(args, c):
    for name, path in reference_tokenizers(args):
        if not os.path.exists(path):
            c.fail(f"{name}: {path} is missing (the tokenizer suite's fixture)")
            continue
        hf = tokenizers.Tokenizer.from_file(path)
        for corpus_name, corpus in CORPORA.items():
            with open(corpus, encoding="utf-8") as f:
                text = f.read()
            # Lines end at \n only, as the engine reads them (str.splitlines would also split at U+2028 and such).
            texts = [json.loads(line)["text"] for line in text.split("\n") if line.strip()]
            counts = []
            for special in (False, True):
                mine, _ = engine(args, "tokenize", "--tokenizer", path, "--threads", args.threads,
                                 *(["--add-special-tokens"] if special else []), stdin=text)
                theirs = [e.ids for e in hf.encode_batch(texts, add_special_tokens=special)]
                counts.append(compare_lines(c, f"{name} {corpus_name} encode special={special}", texts,
                                            [m.get("ids") for m in mine], theirs))
                if not special:
                    plain = theirs
            ids_text = "".join(json.dumps({"ids": ids}) + "\n" for ids in plain)
            decoded, _ = engine(args, "tokenize", "--decode", "--tokenizer", path, "--threads", args.threads,
                                stdin=ids_text)
            counts.append(compare_lines(c, f"{name} {corpus_name} decode", texts, [d.get("text") for d in decoded],
                                        hf.decode_batch(plain, skip_special_tokens=False)))
            c.rows.append([name, corpus_name, len(texts), *counts])


def compare_lines(c, what, texts, mine, theirs):
    """Counts equal lines; a failure per differing line (the first few named)."""
    if len(mine) != len(theirs):
        c.fail(f"{what}: {len(mine)} engine lines for {len(theirs)}")
    same = 0
    for i, (a, b) in enumerate(zip(mine, theirs)):
        c.compared += 1
        if a == b:
            same += 1
        else:
            c.fail(f"{what} line {i + 1} {texts[i][:40]!r}: engine {str(a)[:80]} vs HF {str(b)[:80]}")
    return f"{same}/{len(theirs)}"


def chat_folder(args, template_file, tokenizer_path, bos, eos):
    """A model folder as transformers writes it: its tokenizer (tokenizer.json, the template, the special
    tokens) by tokenizer.save_pretrained, and a tiny random Llama over its whole vocabulary."""
    folder = os.path.join(args.out, "chat-" + os.path.basename(template_file)[:-len(".jinja")])
    with open(template_file, encoding="utf-8") as f:
        template = f.read()
    special = {"eos_token": eos, **({"bos_token": bos} if bos else {})}
    tok = transformers.PreTrainedTokenizerFast(tokenizer_file=tokenizer_path, **special)
    tok.chat_template = template
    tok.save_pretrained(folder)
    config = transformers.LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                      num_attention_heads=2, max_position_embeddings=4096, tie_word_embeddings=True)
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(config).save_pretrained(folder)
    return folder, transformers.AutoTokenizer.from_pretrained(folder)


def template_folders(args):
    """(template file name, tokenizer name, folder, HF tokenizer) for each chat template of TEMPLATES, over
    its reference tokenizer."""
    for template_file in sorted(os.path.join(TEMPLATES, f) for f in os.listdir(TEMPLATES) if f.endswith(".jinja")):
        base = os.path.basename(template_file)
        kind = next(k for k in TEMPLATE_TOKENIZERS if base.startswith(k))
        tokenizer_name, bos, eos = TEMPLATE_TOKENIZERS[kind]
        tokenizer_path = os.path.join(args.tokenizers, "tokenizers", tokenizer_name, "tokenizer.json")
        folder, tok = chat_folder(args, template_file, tokenizer_path, bos, eos)
        yield base, tokenizer_name, folder, tok


def check_chat(args, c):
    convs = conversations()
    for base, tokenizer_name, folder, tok in template_folders(args):
        prompts = os.path.join(folder, "conversations.jsonl")
        with open(prompts, "w", encoding="utf-8") as f:
            for messages in convs.values():
                f.write(json.dumps({"messages": messages}, ensure_ascii=False) + "\n")
        mine, _ = engine(args, "generate", "--model", folder, "--prompts", prompts, "--chat", "--echo-prompt",
                         "--max-new-tokens", 1, "--threads", args.threads, check=False)
        mine = [m for m in mine if "error" in m or "prompt_ids" in m]
        if len(mine) != len(convs):
            c.fail(f"{base}: {len(mine)} engine lines for {len(convs)} conversations")
        texts = ids = raised = 0
        for (name, messages), got in zip(convs.items(), mine):
            c.compared += 1
            try:
                text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            except Exception as e:  # noqa: BLE001 - where transformers raises, the engine must refuse too
                if "error" in got:
                    raised += 1
                else:
                    c.fail(f"{base} {name}: HF raised {type(e).__name__}: {e}; the engine rendered {got['prompt']!r}")
                continue
            if "error" in got:
                c.fail(f"{base} {name}: the engine failed ({got['error']}); HF rendered {text[:80]!r}")
                continue
            if got["prompt"] == text:
                texts += 1
            else:
                c.fail(f"{base} {name}: engine {got['prompt'][:200]!r} vs HF {text[:200]!r}")
            # apply_chat_template(tokenize=True) encodes the text without adding special tokens.
            if got["prompt_ids"] == tok(text, add_special_tokens=False)["input_ids"]:
                ids += 1
            else:
                c.fail(f"{base} {name}: prompt ids differ")
        c.rows.append([base, tokenizer_name, len(convs), texts, ids, raised])


def training_conversations():
    """Conversations as a chat fine-tune reads them (each with an assistant turn)."""
    return {
        "system_multi_turn": [message("system", "Be brief."), message("user", "Hi"), message("assistant", "Hello."),
                              message("user", "Bye"), message("assistant", "Goodbye.")],
        "no_system": [message("user", "What is 2+2?"), message("assistant", "4")],
        "russian": [message("user", "Почему трава зелёная?"), message("assistant", "Из-за хлорофилла."),
                    message("user", "А небо — голубое?"), message("assistant", "Из-за рассеяния Рэлея.")],
        "empty_answer": [message("user", "Say nothing."), message("assistant", "")],
        "quotes_newlines_braces": [message("user", "  He said \"hi\"\n\nthen {{ x }} {% if %}"),
                                   message("assistant", "\n{\"a\": [1, 2]}\n")],
        "emoji": [message("user", "🙂?"), message("assistant", "🙂 done")],
    }


def hf_ids(tok, messages, add_generation_prompt):
    """apply_chat_template(tokenize=True)'s ids (transformers 5 returns a BatchEncoding, 4 a list)."""
    out = tok.apply_chat_template(messages, add_generation_prompt=add_generation_prompt, tokenize=True)
    return list(out["input_ids"] if hasattr(out, "keys") else out)


def hf_labels(tok, messages, ids, last_only):
    """The trained spans computed from transformers' renders. Each assistant turn starts at the end of the
    prefix rendered with the generation prompt when those ids begin the conversation's; otherwise (a template
    that renders earlier turns differently, or a token merged across the boundary) where the turn's content
    starts, found as the first id that differs from the conversation rendered with that content emptied. It
    ends at the first eos (the template's end-of-turn token) from the content's end on."""
    eos = tok.convert_tokens_to_ids(tok.eos_token)
    labels = [-100] * len(ids)
    turns = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    for i in turns[-1:] if last_only else turns:
        prefix = hf_ids(tok, messages[:i], True) if i else []
        emptied = hf_ids(tok, [dict(m, content="") if j == i else m for j, m in enumerate(messages)], False)
        begin = next((j for j, (a, b) in enumerate(zip(ids, emptied)) if a != b), min(len(ids), len(emptied)))
        suffix = 0
        while (suffix < len(ids) - begin and suffix < len(emptied) - min(begin, len(emptied))
               and ids[-1 - suffix] == emptied[-1 - suffix]):
            suffix += 1
        start = len(prefix) if ids[:len(prefix)] == prefix else begin
        content_end = start if begin == len(ids) else len(ids) - suffix  # nothing differs: an empty answer
        end = next((j for j in range(max(start, content_end), len(ids)) if ids[j] == eos), len(ids) - 1)
        labels[start:end + 1] = ids[start:end + 1]
    return labels


def check_chat_labels(args, c):
    convs = training_conversations()
    for base, tokenizer_name, folder, tok in template_folders(args):
        lines = "".join(json.dumps({"messages": m}, ensure_ascii=False) + "\n" for m in convs.values())
        ids_same = labels_same = last_same = raised = 0
        for train_on in ("assistant", "last_assistant"):
            p = subprocess.run([args.engine, "tokenize", "--model", folder, "--format", "messages", "--train-on",
                                train_on, "--skip-bad", "--threads", "1"], input=lines, capture_output=True,
                               text=True)
            mine = json_lines(p.stdout)
            refused = [line for line in p.stderr.splitlines() if ": skipped: " in line]
            expected = []
            for name, messages in convs.items():
                try:
                    expected.append((name, messages, hf_ids(tok, messages, False)))
                except Exception as e:  # noqa: BLE001 - where transformers raises, the engine must refuse too
                    expected.append((name, messages, e))
            if len(mine) + len(refused) != len(convs):
                c.fail(f"{base} {train_on}: {len(mine)} lines and {len(refused)} refusals for {len(convs)} "
                       f"conversations (exit {p.returncode}: {p.stderr[-300:]})")
                continue
            produced = iter(mine)
            for name, messages, theirs in expected:
                c.compared += 1
                if isinstance(theirs, Exception):
                    if any(f"stdin:{list(convs).index(name) + 1}:" in r for r in refused):
                        raised += train_on == "assistant"
                    else:
                        c.fail(f"{base} {name}: HF raised {theirs}; the engine tokenized it")
                        next(produced, None)
                    continue
                got = next(produced, None)
                if got is None:
                    c.fail(f"{base} {name}: the engine refused it; HF rendered it")
                    continue
                if got["ids"] != theirs:
                    c.fail(f"{base} {name}: ids differ from apply_chat_template(tokenize=True)")
                    continue
                want = hf_labels(tok, messages, theirs, train_on == "last_assistant")
                if got["labels"] != want:
                    diff = next(j for j, (a, b) in enumerate(zip(got["labels"], want)) if a != b)
                    c.fail(f"{base} {name} ({train_on}): labels differ first at token {diff}: "
                           f"{tok.decode(theirs[max(0, diff - 3):diff + 3])!r}")
                    continue
                if train_on == "assistant":
                    ids_same += 1
                    labels_same += 1
                else:
                    last_same += 1
        c.rows.append([base, tokenizer_name, len(convs), ids_same, labels_same, last_same, raised])


def hf_folders(args):
    """family -> (fp32 folder, bf16 folder), written by transformers' save_pretrained with the demo tokenizer."""
    folders = {}
    for family, (arch, config) in FAMILIES.items():
        pair = []
        for precision, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
            folder = g.write_hf_model(os.path.join(args.out, f"{family}-{precision}"), arch, dtype, **config)
            shutil.copy(DEMO_TOKENIZER, os.path.join(folder, "tokenizer.json"))
            pair.append(folder)
        folders[family] = tuple(pair)
    return folders


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", required=True)
    ap.add_argument("--tokenizers", required=True, help="the tokenizer suite's fixture folder (build/reference)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", help="work folder (default: a temporary one, removed when every check passed)")
    ap.add_argument("--only", default="score,generate,dump,tokenizer,chat,chat_labels,gguf,gguf_bos")
    args = ap.parse_args()
    keep = bool(args.out)
    args.out = args.out or tempfile.mkdtemp(prefix="slipway-hf-reference-")
    g.fresh(args.out)
    torch.set_num_threads(args.threads)
    version = subprocess.run([args.engine, "--version"], capture_output=True, text=True).stdout.splitlines()
    print(f"transformers {transformers.__version__}, tokenizers {tokenizers.__version__}, torch {torch.__version__}, "
          f"{next((v for v in version if v.startswith('slipway-engine')), 'slipway-engine ?')}")
    only = args.only.split(",")
    checks = {
        "score": Check("score", ["family", "precision", "lines", "max loss diff (fp32 rel, bf16 abs)", "tolerance"]),
        "generate": Check("generate", ["family", "prompts", "new tokens", "identical"]),
        "dump": Check("dump", ["family", "tokens", "logits (of max)", "loss (rel)", "gradients", "worst"]),
        "tokenizer": Check("tokenizer", ["tokenizer", "corpus", "lines", "encode", "encode +special", "decode"]),
        "chat": Check("chat", ["template", "tokenizer", "conversations", "text identical", "ids identical",
                               "both raised"]),
        "chat_labels": Check("chat_labels", ["template", "tokenizer", "conversations", "ids identical",
                                             "labels identical", "last_assistant identical", "both refused"]),
        "gguf": Check("gguf", ["tokenizer", "architecture", "type", "greedy identical", "parted at a near tie",
                               "tokens compared", "max top-10 logprob diff", "tolerance", "bytes"]),
        "gguf_bos": Check("gguf_bos", ["tokenizer", "model", "adds BOS", "decided by", "prompt ids engine/llama.cpp",
                                       "prompt ids identical", "greedy identical",
                                       "chat prompt ids transformers/llama.cpp", "PPL engine", "PPL llama.cpp",
                                       "PPL rel diff"]),
    }
    started = time.time()
    folders = hf_folders(args) if {"score", "generate", "dump"} & set(only) else {}
    print(f"models: {len(folders)} families x fp32/bf16 written by save_pretrained in {time.time() - started:.1f} s")
    runs = {"score": lambda c: check_score(args, folders, c), "generate": lambda c: check_generate(args, folders, c),
            "dump": lambda c: check_dump(args, folders, c), "tokenizer": lambda c: check_tokenizer(args, c),
            "chat": lambda c: check_chat(args, c), "chat_labels": lambda c: check_chat_labels(args, c),
            "gguf": lambda c: check_gguf(args, c, engine, json_lines),
            "gguf_bos": lambda c: check_gguf_bos(args, c, engine)}
    failures, summary = [], []
    for name in only:
        c = checks[name]
        started = time.time()
        runs[name](c)
        c.seconds = time.time() - started
        print(f"\n## {name} ({c.seconds:.1f} s)")
        g.table(c.headers, c.rows)
        if c.compared == 0:
            c.fail("nothing was compared")
        failures += c.failures
        summary.append([name, c.compared, c.worst if name in ("score", "dump", "gguf", "gguf_bos") else "-",
                        len(c.failures),
                        f"{c.seconds:.1f}", "FAIL" if c.failures else "PASS"])
    print("\n## summary")
    g.table(["check", "compared", "worst fp32 (rel)", "failures", "seconds", "result"], summary)
    code = g.verdict(failures, args.out, {row[0]: row[1] for row in summary},
                     compared=sum(c.compared for c in checks.values()))
    if code == 0 and not keep:
        shutil.rmtree(args.out, ignore_errors=True)
    elif code:
        print(f"work folder kept: {args.out}")
    return code


if __name__ == "__main__":
    sys.exit(main())
