#!/usr/bin/env python3
"""Compiles translation units syntax-only (g++ -fsyntax-only: parsed and every template instantiated, no code
generated) with the flags a configured build gave them in its compile_commands.json: the cheap way to check
that the code which differs between LibTorch versions compiles against another one without building the rest.

  syntax_check.py BUILD --torch-branches [FLAG...]   every TU with a TORCH_VERSION_ branch in it or in a header
                                                     of this project that it includes
  syntax_check.py BUILD --file SUFFIX [FLAG...]      the TU whose path ends in SUFFIX
FLAGs are appended to each command (e.g. -DUSE_C10D_NCCL). JOBS (environment; default 2) TUs compile at once.
Exit 1 when any TU fails, naming it."""
import concurrent.futures
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import time

BRANCH = re.compile(r"\bTORCH_VERSION_(MAJOR|MINOR)\b")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def has_torch_branch(path, include_dirs, cache, seen):
    """Whether `path`, or a header of this project it includes (followed transitively, resolved against its own
    folder and `include_dirs`), has a version branch."""
    if path in cache:
        return cache[path]
    if path in seen or not path.is_file():
        return False
    seen.add(path)
    text = path.read_text(errors="replace")
    found = bool(BRANCH.search(text)) or any(
        has_torch_branch((base / name).resolve(), include_dirs, cache, seen)
        for name in INCLUDE.findall(text) for base in (path.parent, *include_dirs))
    cache[path] = found
    return found


def with_torch_branch(entries):
    """The entries whose source, or a project header it includes, has a version branch."""
    cache = {}
    picked = []
    for entry in entries:
        include_dirs = [pathlib.Path(a[2:]) for a in shlex.split(entry["command"]) if a.startswith("-I") and len(a) > 2]
        if has_torch_branch(pathlib.Path(entry["directory"], entry["file"]).resolve(), include_dirs, cache, set()):
            picked.append(entry)
    return picked


def syntax_only(entry, extra):
    args = [a for a in shlex.split(entry["command"]) if pathlib.Path(a).name != "ccache"]
    if "-o" in args:
        i = args.index("-o")
        del args[i:i + 2]
    return args + ["-fsyntax-only", *extra]


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in ("--torch-branches", "--file"):
        sys.exit(__doc__)
    build = pathlib.Path(sys.argv[1])
    entries = json.loads((build / "compile_commands.json").read_text())
    if sys.argv[2] == "--file":
        suffix, extra = sys.argv[3], sys.argv[4:]
        entries = [e for e in entries if e["file"].endswith(suffix)]
        if not entries:
            sys.exit(f"syntax_check.py: no translation unit ending in {suffix} in {build}/compile_commands.json")
    else:
        extra = sys.argv[3:]
        entries = with_torch_branch(entries)
        if not entries:
            sys.exit(f"syntax_check.py: no translation unit with a TORCH_VERSION_ branch in {build}")
    def check(entry):
        started = time.monotonic()
        code = subprocess.call(syntax_only(entry, extra), cwd=entry["directory"])
        print(f"syntax_check.py: {entry['file']} {'compiles' if code == 0 else 'FAILS'} "
              f"({time.monotonic() - started:.0f} s)", flush=True)
        return code

    with concurrent.futures.ThreadPoolExecutor(max_workers=int(os.environ.get("JOBS", "2"))) as pool:
        codes = list(pool.map(check, entries))
    failed = [e["file"] for e, code in zip(entries, codes) if code]
    if failed:
        sys.exit("syntax_check.py: these do not compile: " + ", ".join(failed))


if __name__ == "__main__":
    main()
