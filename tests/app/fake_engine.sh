#!/bin/sh
# A stand-in for slipway-engine in the app's headless tests (the real engine is exercised by the gui and
# cluster tests). Started in the run folder as the real one is, it writes MLLOG lines to output/mllog.txt,
# then per FAKE_ENGINE_MODE, as the engine does: "complete" logs run_stop success and exits 0; "fail" exits 3
# without run_stop (a crash); "abort" logs run_stop aborted and exits 1 (a non-finite loss); "hang" waits
# for SIGTERM, then logs run_stop aborted and exits 143 (after its checkpoint); "deaf" ignores SIGTERM and
# leaves a helper in its process group (a background sleep, its pid in rank.pid), as a wedged launcher
# would (the real launcher's ranks have groups of their own and die with it through PR_SET_PDEATHSIG).
mkdir -p output || exit 2
log=output/mllog.txt
line() { printf ':::MLLOG {"namespace": "", "time_ms": %s, "event_type": "POINT_IN_TIME", "key": "%s", "value": %s, "metadata": {"step_num": %s, "samples_count": %s}}\n' "$1" "$2" "$3" "$4" "$5" >>"$log"; }
stop() { printf ':::MLLOG {"namespace": "", "time_ms": 9, "event_type": "INTERVAL_END", "key": "run_stop", "value": null, "metadata": {"status": "%s"}}\n' "$1" >>"$log"; }
# Before the first line: a test that has seen a point may cancel.
[ "${FAKE_ENGINE_MODE:-}" = hang ] && trap 'stop aborted; exit 143' TERM
[ "${FAKE_ENGINE_MODE:-}" = deaf ] && trap '' TERM
printf ':::MLLOG {"namespace": "", "time_ms": 1, "event_type": "INTERVAL_START", "key": "run_start", "value": null, "metadata": {}}\n' >>"$log"
line 2 train_loss 3.0 1 8
line 3 train_loss 2.5 2 16
case "${FAKE_ENGINE_MODE:-complete}" in
complete)
    stop success
    exit 0 ;;
fail)
    echo "fake engine: failing on purpose" >&2
    exit 3 ;;
abort)
    stop aborted
    exit 1 ;;
hang)
    while :; do sleep 0.1; done ;;
deaf)
    sleep 300 &
    echo $! >rank.pid
    while :; do sleep 0.1; done ;;
esac
