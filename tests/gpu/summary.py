"""The verdict of a tests/gpu/run.sh run, in one place and testable without a GPU (python3 stdlib only).

Reads the work folder that run.sh filled:
  checks.tsv        one line per step, in order: name, exit code ("-" when skipped), seconds, expected seconds,
                    skip reason; the step "build" is the configure and build
  NAME.log          the step's output
  NAME/result.json  a Python check's verdict (gpu_common.verdict: "pass", "failures", "figures" with "compared")
  NAME/gtest.json   a GoogleTest binary's --gtest_output=json report
  env.json          torch, transformers, peft and Python versions, the GPU's name (null without one)
and writes into the results folder summary.json, summary.md (each under 1 MB) and logs/NAME.log (the tail of the
log of each step that failed, at most 5: with those three files, 8 files, what a device run brings back).

A check passes only when it exited 0 AND its own record shows that it compared something: result.json with
"pass": true and figures.compared >= 1, or a GoogleTest report (gtest.json, else the log's "[  PASSED  ] N
tests" line) with N >= 1 tests passed and none failed. An exit code alone proves nothing: GoogleTest 1.12,
given a flag it does not know, prints its help and exits 0.

Exit: 0 every check that ran passed; 1 the build or a check failed, or no check ran; 77 no GPU, and the
(CPU-side) checks that ran passed. tests/compat/torch2.sh's gpu step relies on 0 and 77.

  summary.py WORK RESULTS [--budget SECONDS] [--elapsed SECONDS] [--device cpu|cuda]
"""
import argparse
import json
import os
import re
import sys

LIMIT = 1_000_000  # bytes, summary.json and summary.md each stay below
LOG_TAIL = 256 * 1024  # bytes of a failed step's log kept in logs/
MAX_LOGS = 5  # logs/ files: with summary.json, summary.md and run.log, the 8 files a device run brings back
TIMED_OUT = (124, 137)  # timeout(1)'s codes: run.sh stops a step when the budget runs out


def read_ledger(work):
    """checks.tsv as a list of steps, in order; a step named twice keeps its last line."""
    steps = {}
    try:
        with open(os.path.join(work, "checks.tsv")) as f:
            for line in f:
                fields = line.rstrip("\n").split("\t")
                if not fields[0]:
                    continue
                fields += [""] * (5 - len(fields))
                name, code, seconds, expected, reason = fields[:5]
                steps.pop(name, None)
                steps[name] = {"name": name, "exit": None if code == "-" else _int(code),
                               "seconds": _int(seconds), "expected_s": _int(expected), "reason": reason}
    except OSError:
        pass
    return list(steps.values())


def _int(text):
    try:
        return int(text)
    except ValueError:
        return None


def read_json(path):
    """(object, None), (None, why), or (None, None) when the file is absent."""
    try:
        with open(path) as f:
            return json.load(f), None
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError) as e:
        return None, f"{os.path.basename(path)} unreadable ({e})"


def tail(path, size=LOG_TAIL):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - size))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def gtest_counts(path):
    """Tests of a GoogleTest JSON report: {passed, skipped, failed, not_run}, or None without a readable report.
    Filtered-out tests are not in the report; disabled ones are NOTRUN."""
    report, _ = read_json(path)
    if not isinstance(report, dict):
        return None
    counts = {"passed": 0, "skipped": 0, "failed": 0, "not_run": 0}
    for suite in report.get("testsuites", []):
        for test in suite.get("testsuite", []):
            if test.get("status") != "RUN" or test.get("result") == "SUPPRESSED":
                counts["not_run"] += 1
            elif test.get("failures"):
                counts["failed"] += 1
            elif test.get("result") == "SKIPPED":
                counts["skipped"] += 1
            else:
                counts["passed"] += 1
    return counts


def gtest_log_counts(text):
    """{passed, failed} from GoogleTest's closing lines, or None where the log has none (no test program ran)."""
    passed = re.findall(r"^\[  PASSED  \] (\d+) tests?\.", text, re.M)
    if not passed:
        return None
    failed = re.findall(r"^\[  FAILED  \] (\d+) tests?, listed below", text, re.M)
    return {"passed": int(passed[-1]), "failed": int(failed[-1]) if failed else 0}


