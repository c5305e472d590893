#!/usr/bin/env python3
"""`slipway-engine eval` against EleutherAI's lm-evaluation-harness itself (PyPI lm-eval 0.4.13, its `hf` backend
on CPU): ctest's torch_latest_lm_eval, run in Debian forky's root by tests/compat/torch2.sh pyref (lm-eval, datasets
and sacrebleu pinned in tests/reference/requirements.txt; torch, transformers, pyarrow, pandas and the rest are the
root's Debian packages). tests/reference/check_eval.sh compares the engine with our own re-implementation
(eval_reference.py); this compares it with the harness.

One tiny random Llama (tied embeddings, random norm weights, 48 positions so that long inputs are cut) and the demo
tokenizer, both written by transformers' save_pretrained into one folder that the engine and lm-eval both read; the
same items (Russian and English, trailing ASCII and Unicode whitespace, a context and a text longer than the model)
as JSONL files; the lm-eval tasks are tests/reference/lm_eval/*.yaml (dataset_path: json, data_files in the working
folder; HF_DATASETS_OFFLINE=1, HF_HUB_OFFLINE=1), run by lm_eval.simple_evaluate with an HFLM (fp32, CPU, batch 1).
Compared per item and in the aggregate (both sides fp32 with the same formulas; lm-eval sums a continuation's
log-probabilities in float32, the engine in double: measured <= 4.3e-7 relative, <= 5.5e-5 absolute on NLLs of ~2000):

  mc, mc_nodelim  multiple_choice with target_delimiter " " and "": every choice's log-likelihood within
                  LL_RTOL relative (+ LL_ATOL absolute), is_greedy, pred and pred_norm equal; acc and acc_norm equal.
  gen, gen_strip  generate_until (greedy, until ["\\n", "."], max_gen_toks 12) against the generation kind with
                  "strip": false, and with "strip": true against lm-eval's remove_whitespace filter: every generated
                  text identical (as lm-eval returns it: cut at the first stop string), exact_match equal per item
                  and in the mean. Targets come from the engine's own first pass (some equal, some a prefix, some
                  wrong), so exact_match is neither 0 nor 1.
  ppl             loglikelihood_rolling against the perplexity kind: every token of a text predicted, the first
                  from the prefix token (BOS). Every text's NLL within LL_RTOL of -lm-eval's log-likelihood and its
                  token count equal to transformers' tokenizer's; lm-eval's word_perplexity, byte_perplexity and
                  bits_per_byte recomputed from the engine's NLLs (its count_words/count_bytes) within LL_RTOL
                  relative; the engine's token perplexity recomputed from lm-eval's log-likelihoods.

Both sides read the same data files. Two BOS settings, every comparison in each:
  no_bos   HFLM(add_bos_token=False), lm-eval's default until 0.4.10; the engine's tasks say "add_bos_token": false.
  tok_bos  HFLM's default since (add_bos_token=None: the tokenizer decides, and this Llama-3-style tokenizer's
           post-processor prepends <|begin_of_text|>); the engine's tasks leave add_bos_token out, and the
           engine's own special-token rule (engine/tokenizer/special_tokens.h) must decide the same. One prompt
           is written with its BOS: neither side adds a second (lm-eval's has_bos_prefix).

Every comparison counts what it compared and fails on zero. Only the engine's JSON is read from its stdout.

  lm_eval_check.py --engine BIN --work DIR [--threads N]
"""
import argparse
import contextlib
import json
import math
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TASK_DIR = os.path.join(HERE, "lm_eval")
DEMO_TOKENIZER = os.path.join(REPO, "resources", "demo", "tokenizer.json")
sys.path.insert(0, os.path.join(REPO, "tests", "gpu"))

# No network: the tasks' data are local JSON files, the model a local folder.
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import torch  # noqa: E402
import transformers  # noqa: E402

import gpu_common as g  # noqa: E402  (the HF model writer and the table printer)

# Tolerances, per log-likelihood (a sum over a choice's or a text's tokens) and for the perplexity aggregates:
# fp32 on both sides; what may differ is summation order and precision (lm-eval sums in float32: measured <= 4.3e-7
# relative), while one token scored differently moves a sum by its log-probability (>= 1e-2 relative here).
LL_RTOL = 1e-5
LL_ATOL = 1e-5

