#!/usr/bin/env python3
"""ctest `layering_catches_planted_includes`: check_layering.py on a copy of the tree with planted includes
(engine/ including remote/, remote/ including app/, a new circle of app/ folders, app/core including a page's
folder, the run service including the history and Qt, the history including Qt and a page's folder) must fail
and name each planted line; the unplanted copy must pass."""
import os
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
source = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", ".."))
checker = os.path.join(here, "check_layering.py")


def run(root):
    done = subprocess.run([sys.executable, checker, root], capture_output=True, text=True)
    return done.returncode, done.stdout


with tempfile.TemporaryDirectory() as work:
    for top in ("engine", "remote", "app"):
        shutil.copytree(os.path.join(source, top), os.path.join(work, top),
                        ignore=shutil.ignore_patterns("*.png", "*.qm", "*.ts", "*.json", "*.jsonl"))
    code, out = run(work)
    assert code == 0, "the copied tree should pass:\n" + out
    plants = {
        "engine/train/planted.cpp": '#include "remote/slurm/sbatch_script.h"\n',
        "remote/slurm/planted.cpp": '#include "app/core/run_metrics.h"\n',
        # images -> adapt is new, and adapt -> images closes it
        "app/images/planted.h": '#include "adapt/language_pipeline.h"\n',
        "app/adapt/planted.h": '#include "images/image_tasks.h"\n',
        # up from the bottom, with no circle: core -> editor (editor does not reach core)
        "app/core/planted.h": '#include "editor/presets.h"\n',
        # the run service standing on the history, and on Qt
        "app/service/planted.h": '#include "history/run_history.h"\n',
        "app/service/planted_qt.cpp": '#include <QString>\n',
        # the run history on Qt, and on a page
        "app/history/planted_qt.cpp": '#include <QSqlQuery>\n',
        "app/history/planted.h": '#include "runs/run_tracker.h"\n',
    }
    for path, text in plants.items():
        with open(os.path.join(work, path), "w") as f:
            f.write("// planted by layering_test.py\n" + text)
    code, out = run(work)
    print(out)
    assert code == 1, "the planted tree passed"
    for expected in ("engine/train/planted.cpp:2: engine/ includes remote/",
                     "remote/slurm/planted.cpp:2: remote/ includes app/",
                     "app/adapt/planted.h:2: app/adapt includes app/images, and app/images reaches app/adapt",
                     "app/images/planted.h:2: app/images includes app/adapt, and app/adapt reaches app/images",
                     "app/core/planted.h:2: app/core includes app/editor",
                     "app/service/planted.h:2: app/service includes app/history",
                     "app/service/planted_qt.cpp:2: app/service includes Qt",
                     "app/history/planted_qt.cpp:2: app/history includes Qt",
                     "app/history/planted.h:2: app/history includes app/runs"):
        assert expected in out, "not reported: " + expected
print("layering_test: the planted includes were caught")
