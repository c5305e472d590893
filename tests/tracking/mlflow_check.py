#!/usr/bin/env python3
"""The engine's MLflow file store run, read by MLflow's own client (MlflowClient from mlflow-skinny, PyPI): a
short demo run with report_to mlflow writes it as it trains, and every number in its mllog.txt must be there.

  - the store has one run in the Default experiment, named as the config names the run, FINISHED, with its
    start and end times;
  - every train_loss / lr / grad_norm / eval_* point of the MLLOG is in the metric history of its HF tag
    (train/loss, train/learning_rate, ..., eval/<task>/<metric>) at the same step, with the same value (float64,
    exactly) and the event's time;
  - every field of the config the engine prints is a param ("section.key") with its value, and the config
    itself is the run's artifact run_config.json;
  - the same config again in the same output_dir is a second MLflow run beside the first, and a run resumed
    from its checkpoint (resume_from_checkpoint "latest") goes on in the MLflow run it started;
  - `slipway logs mlflow` writes the run's mllog.txt afterwards as a run with the same points, and a real
    MLPerf submission's log (tests/data/mlperf-logs) as a FINISHED run with its eval_accuracy points;
  - a run whose disk fills under its metric files (SLIPWAY_FS_FAULT) ends as well, with one warning naming
    the MLflow run, and its mllog.txt complete.

MLflow 3 keeps the file store in maintenance mode and asks for MLFLOW_ALLOW_FILE_STORE=true to open one; the
same files go into a database with `mlflow migrate-filestore`.

Usage: mlflow_check.py ENGINE SLIPWAY|- SOURCE_DIR WORK_DIR   (python: tests/reference's venv, via build/reference)
"""
import json
import os
import shutil
import subprocess
import sys
import warnings

os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
os.environ.setdefault("MLFLOW_TRACKING_URI", "file:///nonexistent")  # the client below names its store

from mlflow.tracking import MlflowClient  # noqa: E402

from tracking_common import (check, demo_config, export_logs, failures, full_disk_run, mllog_points,  # noqa: E402
                             mllog_times)


def client_for(output_dir):
    return MlflowClient(tracking_uri="file://" + os.path.join(output_dir, "mlruns"))


def check_run(client, name):
    runs = client.search_runs(["0"])
    check(len(runs) == 1, "one run in the Default experiment (%d)" % len(runs))
    run = runs[0]
    check(run.info.run_name == name and run.data.tags.get("mlflow.runName") == name,
          "it is named %r (%r)" % (name, run.info.run_name))
    check(run.info.status == "FINISHED" and run.info.end_time >= run.info.start_time > 0,
          "it is FINISHED, with start and end times (%s)" % run.info.status)
    return run


def check_metrics(client, run, mllog):
    expected = mllog_points(mllog)
    times = mllog_times(mllog)
    got = {}
    for tag in run.data.metrics:
        for m in client.get_metric_history(run.info.run_id, tag):
            got[(tag, m.step)] = (m.value, m.timestamp)
    missing = sorted(k for k in expected if k not in got)
    check(not missing, "every MLLOG number is in a metric history (%d points; missing: %s)"
          % (len(expected), missing[:5]))
    wrong = [(k, expected[k], got[k][0]) for k in expected if k in got and got[k][0] != expected[k]]
    check(not wrong, "their values equal the MLLOG's exactly (first wrong: %s)" % (wrong[:1],))
    late = [(k, times[k], got[k][1]) for k in expected if k in got and got[k][1] != times[k]]
    check(not late, "each point has its event's time (first wrong: %s)" % (late[:1],))
    extra = sorted(k for k in got if k not in expected)
    check(not extra, "no metric point that the MLLOG does not have (%s)" % extra[:5])
    for tag in ("train/loss", "train/learning_rate", "train/epoch", "eval/loss", "eval/accuracy"):
        check(tag in run.data.metrics, "metric %s is there" % tag)
    return len(expected)


def flat_fields(config):
    for section, fields in config.items():
        if isinstance(fields, dict):
            for key, value in fields.items():
                if value is not None:
                    yield section + "." + key, value
        elif fields is not None:
            yield section, fields


def check_params(client, run, engine, config_path):
    printed = json.loads(subprocess.run([engine, "config", "print", config_path], check=True,
                                        capture_output=True, text=True).stdout)
    params = run.data.params
    expected = dict(flat_fields(printed))
    wrong = [k for k, v in expected.items()
             if k not in params or (params[k] if isinstance(v, str) else json.loads(params[k])) != v]
    check(not wrong and len(params) == len(expected),
          "every config field is a param with its value (%d; wrong or missing: %s)" % (len(expected), wrong[:5]))
    folder = client.download_artifacts(run.info.run_id, "", os.path.join(os.path.dirname(config_path), "art"))
    with open(os.path.join(folder, "run_config.json")) as f:
        check(json.load(f) == printed, "the artifact run_config.json is the config the engine prints")


def train(engine, source_dir, config_path, env=None):
    return subprocess.run([engine, "train", "--threads", "1", config_path], cwd=source_dir, env=env,
                          capture_output=True, text=True)