BOS, EOS, PAD = "<|begin_of_text|>", "<|end_of_text|>", "<|pad|>"
# 4096 ids as the demo tokenizer; 48 positions: long contexts are cut on the left, long texts rolled.
MODEL = dict(vocab_size=4096, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=48, rms_norm_eps=1e-5, initializer_range=0.5,
             tie_word_embeddings=True, bos_token_id=4093, eos_token_id=4094, pad_token_id=4095)
MAX_GEN = 12
STOP = ["\n", "."]
LM_TASKS = ["slipway_mc", "slipway_mc_nodelim", "slipway_gen", "slipway_gen_strip", "slipway_ppl"]
# lm-eval task -> (the engine's task entry, data file)
ENGINE_TASKS = {
    "slipway_mc": ({"name": "mc", "kind": "multiple_choice"}, "mc.jsonl"),
    "slipway_mc_nodelim": ({"name": "mc_nodelim", "kind": "multiple_choice", "target_delimiter": ""}, "mc.jsonl"),
    "slipway_gen": ({"name": "gen", "kind": "generation", "max_new_tokens": MAX_GEN, "stop": STOP, "strip": False},
                    "gen.jsonl"),
    "slipway_gen_strip": ({"name": "gen_strip", "kind": "generation", "max_new_tokens": MAX_GEN, "stop": STOP,
                           "strip": True}, "gen_strip.jsonl"),
    "slipway_ppl": ({"name": "ppl", "kind": "perplexity"}, "ppl.jsonl"),
}
WORDS = ["кот", "dog", "Москва", "river", "ёж", "computer", "снег", "tea", "программа", "x"]


class Check:
    """One comparison: what it compared, its largest differences, its failures."""

    def __init__(self, name):
        self.name, self.compared, self.failures = name, 0, []
        self.max_ll = self.max_rel = 0.0  # largest |diff| of a per-item log-likelihood / NLL; largest relative

    def fail(self, text):
        if len(self.failures) < 20:
            self.failures.append(f"{self.name}: {text}")

    def equal(self, what, ours, theirs):
        self.compared += 1
        if ours != theirs:
            self.fail(f"{what}: engine {ours!r} vs lm-eval {theirs!r}")

    def close(self, what, ours, theirs, item=True):
        """|ours - theirs| <= LL_ATOL + LL_RTOL * |theirs|; `item`: a per-item log-likelihood or NLL."""
        self.compared += 1
        d = abs(ours - theirs)
        if item:
            self.max_ll = max(self.max_ll, d)
        self.max_rel = max(self.max_rel, d / max(abs(theirs), 1e-30))
        if not d <= LL_ATOL + LL_RTOL * abs(theirs):
            self.fail(f"{what}: engine {ours!r} vs lm-eval {theirs!r} (diff {d:.3e})")


# ----------------------------------------------------------------------------------------------- the fixture

def write_model(folder):
    """The demo tokenizer (tokenizer.json, its special tokens) and a random Llama, both by save_pretrained."""
    g.write_hf_model(folder, "llama", torch.float32, seed=5, **MODEL)
    tok = transformers.PreTrainedTokenizerFast(tokenizer_file=DEMO_TOKENIZER, bos_token=BOS, eos_token=EOS,
                                               pad_token=PAD)
    tok.save_pretrained(folder)
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    with_bos = tok.encode("Москва river")
    plain = tok.encode("Москва river", add_special_tokens=False)
    # tok_bos is only a second setting if the tokenizer's own default prepends BOS.
    assert with_bos == [MODEL["bos_token_id"]] + plain, f"the tokenizer's default is not BOS + text: {with_bos}"
    return tok