def judge(work, step):
    """One check's verdict: PASS, FAIL or SKIP, with the reasons, its figures and failures."""
    out = dict(step, verdict="SKIP", compared=None, figures={}, failures=[])
    if step["exit"] is None:
        out["reason"] = step["reason"] or "skipped"
        return out
    name, reasons = step["name"], []
    log = tail(os.path.join(work, name + ".log"))
    result, unreadable = read_json(os.path.join(work, name, "result.json"))
    counts = gtest_counts(os.path.join(work, name, "gtest.json"))
    if unreadable:
        reasons.append(unreadable)
    elif isinstance(result, dict):
        figures = result.get("figures") if isinstance(result.get("figures"), dict) else {}
        out["figures"], out["failures"] = figures, list(result.get("failures") or [])
        out["compared"] = figures.get("compared")
        if result.get("pass") is not True:
            reasons.append("its result.json says FAIL")
        if not isinstance(out["compared"], int) or out["compared"] < 1:
            reasons.append(f"compared nothing (figures.compared = {out['compared']!r})")
    elif counts is not None:
        out["figures"], out["compared"] = {"gtest": counts}, counts["passed"]
        if counts["failed"]:
            reasons.append(f"{counts['failed']} test(s) failed")
        if counts["passed"] < 1:
            reasons.append(f"ran no test ({counts['skipped']} skipped, {counts['not_run']} not run)")
    else:
        from_log = gtest_log_counts(log)
        if from_log is None:
            reasons.append("ran no test or comparison: no result.json and no GoogleTest report (gtest.json, "
                           "or a '[  PASSED  ] N tests' line in its log)")
        else:
            out["figures"], out["compared"] = {"gtest_log": from_log}, from_log["passed"]
            if from_log["failed"]:
                reasons.append(f"{from_log['failed']} test(s) failed")
            if from_log["passed"] < 1:
                reasons.append("ran no test ('[  PASSED  ] 0 tests')")
    if step["exit"] in TIMED_OUT:
        reasons.insert(0, f"stopped when the budget ran out (exit {step['exit']})")
    elif step["exit"] != 0:
        reasons.insert(0, f"exit code {step['exit']}")
    out["verdict"] = "FAIL" if reasons else "PASS"
    out["reason"] = "; ".join(reasons)
    if reasons:
        out["log_tail"] = log[-3000:]
    return out


def cap(value, text=2000, items=40, depth=6):
    """A JSON value with long strings, lists, objects and deep nesting cut, so a runaway figure cannot bloat."""
    if isinstance(value, str):
        return value if len(value) <= text else value[:text] + f"... ({len(value) - text} characters cut)"
    if depth == 0 and isinstance(value, (list, dict)):
        return "(nested too deep)"
    if isinstance(value, list):
        kept = [cap(v, text, items, depth - 1) for v in value[:items]]
        return kept + ([f"... ({len(value) - items} more)"] if len(value) > items else [])
    if isinstance(value, dict):
        keys = list(value)[:items * 5]
        kept = {str(k): cap(value[k], text, items, depth - 1) for k in keys}
        if len(value) > len(keys):
            kept["..."] = f"{len(value) - len(keys)} more keys"
        return kept
    if isinstance(value, float) and value != value:
        return "nan"  # JSON has no NaN
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return str(value)
    return value


def to_json(summary):
    """summary.json's text, under LIMIT: drops log tails, then figures, then failures as needed."""
    text = json.dumps(summary, indent=1)
    for key in ("log_tail", "figures", "failures"):
        if len(text.encode()) < LIMIT:
            break
        for check in summary["checks"]:
            check.pop(key, None)
        summary["truncated"] = summary.get("truncated", []) + [key]
        text = json.dumps(summary, indent=1)
    if len(text.encode()) >= LIMIT:  # still: keep the verdicts only
        summary["checks"] = [{k: c.get(k) for k in ("name", "verdict", "reason", "seconds")} for c in
                             summary["checks"]][:1000]
        text = json.dumps(cap(summary, text=200, items=1000), indent=1)
    return text


def short_figures(figures, limit=300):
    """Scalar figures as `key=value`, nested keys joined by dots, for the table."""
    parts = []

    def walk(prefix, value):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        elif isinstance(value, float):
            parts.append(f"{prefix}={value:.3g}")
        elif isinstance(value, (int, str, bool)) or value is None:
            parts.append(f"{prefix}={value}")

    walk("", figures)
    text = ", ".join(p for p in parts if not p.startswith("compared="))
    return text if len(text) <= limit else text[:limit] + " ..."


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(summary):
    env, lines = summary["environment"], []
    lines.append(f"# GPU checks: {summary['verdict']}")
    lines.append("")
    lines.append(f"torch {env.get('torch')}, transformers {env.get('transformers')}, peft {env.get('peft')}, "
                 f"Python {env.get('python')}; GPU: {env.get('gpu') or 'none'}; device {summary['device']}")
    budget = summary["budget_s"]
    used = summary["elapsed_s"]
    lines.append(f"Time: {used} s used" + (f" of a {budget} s budget, {summary['budget_left_s']} s left"
                                            if budget else " (no budget)") + f". Exit {summary['exit']}: "
                 f"{summary['why']}.")
    lines.append("")
    lines.append("| check | verdict | seconds (expected) | compared | figures, or why |")
    lines.append("|---|---|---|---|---|")
    steps = ([summary["build"]] if summary["build"] else []) + summary["checks"]
    for c in steps:
        seconds = "-" if c.get("seconds") is None or c.get("exit") is None else c["seconds"]
        expected = c.get("expected_s")
        what = c.get("reason") if c["verdict"] != "PASS" else short_figures(c.get("figures") or {})
        compared = c.get("compared")
        lines.append(f"| {cell(c['name'])} | {c['verdict']} | {seconds}"
                     f"{f' ({expected})' if expected is not None else ''} | "
                     f"{'-' if compared is None else compared} | {cell(what or '')} |")
    for c in steps:
        if c["verdict"] != "FAIL":
            continue
        lines += ["", f"## {c['name']}: FAIL", "", cell(c.get("reason", ""))]
        lines += [f"- {cell(f)}" for f in (c.get("failures") or [])[:40]]
        if c.get("log_tail"):
            lines += ["", "Log, last lines (whole: logs/" + c["name"] + ".log):", "", "```",
                      c["log_tail"].replace("```", "'''"), "```"]
    text = "\n".join(lines) + "\n"
    if len(text.encode()) >= LIMIT:
        text = text.encode()[:LIMIT - 200].decode("utf-8", "ignore") + "\n\n(truncated: summary.json has the rest)\n"
    return text


