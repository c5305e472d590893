#!/usr/bin/env python3
"""The largest source files and functions of the tree, as two tables: where a file or a function has grown
past what one reading holds. Anyone can run it; it reads only the sources.

Usage: tools/size_report.py [--top N] [--with-tests] [ROOT]
Files: .cpp/.h/.cu/.py/.sh under engine/, remote/, app/ (and tests/ with --with-tests), by lines. Functions:
C++ function bodies (a brace block at namespace or class scope whose header has a parameter list), by lines
from the header's line to the closing brace; lambdas count toward the function that holds them."""
import argparse
import pathlib
import re

SOURCES = ("engine", "remote", "app")
CONTROL = re.compile(r"\b(if|for|while|switch|catch|do|else)\b\s*(\(|$)")
SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b")


def strip_code(text):
    """The text with comments, string and character literals blanked (line breaks kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i) and (m := re.match(r'R"([^(\s]*)\(', text[i:])):
            end = text.find(")" + m.group(1) + '"', i)
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """(name, first line, lines) of each function body in a C++ file."""
    code = strip_code(path.read_text(encoding="utf-8", errors="replace"))
    # Preprocessor lines (with their continuations) are not code: blank them, keeping the line count.
    kept, directive = [], False
    for text in code.split("\n"):
        directive = directive or text.lstrip().startswith("#")
        kept.append("" if directive else text)
        directive = directive and text.endswith("\\")
    code = "\n".join(kept)
    found, stack, header, header_line, line = [], [], "", 1, 1
    for c in code:
        if c == "{":
            kind = "other"
            if all(k == "scope" for k, _, _ in stack):
                if SCOPE.search(header) and "(" not in header.split("{")[0]:
                    kind = "scope"
                elif ")" in header and not CONTROL.search(header.strip()) and "=" not in header.split("(")[0]:
                    kind = "function"
            name = ""
            if kind == "function":
                m = re.search(r"([~\w:<>]+)\s*\(", header)
                name = m.group(1) if m else "?"
            stack.append((kind, header_line, name))
            header = ""
        elif c == "}":
            if stack:
                kind, start, name = stack.pop()
                if kind == "function":
                    found.append((name, start, line - start + 1))
            header = ""
        elif c == ";":
            header = ""
        else:
            if not header.strip() and not c.isspace():
                header_line = line
            header += c
        if c == "\n":
            line += 1
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=pathlib.Path(__file__).resolve().parent.parent)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--with-tests", action="store_true")
    args = parser.parse_args()
    root = pathlib.Path(args.root)
    folders = SOURCES + (("tests",) if args.with_tests else ())
    files = [p for folder in folders for p in (root / folder).rglob("*")
             if p.suffix in (".cpp", ".h", ".cu", ".py", ".sh") and "third_party" not in p.parts and p.is_file()]
    sizes = sorted(((sum(1 for _ in p.open(encoding="utf-8", errors="replace")), p) for p in files), reverse=True)
    print(f"| lines | file (largest {args.top} of {len(files)}) |\n|---:|---|")
    for lines, p in sizes[: args.top]:
        print(f"| {lines} | {p.relative_to(root)} |")
    bodies = sorted(((n, name, p, start) for p in files if p.suffix in (".cpp", ".h", ".cu")
                     for name, start, n in functions(p)), reverse=True)
    print(f"\n| lines | function (largest {args.top}) |\n|---:|---|")
    for n, name, p, start in bodies[: args.top]:
        print(f"| {n} | `{name}` {p.relative_to(root)}:{start} |")
    over = sum(1 for n, *_ in bodies if n > 120)
    print(f"\n{over} function(s) over 120 lines; README.md {sum(1 for _ in (root / 'README.md').open())} lines")


if __name__ == "__main__":
    main()
