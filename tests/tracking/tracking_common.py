"""What the tracker checks share: the demo run's config, and the points its mllog.txt holds, named as the
engine names them for every tracker (HF Trainer's tags)."""
import json
import os
import subprocess

HF_TAGS = {
    "train_loss": "train/loss",
    "lr": "train/learning_rate",
    "grad_norm": "train/grad_norm",
    "tokens_per_second": "train/tokens_per_second",
    "eval_loss": "eval/loss",
    "eval_accuracy": "eval/accuracy",
    "eval_token_accuracy": "eval/token_accuracy",
}
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def demo_config(source_dir, work_dir, report_to):
    """The demo preset as a 12-step run in WORK_DIR/run reporting to `report_to`: (its path, the config)."""
    with open(os.path.join(source_dir, "resources/presets/demo-tiny.json")) as f:
        config = json.load(f)
    absolute = lambda p: os.path.join(source_dir, p)
    config["name"] = "tracking check"
    config["model"]["path"] = absolute(config["model"]["path"])
    config["tokenizer"]["path"] = absolute(config["tokenizer"]["path"])
    config["data"]["train_file"] = absolute(config["data"]["train_file"])
    config["data"]["cache_dir"] = os.path.join(work_dir, "cache")
    config["eval"]["tasks"] = absolute(config["eval"]["tasks"])
    config["training"].update(max_steps=12, warmup_steps=2, logging_steps=2, eval_steps=6, save_steps=100,
                              output_dir=os.path.join(work_dir, "run"), report_to=report_to)
    path = os.path.join(work_dir, "config.json")
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    return path, config


def named_points(path):
    """(tag, step, value, time_ms) for every number the run logged, named as the engine names them."""
    train_samples = None
    with open(path) as f:
        for line in f:
            if ":::MLLOG " not in line:
                continue
            event = json.loads(line.split(":::MLLOG ", 1)[1])
            value, meta = event["value"], event.get("metadata") or {}
            if event["event_type"] != "POINT_IN_TIME" or isinstance(value, bool) or \
                    not isinstance(value, (int, float)):
                continue
            if event["key"] == "train_samples":
                train_samples = value
            step = int(meta.get("step_num", meta.get("samples_count", meta.get("epoch_num", 0))))
            if event["key"] == "eval_task":
                tag = "eval/%s/%s" % (meta["task"], meta["metric"])
            else:
                tag = HF_TAGS.get(event["key"], "mllog/" + event["key"])
            yield tag, step, value, event["time_ms"]
            if event["key"] == "train_loss" and train_samples:
                yield "train/epoch", step, meta["samples_count"] / train_samples, event["time_ms"]


def mllog_points(path):
    """(tag, step) -> value for every number the run logged."""
    return {(tag, step): value for tag, step, value, _ in named_points(path)}


def mllog_times(path):
    """(tag, step) -> the event's time_ms."""
    return {(tag, step): time_ms for tag, step, _, time_ms in named_points(path)}


def full_disk_run(engine, source_dir, work_dir, config, fault):
    """The config again in WORK_DIR/full-disk-run, trained under SLIPWAY_FS_FAULT=`fault`: (the finished
    process, its mllog.txt's text)."""
    config = json.loads(json.dumps(config))
    config["training"]["output_dir"] = os.path.join(work_dir, "full-disk-run")
    path = os.path.join(work_dir, "full-disk.json")
    with open(path, "w") as f:
        json.dump(config, f)
    run = subprocess.run([engine, "train", "--threads", "1", path], cwd=source_dir,
                         env=dict(os.environ, SLIPWAY_FS_FAULT=fault), capture_output=True, text=True)
    with open(os.path.join(config["training"]["output_dir"], "mllog.txt")) as f:
        return run, f.read()


def export_logs(slipway, kind, source_dir, work_dir):
    """`slipway logs KIND` on the demo run's mllog.txt and a real MLPerf submission's log, into
    WORK_DIR/exported: (the finished process, the MLPerf log's path, the output folder)."""
    mllog = os.path.join(work_dir, "run", "mllog.txt")
    mlperf = os.path.join(source_dir, "tests/data/mlperf-logs/dell-xe9680-result_0.txt")
    out = os.path.join(work_dir, "exported")
    run = subprocess.run([slipway, "logs", kind, mllog, mlperf, "--out", out], capture_output=True, text=True)
    check(run.returncode == 0, "slipway logs %s exits 0 (%s)" % (kind, run.stderr.strip()[-300:]))
    return run, mlperf, out
