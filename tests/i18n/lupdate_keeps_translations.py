#!/usr/bin/env python3
"""Refreshing the .ts files must not lose a translation (ctest `lupdate_keeps_translations`).

`cmake --build build --target slipway_lupdate` rewrites resources/translations/slipway_ru.ts from the sources
with -no-obsolete: a text lupdate cannot see (a tr() behind a helper, QT_TRANSLATE_NOOP behind a macro) is
dropped as obsolete, and the app shows it in English from then on. This runs the same lupdate project on a
copy of the .ts and names every translated text the copy lost, with its context.

Usage: lupdate_keeps_translations.py LUPDATE PROJECT_JSON TS_FILE
Exit 0 when every translated text survives; 1 with one line per lost text; 2 when lupdate cannot run.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def translated(ts_path):
    """(context, source, comment) of every live message with a finished, non-empty translation."""
    out = set()
    for context in ET.parse(ts_path).getroot().iter("context"):
        name = context.findtext("name", "")
        for message in context.iter("message"):
            translation = message.find("translation")
            if translation is None or translation.get("type") in ("unfinished", "obsolete", "vanished"):
                continue
            forms = [f.text or "" for f in translation.iter("numerusform")] or [translation.text or ""]
            if not any(form.strip() for form in forms):
                continue
            out.add((name, message.findtext("source", ""), message.findtext("comment", "")))
    return out


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    lupdate, project, ts_file = argv[1:]
    for path in (project, ts_file):
        if not os.path.isfile(path):
            print(f"{path}: no such file", file=sys.stderr)
            return 2
    before = translated(ts_file)
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, os.path.basename(ts_file))
        shutil.copyfile(ts_file, copy)
        run = subprocess.run([lupdate, "-project", project, "-ts", copy, "-locations", "relative", "-no-obsolete"],
                             capture_output=True, text=True)
        if run.returncode != 0:
            print(f"{lupdate} failed ({run.returncode}):\n{run.stdout}{run.stderr}", file=sys.stderr)
            return 2
        after = translated(copy)
    lost = sorted(before - after)
    for context, source, _comment in lost:
        print(f"{ts_file}: lupdate drops the translation of \"{source}\" ({context}): the sources no longer "
              f"show lupdate this text (a tr() behind a helper, or QT_TRANSLATE_NOOP behind a macro?)")
    if not lost:
        print(f"{len(before)} translations in {os.path.basename(ts_file)}, none lost by lupdate")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
