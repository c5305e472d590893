#!/usr/bin/env python3
"""The layering rules of the source tree, checked over its #include lines (ctest `layering`):

1. engine/ never includes remote/ or app/;
2. remote/ never includes app/;
3. app/'s folders form no circle: an include from one folder into another is an arrow, and no arrow may
   close a loop;
4. app/core (a run's data and its log following) includes no other part of app/: it is under all of them;
5. app/service (the run service: submit, watch, follow, cancel, fetch) includes no Qt header and, of app/,
   only app/core: the CLI and the app's cluster worker call it, never the other way round. (Its CMake target
   also builds without Qt; this names the line.)
6. app/history (the run history: SQLite through its C API, the service's RunStore) includes no Qt header and,
   of app/, only app/core and app/service: the app and the CLI share it.

An include is resolved the way the build's include folders resolve it: a file in engine/ sees engine/ and the
top folder; remote/ sees the top folder and engine/; app/ sees app/, engine/ and the top folder. Includes
that resolve to no file of the tree (Qt, LibTorch, the standard library) are not arrows.

Usage: check_layering.py [ROOT]   (default: the checkout this script is in). Exit 0 when the rules hold,
1 with one line per broken rule (file:line: what and why).
"""
import os
import re
import sys
from collections import defaultdict

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
QT_HEADER = re.compile(r"^Q[A-Za-z]+$|^Qt[A-Za-z]+/")
# The app folders that build without Qt, and what each is.
QT_FREE = {"service": "the run service", "history": "the run history"}
SOURCES = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh")
SEARCH = {"engine": ["engine", "."], "remote": [".", "engine"], "app": ["app", "engine", "."]}


def part_of(root, path):
    """(top folder, app folder or None) of a file of the tree."""
    rel = os.path.relpath(path, root).split(os.sep)
    top = rel[0]
    folder = rel[1] if top == "app" and len(rel) > 2 else ("." if top == "app" else None)
    return top, folder


def resolve(root, top, include):
    for base in SEARCH[top]:
        candidate = os.path.normpath(os.path.join(root, base, include))
        if os.path.isfile(candidate):
            return candidate
    return None


def check(root):
    problems = []
    arrows = defaultdict(list)  # (from folder, to folder) -> ["file:line", ...] within app/
    for top in SEARCH:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as source:
                    for number, line in enumerate(source, 1):
                        match = INCLUDE.match(line)
                        if not match:
                            continue
                        target = resolve(root, top, match.group(1))
                        if target is None:
                            folder = part_of(root, path)[1] if top == "app" else None
                            if folder in QT_FREE and QT_HEADER.match(match.group(1)):
                                problems.append(f"{rel}:{number}: app/{folder} includes Qt "
                                                f"(\"{match.group(1)}\"): {QT_FREE[folder]} is Qt-free")
                            continue
                        target_top, target_folder = part_of(root, target)
                        where = f"{rel}:{number}"
                        if top == "engine" and target_top in ("remote", "app"):
                            problems.append(f"{where}: engine/ includes {target_top}/ "
                                            f"(\"{match.group(1)}\"): the engine never depends on {target_top}/")
                        elif top == "remote" and target_top == "app":
                            problems.append(f"{where}: remote/ includes app/ (\"{match.group(1)}\"): "
                                            "remote/ never depends on the app")
                        elif top == "app" and target_top == "app":
                            here = part_of(root, path)[1]
                            if here == "service" and target_folder not in ("service", "core"):
                                problems.append(f"{where}: app/service includes app/{target_folder} "
                                                f"(\"{match.group(1)}\"): the run service stands on app/core "
                                                "only")
                            elif here == "history" and target_folder not in ("history", "service", "core"):
                                problems.append(f"{where}: app/history includes app/{target_folder} "
                                                f"(\"{match.group(1)}\"): the run history stands on the "
                                                "service and app/core only")
                            elif here == "core" and target_folder != "core":
                                problems.append(f"{where}: app/core includes app/{target_folder} "
                                                f"(\"{match.group(1)}\"): core is under every part of the app")
                            elif here != target_folder and "." not in (here, target_folder):
                                arrows[(here, target_folder)].append(where)
    # Arrows that close a circle: b reaches a back.
    graph = defaultdict(set)
    for a, b in arrows:
        graph[a].add(b)

    def reaches(start, goal):
        seen, stack = set(), [start]
        while stack:
            node = stack.pop()
            if node == goal:
                return True
            if node in seen:
                continue
            seen.add(node)
            stack.extend(graph[node])
        return False

    circles = set()
    for (a, b), places in sorted(arrows.items()):
        if reaches(b, a):
            circles.add(f"{a} -> {b}")
            problems.append(f"{places[0]}: app/{a} includes app/{b}, and app/{b} reaches app/{a}: a "
                            "circle of folders (" + ", ".join(places[:3]) + ")")
    return problems, len(arrows), circles


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    problems, arrow_count, circles = check(root)
    for problem in problems:
        print(problem)
    print(f"layering: {arrow_count} arrows between app/ folders, {len(circles)} in circles; "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
