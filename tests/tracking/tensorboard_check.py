#!/usr/bin/env python3
"""The engine's TensorBoard event files, read by TensorBoard's own reader (EventAccumulator, the HParams
plugin's protos): a short demo run writes them as it trains, and every number in its mllog.txt must be there.

  - every train_loss / lr / grad_norm / tokens_per_second / eval_loss / eval_accuracy / eval_task point of the
    MLLOG is a scalar (train/loss, train/learning_rate, ..., eval/<task>/<metric>) with the same step and the
    value as float32;
  - the HParams plugin's experiment, session start (the run config's values) and session end (success) parse;
  - the run config is a text summary that parses back into the config the engine printed;
  - a copy of the file cut inside a record reads as every record before the cut, and nothing else;
  - `slipway logs tensorboard` writes the same scalars from the run's mllog.txt afterwards, and a real MLPerf
    submission's log (tests/data/mlperf-logs) as its eval_accuracy points;
  - the same run again in the same output_dir (overwrite_output_dir) leaves one event file, its own;
  - a second run whose disk fills while it writes events (SLIPWAY_FS_FAULT) ends as well as the first, with one
    warning naming TensorBoard, and its mllog.txt complete.

Usage: tensorboard_check.py ENGINE SLIPWAY|- SOURCE_DIR WORK_DIR   (python: tests/reference's venv, via build/reference)
"""
import json
import os
import shutil
import struct
import subprocess
import sys

import numpy as np
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.plugins.hparams import plugin_data_pb2

from tracking_common import check, demo_config, export_logs, failures, full_disk_run, mllog_points

def load(folder):
    accumulator = event_accumulator.EventAccumulator(folder, size_guidance={event_accumulator.SCALARS: 0,
                                                                            event_accumulator.TENSORS: 0})
    accumulator.Reload()
    return accumulator


def scalar_points(accumulator):
    return {(tag, e.step): e.value for tag in accumulator.Tags()["scalars"] for e in accumulator.Scalars(tag)}


def check_scalars(accumulator, expected):
    got = scalar_points(accumulator)
    missing = sorted(k for k in expected if k not in got)
    check(not missing, "every MLLOG number is a scalar (%d points; missing: %s)" % (len(expected), missing[:5]))
    wrong = [(k, expected[k], got[k]) for k in expected if k in got and np.float32(expected[k]) != got[k]]
    check(not wrong, "their values equal the MLLOG's as float32 (first wrong: %s)" % (wrong[:1],))
    extra = sorted(k for k in got if k not in expected)
    check(not extra, "no scalar that the MLLOG does not have (%s)" % extra[:5])
    for tag in ("train/loss", "train/learning_rate", "train/grad_norm", "train/epoch", "eval/loss",
                "eval/accuracy"):
        check(any(t == tag for t, _ in got), "tag %s is there" % tag)


def check_hparams(accumulator, config):
    content = accumulator.PluginTagToContent("hparams")
    check(set(content) == {"_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info"},
          "the HParams plugin's three summaries (%s)" % sorted(content))
    experiment = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/experiment"]).experiment
    names = {info.name for info in experiment.hparam_infos}
    metrics = [m.name.tag for m in experiment.metric_infos]
    check("training.learning_rate" in names and "model.path" in names,
          "the experiment lists the config's fields (%d)" % len(names))
    check(metrics == ["train/loss", "eval/loss", "eval/accuracy"], "its metrics: %s" % metrics)
    start = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_start_info"])
    hparams = start.session_start_info.hparams
    check(hparams["training.learning_rate"].number_value == config["training"]["learning_rate"] and
          hparams["training.max_steps"].number_value == 12 and
          hparams["adapter.method"].string_value == "full" and
          hparams["training.overwrite_output_dir"].bool_value is True,
          "the session's values are the config's")
    end = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_end_info"])
    check(end.session_end_info.status == 1, "the session ended STATUS_SUCCESS")


def check_config_text(accumulator, engine, config_path):
    tensors = accumulator.Tensors("run_config/text_summary")
    text = tensors[0].tensor_proto.string_val[0].decode() if tensors else ""
    printed = json.loads(subprocess.run([engine, "config", "print", config_path], check=True,
                                        capture_output=True, text=True).stdout)
    check(bool(text) and json.loads(text) == printed, "the run_config text is the config the engine prints")


def record_ends(data):
    ends, at = [], 0
    while at + 12 <= len(data):
        (length,) = struct.unpack("<Q", data[at:at + 8])
        at += 12 + length + 4
        ends.append(at)
    return ends


