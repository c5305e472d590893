#!/usr/bin/env python3
"""The docs say only what is there: every `slipway ...` / `slipway-engine ...` command they show (in code
blocks and inline code) names real subcommands and flags, as the binaries' own --help lists them, and every
relative link points at a file of the repository.

Usage: check_docs.py --slipway BIN --engine BIN --root SOURCE_DIR [FILE.md ...]
Without files: README.md and docs/*.md under the root. Exit 0 when all hold, 1 naming file:line of each
problem, 2 on bad usage."""
import argparse
import functools
import pathlib
import re
import shlex
import subprocess
import sys

PROGRAMS = ("slipway-engine", "slipway")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
INLINE = re.compile(r"`([^`\n]+)`")


@functools.lru_cache(maxsize=None)
def help_of(binary, path):
    """(subcommands, options) that `binary path... --help` lists; options map to whether they take a value."""
    run = subprocess.run([binary, *path, "--help"], capture_output=True, text=True, timeout=60)
    subcommands, options, section = set(), {}, ""
    for line in (run.stdout + run.stderr).splitlines():
        if re.match(r"^[A-Z][A-Za-z ]*:\s*$", line):
            section = line.strip().rstrip(":").lower()
        elif section == "subcommands" and (m := re.match(r"^\s+([a-z][a-z0-9-]*)(\s|$)", line)):
            subcommands.add(m.group(1))
        elif section == "options" and (m := re.match(r"^\s+((?:-\w,)?(?:--?[\w-]+,?)+)( [A-Z][\w:]*)?", line)):
            for flag in m.group(1).split(","):
                if flag:
                    options[flag] = m.group(2) is not None
    return frozenset(subcommands), options


@functools.lru_cache(maxsize=None)
def script_flags(engine):
    """The training-script flags (`train --flag value`, after `--`) that `config schema` documents."""
    text = subprocess.run([engine, "config", "schema"], capture_output=True, text=True, timeout=60).stdout
    section = text[text.find("## Training-script flags"):]
    return frozenset(re.findall(r"--[A-Za-z0-9_]+", section))


def check_script_flags(words, engine, program, path):
    for word in words:
        if word.startswith("--") and word.split("=", 1)[0] not in script_flags(engine):
            return f"{program} {' '.join(path)} --: no training-script flag {word.split('=', 1)[0]}"
    return None


def check_command(words, binaries):
    """The first problem of one shown command line (the program, then its words), or None."""
    program = words[0].rsplit("/", 1)[-1]
    binary, engine = binaries[program], binaries["slipway-engine"]
    path, takes_value = [], False
    for i, word in enumerate(words[1:], 1):
        if word in ("|", ";", "&&", ">", "2>", "<") or word.startswith("#"):
            break
        if word == "--":
            rest = words[i + 1:]
            if program == "slipway-engine" and path == ["launch"]:
                return check_command(["slipway-engine", *rest], binaries)
            return check_script_flags(rest, engine, program, path)
        if takes_value:
            takes_value = False
            continue
        subcommands, options = help_of(binary, tuple(path))
        if word.startswith("-") and word != "-":
            flag = word.split("=", 1)[0]
            if flag in options:
                takes_value = options[flag] and "=" not in word
            elif not (program == "slipway-engine" and path == ["train"] and flag in script_flags(engine)):
                return f"{program} {' '.join(path)}: no option {flag}".replace("  ", " ")
            continue
        if word in subcommands:
            path.append(word)
        elif not path and subcommands and re.fullmatch(r"[a-z][a-z-]+", word):
            return f"{program}: no subcommand {word}"
    return None


def command_words(text):
    """The words of a shown command that starts with one of the programs (a path before it allowed)."""
    try:
        words = shlex.split(text, comments=False)
    except ValueError:
        words = text.split()
    # Optional parts are shown in brackets, alternatives with |: the words themselves are what is checked.
    words = [w.strip("[]") for w in words if w.strip("[]") and w != "..."]
    for i, word in enumerate(words):
        if word.rsplit("/", 1)[-1] in PROGRAMS and (i == 0 or words[i - 1] in ("srun", "sudo", "then", "do")):
            return words[i:]
    return None


def check_file(md, root, binaries):
    problems = []
    in_code = False
    for number, line in enumerate(md.read_text(encoding="utf-8").splitlines(), 1):
        where = f"{md.relative_to(root)}:{number}"
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        candidates = []
        if in_code:
            for part in re.split(r";|&&", line.split("  #")[0]):
                candidates.append(part.strip())
        else:
            candidates = INLINE.findall(line)
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                file = (md.parent / target.split("#", 1)[0]).resolve()
                if not file.exists():
                    problems.append(f"{where}: the link {target} points at nothing")
        for text in candidates:
            words = command_words(text)
            if words is None:
                continue
            problem = check_command(words, binaries)
            if problem:
                problems.append(f"{where}: {problem} (in `{text}`)")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slipway", required=True)
    parser.add_argument("--engine", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    root = pathlib.Path(args.root).resolve()
    files = [pathlib.Path(f).resolve() for f in args.files] or [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    binaries = {"slipway": args.slipway, "slipway-engine": args.engine}
    problems = []
    for md in files:
        problems += check_file(md, root if md.is_relative_to(root) else md.parent, binaries)
    for problem in problems:
        print(problem)
    print(f"check_docs: {len(files)} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