def items():
    """(mc rows, generation prompts, perplexity texts) as lm-eval sees them."""
    mc = []
    for i in range(12):
        context = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(3 + i))
        if i % 3 == 0:
            # trailing whitespace moves into the continuation (str.rstrip: Unicode whitespace too)
            context += {3: "\u00a0", 6: "\u3000 "}.get(i, " ")
        if i == 11:
            context = " ".join(WORDS * 12)  # longer than the model: cut on the left
        choices = [WORDS[(i * 7 + k) % len(WORDS)] + ("." * k) for k in range(2 + i % 3)]
        mc.append({"context": context, "choices": choices, "gold": i % len(choices)})
    prompts = [f"Повтори: {WORDS[i]} {WORDS[(i + 3) % 10]}\nОтвет:" for i in range(9)]
    prompts[4] = BOS + prompts[4]  # written with its BOS
    texts = [" ".join(WORDS[i:] + WORDS[:i]) + "." for i in range(6)] + ["x", "Москва  river\n"]
    texts.append(" ".join(WORDS * 8))  # longer than the model: rolling windows
    return mc, prompts, texts


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def write_engine_tasks(folder, data, add_bos_token):
    """The engine's task file over `data`: {data file: rows}; add_bos_token None leaves the option out."""
    os.makedirs(folder, exist_ok=True)
    for name, rows in data.items():
        write_jsonl(os.path.join(folder, name), rows)
    option = {} if add_bos_token is None else {"add_bos_token": add_bos_token}
    tasks = [dict(entry, data=file, **option) for entry, file in (ENGINE_TASKS[t] for t in LM_TASKS)
             if file in data]
    path = os.path.join(folder, "tasks.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"schema": "slipway.eval/1", "tasks": tasks}, f, ensure_ascii=False, indent=1)
    return path


def run_engine(args, tasks_path, details_path):
    """slipway-engine eval; returns ({task name: result}, {task name: [detail lines]})."""
    cmd = [args.engine, "eval", "--model", args.model_dir, "--tasks", tasks_path, "--threads", str(args.threads),
           "--details", details_path]
    r = subprocess.run(cmd, capture_output=True, encoding="utf-8")
    if r.returncode != 0:
        sys.stderr.write(r.stdout[-3000:] + r.stderr[-3000:])
        raise SystemExit(f"slipway-engine eval failed with exit code {r.returncode}")
    result = None
    for m in re.finditer(r"^\{", r.stdout, re.M):  # LibTorch may print notes before the JSON
        try:
            doc, _ = json.JSONDecoder().raw_decode(r.stdout[m.start():])
        except json.JSONDecodeError:
            continue
        if isinstance(doc, dict) and "tasks" in doc:
            result = doc
    if result is None:
        raise SystemExit("slipway-engine eval printed no result JSON:\n" + r.stdout[-2000:])
    details = {}
    with open(details_path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                details.setdefault(d["task"], []).append(d)
    return {t["name"]: t for t in result["tasks"]}, details


def generation_targets(generated):
    """Targets from the engine's own generations: equal, a strict prefix, wrong, in turn (raw and stripped)."""
    gen, gen_strip = [], []
    for i, text in enumerate(generated):
        for rows, t in ((gen, text), (gen_strip, text.strip())):
            if not t.strip():
                target = "none"
            elif i % 3 == 0:
                target = t
            elif i % 3 == 1:
                target = t[: max(1, len(t) // 2)] if len(t) > 1 else t + "!"
            else:
                target = "wrong " + t
            rows.append(target)
    return gen, gen_strip


# --------------------------------------------------------------------------------------------------- lm-eval

def run_lm_eval(model_dir, add_bos_token, threads, log_path):
    """lm_eval.simple_evaluate of LM_TASKS with an HFLM on `model_dir`; returns (results, {task: samples by doc}).
    Its progress bars (stderr) go to `log_path`."""
    import lm_eval
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    torch.set_num_threads(threads)
    lm = HFLM(pretrained=model_dir, backend="causal", dtype="float32", device="cpu", batch_size=1,
              add_bos_token=add_bos_token)
    assert lm.max_length == MODEL["max_position_embeddings"], f"lm-eval's max_length is {lm.max_length}"
    manager = TaskManager(include_path=TASK_DIR, include_defaults=False)
    with open(log_path, "w") as log, contextlib.redirect_stderr(log):
        out = lm_eval.simple_evaluate(model=lm, tasks=LM_TASKS, task_manager=manager, num_fewshot=0,
                                      log_samples=True, bootstrap_iters=0, random_seed=0, numpy_random_seed=0,
                                      torch_random_seed=0, fewshot_random_seed=0)
    samples = {t: {s["doc_id"]: s for s in rows} for t, rows in out["samples"].items()}
    return out["results"], samples


# ----------------------------------------------------------------------------------------------- comparisons

def compare_mc(c, task, ours, details, theirs, samples, rows):
    ed = details.get(ENGINE_TASKS[task][0]["name"], [])
    c.equal(f"{task} samples", len(ed), len(samples))
    for i, (d, row) in enumerate(zip(ed, rows)):
        s = samples[i]
        resps = [r[0] for r in s["resps"]]  # one (loglikelihood, is_greedy) per choice
        lls = [float(r[0]) for r in resps]
        greedy = [bool(r[1]) for r in resps]
        c.equal(f"{task}[{i}] choices", len(d["loglikelihoods"]), len(lls))
        for j, (a, b) in enumerate(zip(d["loglikelihoods"], lls)):
            c.close(f"{task}[{i}] loglikelihood[{j}]", a, b)
        c.equal(f"{task}[{i}] is_greedy", d["is_greedy"], greedy)
        pred = max(range(len(lls)), key=lambda k: (lls[k], -k))  # np.argmax: first of ties
        norm = [ll / len(ch) for ll, ch in zip(lls, row["choices"])]
        pred_norm = max(range(len(norm)), key=lambda k: (norm[k], -k))
        c.equal(f"{task}[{i}] pred", d["pred"], pred)
        c.equal(f"{task}[{i}] pred_norm", d["pred_norm"], pred_norm)
        c.equal(f"{task}[{i}] acc", float(d["pred"] == d["gold"]), float(s["acc"]))
        c.equal(f"{task}[{i}] acc_norm", float(d["pred_norm"] == d["gold"]), float(s["acc_norm"]))
    for m in ("acc", "acc_norm"):
        c.close(f"{task} {m}", ours["metrics"][m], float(theirs[f"{m},none"]), item=False)
    return [task, len(ed), f"{ours['metrics']['acc']:.4f}/{ours['metrics']['acc_norm']:.4f}",
            f"{theirs['acc,none']:.4f}/{theirs['acc_norm,none']:.4f}"]


def compare_gen(c, task, ours, details, theirs, samples):
    ed = details.get(ENGINE_TASKS[task][0]["name"], [])
    c.equal(f"{task} samples", len(ed), len(samples))
    key = "exact_match,strip" if task.endswith("_strip") else "exact_match,none"
    for i, d in enumerate(ed):
        s = samples[i]
        c.equal(f"{task}[{i}] generated", d["generated"], s["resps"][0][0])
        c.equal(f"{task}[{i}] exact_match", float(d["exact_match"]), float(s["exact_match"]))
    c.close(f"{task} exact_match", ours["metrics"]["exact_match"], float(theirs[key]), item=False)
    if not 0 < ours["metrics"]["exact_match"] < 1:  # the targets are made so that some match and some do not
        c.fail(f"exact_match {ours['metrics']['exact_match']}: expected some matches and some misses")
    return [task, len(ed), f"{ours['metrics']['exact_match']:.4f}", f"{theirs[key]:.4f}"]


def compare_ppl(c, task, ours, details, theirs, samples, texts, lm_tokens):
    ed = details.get(ENGINE_TASKS[task][0]["name"], [])
    c.equal(f"{task} samples", len(ed), len(samples))
    nll = words = nbytes = tokens = 0
    lm_ll = 0.0
    for i, (d, text) in enumerate(zip(ed, texts)):
        ll = float(samples[i]["resps"][0][0])
        c.close(f"{task}[{i}] NLL", d["nll_sum"], -ll)
        c.equal(f"{task}[{i}] tokens", d["tokens"], lm_tokens(text))
        nll += d["nll_sum"]
        lm_ll += ll
        tokens += d["tokens"]
        words += len(re.split(r"\s+", text))  # lm-eval's count_words / count_bytes
        nbytes += len(text.encode("utf-8"))
    c.close(f"{task} word_perplexity", math.exp(nll / words), float(theirs["word_perplexity,none"]), item=False)
    c.close(f"{task} byte_perplexity", math.exp(nll / nbytes), float(theirs["byte_perplexity,none"]), item=False)
    c.close(f"{task} bits_per_byte", nll / nbytes / math.log(2), float(theirs["bits_per_byte,none"]), item=False)
    c.close(f"{task} token perplexity", ours["metrics"]["perplexity"], math.exp(-lm_ll / tokens), item=False)
    c.equal(f"{task} tokens", ours["tokens"], tokens)
    return [task, len(ed), f"{ours['metrics']['perplexity']:.4f} (token) {math.exp(nll / words):.4f} (word)",
            f"{math.exp(-lm_ll / tokens):.4f} (token) {theirs['word_perplexity,none']:.4f} (word)"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", required=True)
    ap.add_argument("--work", required=True, help="work folder (emptied first)")
    ap.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "2")))
    args = ap.parse_args()
    started = time.time()
    work = g.fresh(os.path.abspath(args.work))
    os.environ["HF_HOME"] = os.path.join(work, "hf-home")  # datasets' cache of the JSON files, fresh
    import datasets
    from importlib.metadata import version
    print(f"lm-eval {version('lm_eval')}, datasets {datasets.__version__}, transformers {transformers.__version__}, "
          f"torch {torch.__version__}")

    args.model_dir = os.path.join(work, "model")
    tok = write_model(args.model_dir)
    mc, prompts, texts = items()
    for p in prompts:  # lm-eval cuts prompts to max_length - max_gen_toks; the engine refuses none of these
        n = len(tok.encode(p)) + MAX_GEN
        assert n <= MODEL["max_position_embeddings"], f"prompt {p!r}: {n} tokens with the generation"

    checks, table = [], []
    for setting, add_bos in (("no_bos", False), ("tok_bos", None)):
        folder = os.path.join(work, setting)
        # The engine's own greedy generations in this setting make the targets.
        probe = write_engine_tasks(os.path.join(folder, "probe"), {
            "gen.jsonl": [{"prompt": p, "target": "?"} for p in prompts]}, add_bos)
        _, probe_details = run_engine(args, probe, os.path.join(folder, "probe", "details.jsonl"))
        gen_targets, strip_targets = generation_targets([d["generated"] for d in probe_details["gen"]])
        gen = [{"prompt": p, "target": t} for p, t in zip(prompts, gen_targets)]
        gen_strip = [{"prompt": p, "target": t} for p, t in zip(prompts, strip_targets)]
        data = {"mc.jsonl": mc, "gen.jsonl": gen, "gen_strip.jsonl": gen_strip,
                "ppl.jsonl": [{"text": t} for t in texts]}
        lm_dir = os.path.join(folder, "lm_eval")  # lm-eval's data files: its tasks name them relative to here
        os.makedirs(lm_dir)
        for name, rows in data.items():
            write_jsonl(os.path.join(lm_dir, name), rows)
        tasks_path = write_engine_tasks(os.path.join(folder, "engine"), data, add_bos)
        t0 = time.time()
        ours, details = run_engine(args, tasks_path, os.path.join(folder, "engine", "details.jsonl"))
        t1 = time.time()
        os.chdir(lm_dir)
        theirs, samples = run_lm_eval(args.model_dir, add_bos, args.threads, os.path.join(folder, "lm_eval.log"))
        t2 = time.time()
        print(f"{setting}: engine {t1 - t0:.1f} s, lm-eval {t2 - t1:.1f} s")
        # the tokens lm-eval predicts in a text: the tokenizer's encoding (with its BOS in tok_bos)
        lm_tokens = (lambda t, special=add_bos is None: len(tok.encode(t, add_special_tokens=special)))
        for task in LM_TASKS:
            c, row = Check(f"{setting} {task}"), None
            eng = ours.get(ENGINE_TASKS[task][0]["name"])
            if eng is None or task not in theirs or task not in samples:
                c.fail("missing from the engine's or lm-eval's results")
            elif task.startswith("slipway_mc"):
                row = compare_mc(c, task, eng, details, theirs[task], samples[task], mc)
            elif task.startswith("slipway_gen"):
                row = compare_gen(c, task, eng, details, theirs[task], samples[task])
            else:
                row = compare_ppl(c, task, eng, details, theirs[task], samples[task], texts, lm_tokens)
            if row:
                table.append([setting] + row + [c.compared, c.max_ll, c.max_rel, "ok" if not c.failures else "FAIL"])
            checks.append(c)

    g.table(["setting", "task", "items", "engine", "lm-eval", "compared", "max |diff| per item", "max rel", ""],
            table)
    print(f"tolerance: log-likelihoods, NLLs and perplexities |engine - lm-eval| <= {LL_ATOL:g} + {LL_RTOL:g} * "
          f"|lm-eval|; predictions, is_greedy, generated texts, counts and accuracies equal")
    failures = [f for c in checks for f in c.failures]
    for c in checks:
        if c.compared == 0:
            failures.append(f"{c.name}: compared nothing")
    print(f"{time.time() - started:.0f} s")
    return g.verdict(failures, compared=sum(c.compared for c in checks))


if __name__ == "__main__":
    sys.exit(main())