def summarize(work, results, budget=0, elapsed=None, device=None):
    """Judges every step in WORK, writes the summary into RESULTS; returns (summary, exit code)."""
    env, _ = read_json(os.path.join(work, "env.json"))
    env = env if isinstance(env, dict) else {}
    steps = read_ledger(work)
    build = next((s for s in steps if s["name"] == "build"), None)
    if build is not None:
        build = dict(build, verdict="PASS" if build["exit"] == 0 else "FAIL", compared=None,
                     reason="" if build["exit"] == 0 else f"configure or build failed (exit {build['exit']})")
        if build["verdict"] == "FAIL":
            build["log_tail"] = tail(os.path.join(work, "build.log"))[-3000:]
    checks = [judge(work, s) for s in steps if s["name"] != "build"]
    verdicts = [c["verdict"] for c in checks]
    no_gpu = not env.get("gpu")
    if build is not None and build["verdict"] == "FAIL":
        code, why = 1, "the build failed"
    elif "FAIL" in verdicts:
        code, why = 1, "a check failed: " + ", ".join(c["name"] for c in checks if c["verdict"] == "FAIL")
    elif "PASS" not in verdicts:
        code, why = 1, "no check ran, so nothing was shown"
    elif no_gpu:
        code, why = 77, "no GPU: the CPU-side checks that ran passed"
    else:
        code, why = 0, "every check that ran passed"
    summary = {
        "schema": "slipway.gpu-summary/1",
        "verdict": {0: "PASS", 1: "FAIL", 77: "SKIP (no GPU)"}[code],
        "exit": code,
        "why": why,
        "device": device or env.get("device") or ("cpu" if no_gpu else "cuda"),
        "environment": cap(env),
        "budget_s": budget or None,
        "elapsed_s": elapsed,
        "budget_left_s": (budget - elapsed) if budget and elapsed is not None else None,
        "build": cap(build),
        "checks": [cap(c) for c in checks],
    }
    os.makedirs(results, exist_ok=True)
    logs = os.path.join(results, "logs")
    failed = ([("build", "build.log")] if build and build["verdict"] == "FAIL" else []) + \
        [(c["name"], c["name"] + ".log") for c in checks if c["verdict"] == "FAIL"]
    for name, source in failed[:MAX_LOGS]:
        if os.path.exists(os.path.join(work, source)):
            os.makedirs(logs, exist_ok=True)
            with open(os.path.join(logs, name + ".log"), "w") as f:
                f.write(tail(os.path.join(work, source)))
    md = markdown(summary)
    with open(os.path.join(results, "summary.md"), "w") as f:
        f.write(md)
    with open(os.path.join(results, "summary.json"), "w") as f:
        f.write(to_json(summary) + "\n")
    return summary, code


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("work", help="the folder run.sh filled (checks.tsv, NAME.log, NAME/result.json, env.json)")
    ap.add_argument("results", help="where summary.json, summary.md and logs/ go")
    ap.add_argument("--budget", type=int, default=0, help="run.sh's budget in seconds (0: none)")
    ap.add_argument("--elapsed", type=int, help="seconds since run.sh started")
    ap.add_argument("--device", choices=["cpu", "cuda"], help="where the checks ran")
    a = ap.parse_args()
    _, code = summarize(a.work, a.results, a.budget, a.elapsed, a.device)
    with open(os.path.join(a.results, "summary.md")) as f:
        sys.stdout.write(f.read())
    return code


if __name__ == "__main__":
    sys.exit(main())