def check_full_disk(engine, source_dir, work_dir, config):
    # The demo's metric files take ~2 kB: the disk fills among the points.
    run, mllog = full_disk_run(engine, source_dir, work_dir, config, "enospc_after_bytes:1000:/metrics/")
    warned = [l for l in run.stderr.splitlines() if l.startswith("warning: mlflow:")]
    check(run.returncode == 0 and '"key": "run_stop"' in mllog and '"status": "success"' in mllog,
          "a run whose disk fills under its metric files trains to its end (exit %d)" % run.returncode)
    check(len(warned) == 1 and "No space left on device" in warned[0] and " at step " in warned[0] and
          "not in the MLflow run" in warned[0], "with one warning: %s" % (warned[:2],))


def check_resume(engine, source_dir, work_dir, config):
    config = json.loads(json.dumps(config))
    output_dir = os.path.join(work_dir, "resumed-run")
    config["training"].update(output_dir=output_dir, max_steps=6, save_steps=6)
    path = os.path.join(work_dir, "resumed.json")
    with open(path, "w") as f:
        json.dump(config, f)
    first = train(engine, source_dir, path)
    config["training"].update(max_steps=12, resume_from_checkpoint="latest")
    with open(path, "w") as f:
        json.dump(config, f)
    second = train(engine, source_dir, path)
    check(first.returncode == 0 and second.returncode == 0,
          "a 6-step run, then resumed to 12 (exit %d, %d)" % (first.returncode, second.returncode))
    client = client_for(output_dir)
    runs = client.search_runs(["0"])
    steps = sorted(m.step for m in client.get_metric_history(runs[0].info.run_id, "train/loss")) if runs else []
    expected = sorted({step for tag, step in mllog_points(os.path.join(output_dir, "mllog.txt"))
                       if tag == "train/loss"})
    check(len(runs) == 1 and runs[0].info.status == "FINISHED" and steps == expected and steps[-1] == 12,
          "the resumed run goes on in its MLflow run: one run, FINISHED, train/loss at steps %s" % steps)


def metric_points(client, run):
    return {(tag, m.step): m.value for tag in run.data.metrics
            for m in client.get_metric_history(run.info.run_id, tag)}


def check_export(slipway, source_dir, work_dir, live_points):
    _, mlperf, store = export_logs(slipway, "mlflow", source_dir, work_dir)
    client = MlflowClient(tracking_uri="file://" + store)
    runs = {r.info.run_name: r for r in client.search_runs(["0"])}
    check(sorted(runs) == ["dell-xe9680-result_0", "run"], "one run per log (%s)" % sorted(runs))
    if "run" in runs:
        check(metric_points(client, runs["run"]) == live_points, "the run from mllog.txt has the live run's points")
    if "dell-xe9680-result_0" in runs:
        mlperf_run = runs["dell-xe9680-result_0"]
        expected = {k: v for k, v in mllog_points(mlperf).items() if k[0] == "eval/accuracy"}
        got = {k: v for k, v in metric_points(client, mlperf_run).items() if k[0] == "eval/accuracy"}
        check(len(expected) > 3 and got == expected and mlperf_run.info.status == "FINISHED",
              "an MLPerf log's %d eval_accuracy points, at their samples_count, FINISHED (%s)"
              % (len(expected), mlperf_run.info.status))


def main():
    engine, slipway, source_dir, work_dir = sys.argv[1:5]
    warnings.simplefilter("ignore")  # MLflow's notes on the file store's maintenance mode
    shutil.rmtree(work_dir, ignore_errors=True)
    os.makedirs(work_dir)
    config_path, config = demo_config(source_dir, work_dir, ["mlflow"])
    output_dir = config["training"]["output_dir"]
    run = train(engine, source_dir, config_path)
    if run.returncode != 0:
        print(run.stderr[-3000:])
        sys.exit("FAIL: the demo run failed")
    store = os.path.join(output_dir, "mlruns")
    check("metrics also go to mlflow: " + store in run.stderr, "the run says where its MLflow run is")
    client = client_for(output_dir)
    mlflow_run = check_run(client, config["name"])
    points = check_metrics(client, mlflow_run, os.path.join(output_dir, "mllog.txt"))
    check_params(client, mlflow_run, engine, config_path)
    if slipway != "-":  # "-": built without the app
        check_export(slipway, source_dir, work_dir, metric_points(client, mlflow_run))
    again = train(engine, source_dir, config_path)
    runs = client.search_runs(["0"])
    check(again.returncode == 0 and len(runs) == 2 and all(r.info.status == "FINISHED" for r in runs),
          "the run again in its output_dir is a second MLflow run (%d)" % len(runs))
    check_resume(engine, source_dir, work_dir, config)
    check_full_disk(engine, source_dir, work_dir, config)
    if failures:
        sys.exit("FAIL: %d check(s)" % len(failures))
    print("PASS: MlflowClient reads the run's %d points, its params and its config" % points)


if __name__ == "__main__":
    main()