def check_torn_copy(event_file, work_dir, full_points):
    data = open(event_file, "rb").read()
    ends = record_ends(data)
    check(ends[-1] == len(data), "the file is whole records (%d)" % len(ends))
    cut_record = len(ends) // 2  # cut inside this one: it and everything after it are lost
    cut_at = ends[cut_record - 1] + (ends[cut_record] - ends[cut_record - 1]) // 2
    torn = os.path.join(work_dir, "torn")
    os.makedirs(torn, exist_ok=True)
    with open(os.path.join(torn, os.path.basename(event_file)), "wb") as f:
        f.write(data[:cut_at])
    whole = load(os.path.dirname(event_file))
    expected = sum(1 for tag in whole.Tags()["scalars"] for e in whole.Scalars(tag))
    got = load(torn)
    read = sum(1 for tag in got.Tags()["scalars"] for e in got.Scalars(tag))
    kept = {k: v for k, v in scalar_points(got).items()}
    check(0 < read < expected and all(full_points.get(k) == v for k, v in kept.items()),
          "a copy cut inside record %d of %d reads %d of %d scalars, all as in the whole file"
          % (cut_record + 1, len(ends), read, expected))


def check_rerun(engine, source_dir, work_dir, config_path, folder):
    run = subprocess.run([engine, "train", "--threads", "1", config_path], cwd=source_dir, capture_output=True,
                         text=True)
    files = sorted(f for f in os.listdir(folder) if f.startswith("events.out.tfevents."))
    expected = mllog_points(os.path.join(work_dir, "run", "mllog.txt"))
    check(run.returncode == 0 and len(files) == 1 and scalar_points(load(folder)) ==
          {k: np.float32(v) for k, v in expected.items()},
          "the run again in its output_dir leaves one event file, with its own %d points (%s)" %
          (len(expected), files))


def check_full_disk(engine, source_dir, work_dir, config):
    # The config text and the hparams take ~9.4 kB of the demo's ~12.7 kB: the disk fills among the points.
    run, mllog = full_disk_run(engine, source_dir, work_dir, config, "enospc_after_bytes:11000:tfevents")
    warnings = [l for l in run.stderr.splitlines() if l.startswith("warning: tensorboard:")]
    check(run.returncode == 0 and '"key": "run_stop"' in mllog and '"status": "success"' in mllog,
          "a run whose disk fills under its event file trains to its end (exit %d)" % run.returncode)
    check(len(warnings) == 1 and "No space left on device" in warnings[0] and " at step " in warnings[0],
          "with one warning: %s" % (warnings[:2],))


def check_export(slipway, source_dir, work_dir, live_points):
    _, mlperf, out = export_logs(slipway, "tensorboard", source_dir, work_dir)
    check(scalar_points(load(os.path.join(out, "run"))) == live_points,
          "its events from mllog.txt equal the live run's scalars")
    expected = {k: v for k, v in mllog_points(mlperf).items() if k[0] == "eval/accuracy"}
    got = {k: v for k, v in scalar_points(load(os.path.join(out, "dell-xe9680-result_0"))).items()
           if k[0] == "eval/accuracy"}
    check(len(expected) > 3 and got == {k: np.float32(v) for k, v in expected.items()},
          "an MLPerf log's %d eval_accuracy points, at their samples_count" % len(expected))


def main():
    engine, slipway, source_dir, work_dir = sys.argv[1:5]
    shutil.rmtree(work_dir, ignore_errors=True)
    os.makedirs(work_dir)
    config_path, config = demo_config(source_dir, work_dir, ["tensorboard"])
    run = subprocess.run([engine, "train", "--threads", "1", config_path], cwd=source_dir,
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stderr[-3000:])
        sys.exit("FAIL: the demo run failed")
    folder = os.path.join(work_dir, "run", "runs", "tracking check")
    check("metrics also go to tensorboard: " + folder in run.stderr, "the run says where its events go")
    files = sorted(f for f in os.listdir(folder) if f.startswith("events.out.tfevents."))
    check(len(files) == 1, "one event file in %s (%s)" % (folder, files))
    accumulator = load(folder)
    expected = mllog_points(os.path.join(work_dir, "run", "mllog.txt"))
    check_scalars(accumulator, expected)
    check_hparams(accumulator, config)
    check_config_text(accumulator, engine, config_path)
    check_torn_copy(os.path.join(folder, files[0]), work_dir, scalar_points(accumulator))
    if slipway != "-":  # "-": built without the app
        check_export(slipway, source_dir, work_dir, scalar_points(accumulator))
    check_rerun(engine, source_dir, work_dir, config_path, folder)
    check_full_disk(engine, source_dir, work_dir, config)
    if failures:
        sys.exit("FAIL: %d check(s)" % len(failures))
    print("PASS: TensorBoard's reader reads the run's %d points, its hparams and config" % len(expected))


if __name__ == "__main__":
    main()
