"""Checks of tf_ps.py's arguments, its output and run_all.py's comparison of it with `troupe bench
ps`, without TensorFlow (run by bench/run-all before measuring; python3 bench/peers/test_tf_ps.py).
"""
import contextlib
import io
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_all  # noqa: E402
import tf_ps  # noqa: E402

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)


def parse_error(argv):
    """argparse's exit status and message for argv, or None when argv parses."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            tf_ps.parse_args(argv)
    except SystemExit as e:
        return e.code, err.getvalue()
    return None


def check_arguments():
    args = tf_ps.parse_args([])
    expect(args.steps_per_worker == 200 and args.warmup_steps == 20 and
           args.steps_per_function == 1 and args.tasks == "in-process" and
           not args.in_namespace,
           f"defaults must be troupe bench ps's 200 steps per worker, 20 warm-up, 1 step per "
           f"function: {args}")
    args = tf_ps.parse_args(["--steps-per-worker", "16", "--warmup-steps", "8",
                             "--steps-per-function", "8", "--in-namespace"])
    expect((args.steps_per_worker, args.warmup_steps, args.steps_per_function,
            args.in_namespace) == (16, 8, 8, True), f"the options must parse: {args}")
    got = parse_error(["--steps-per-worker", "0"])
    expect(got and got[0] == 2 and "--steps-per-worker must be >= 1, got 0" in got[1],
           f"a zero step count must be refused by name: {got}")
    got = parse_error(["--warmup-steps", "-1"])
    expect(got and got[0] == 2 and "--warmup-steps must be >= 1" in got[1] and "got -1" in got[1],
           f"a negative warm-up must be refused by name: {got}")
    got = parse_error(["--steps-per-function", "0"])
    expect(got and got[0] == 2 and "--steps-per-function must be >= 1, got 0" in got[1],
           f"zero steps per function must be refused by name: {got}")
    got = parse_error(["--steps-per-worker", "200", "--steps-per-function", "3",
                       "--warmup-steps", "9"])
    expect(got and got[0] == 2 and
           "--steps-per-worker 200 is not a multiple of --steps-per-function 3" in got[1],
           f"steps that do not fill whole functions must be refused by name: {got}")
    got = parse_error(["--steps-per-function", "8"])
    expect(got and got[0] == 2 and
           "--warmup-steps 20 is not a multiple of --steps-per-function 8" in got[1],
           f"a warm-up that does not fill whole functions must be refused by name: {got}")
    got = parse_error(["--tasks", "threads"])
    expect(got and got[0] == 2 and "invalid choice: 'threads'" in got[1],
           f"an unknown --tasks must be refused by name: {got}")
    expect(tf_ps.parse_args(["--tasks", "processes"]).tasks == "processes",
           "--tasks processes must parse")
    got = parse_error(["--steps-per-worker", "many"])
    expect(got and got[0] == 2 and "invalid int value: 'many'" in got[1],
           f"a non-number must be refused by name: {got}")


def check_output():
    out = tf_ps.summarize(200, 1, 4.0, [10.5] * 200 + [10.7] * 200, "2.21.0", 3)
    expect(out["timed_steps"] == 400 and out["rows_per_s"] == 400 * 1024 / 4.0,
           f"rows/s must be 2 workers x steps x 1024 ids / wall time: {out}")
    expect(out["ms_per_step"] == 20.0, f"ms per step is per worker, as troupe's: {out}")
    expect(abs(out["loss_mean"] - 10.6) < 1e-12, f"the mean loss of every step: {out}")
    expect((out["rows"], out["dim"], out["ps"], out["workers"], out["ids_per_step"]) ==
           (1_000_000, 64, 2, 2, 1024), f"the work must be troupe bench ps's: {out}")
    expect("inter-op threads 3" in out["config"] and out["version"] == "tensorflow 2.21.0" and
           "1 step(s) per scheduled function" in out["config"],
           f"the configuration and version are recorded: {out}")
    expect(out["tasks"] == "in-process" and "in-process cluster" in out["config"],
           f"the in-process cluster is the default and is named: {out}")
    procs = tf_ps.summarize(200, 1, 4.0, [10.5] * 400, "2.21.0", 3, "processes")
    expect(procs["tasks"] == "processes" and "a process per task" in procs["config"],
           f"a process per task is named: {procs}")
    out8 = tf_ps.summarize(200, 8, 4.0, [10.5] * 25 + [10.7] * 25, "2.21.0", 3)
    expect(out8["rows_per_s"] == out["rows_per_s"] and out8["steps_per_function"] == 8 and
           abs(out8["loss_mean"] - 10.6) < 1e-12,
           f"8 steps per function: one loss per function, the same accounting: {out8}")
    line = json.dumps(out)
    expect(run_all.last_json("WARNING: noise\n" + line + "\n") == out,
           "run_all must read the script's last line back")
    try:
        tf_ps.summarize(200, 1, 0.0, [1.0] * 400, "2.21.0", 3)
        failures.append("summarize accepted a zero wall time")
    except ValueError as e:
        expect("no timed work" in str(e) and "seconds=0.0" in str(e), f"names the time: {e}")
    try:
        tf_ps.summarize(200, 8, 1.0, [1.0] * 49, "2.21.0", 3)
        failures.append("summarize accepted fewer losses than functions")
    except ValueError as e:
        expect("49 losses fetched for 50 scheduled functions of 8 step(s)" in str(e),
               f"names the counts: {e}")
    # troupe's v[i] = float((i * 7919) % 1000) / 1000.f
    expect(tf_ps.troupe_value(0) == 0 and tf_ps.troupe_value(1) == tf_ps.troupe_value(1001) and
           abs(float(tf_ps.troupe_value(1)) - 0.919) < 1e-7,
           "the initial value formula must be troupe bench ps's")


def check_comparison():
    troupe = {"sparse": {"rows_per_s": 450000.0, "loss_mean": 10.649}}
    tf = {"rows_per_s": 90000.0, "loss_mean": 10.651}
    tf8 = {"rows_per_s": 150000.0, "loss_mean": 10.647}
    c, failed = run_all.ps_comparison({"troupe_bench_ps": troupe, "tensorflow_ps": tf})
    expect(not failed and c["ok"] and abs(c["ratio"] - 5.0) < 1e-12 and c["goal_2x_met"],
           f"5x with matching losses must pass and meet the goal: {c}")
    c, failed = run_all.ps_comparison({"troupe_bench_ps": troupe, "tensorflow_ps": tf,
                                       "tensorflow_ps_8": tf8})
    expect(not failed and c["tensorflow_best"] == "tensorflow_ps_8" and
           abs(c["ratio"] - 3.0) < 1e-12 and set(c["loss_relative_diff"]) ==
           {"tensorflow_ps", "tensorflow_ps_8"},
           f"the ratio is against TensorFlow's best configuration, every loss checked: {c}")
    slow = {"sparse": {"rows_per_s": 150000.0, "loss_mean": 10.649}}
    c, failed = run_all.ps_comparison({"troupe_bench_ps": slow, "tensorflow_ps": tf})
    expect(not failed and not c["goal_2x_met"] and abs(c["ratio"] - 1.0 / 0.6) < 1e-12,
           f"1.67x misses the goal without failing the run: {c}")
    other = {"rows_per_s": 90000.0, "loss_mean": 10.649 * 1.02}
    c, failed = run_all.ps_comparison({"troupe_bench_ps": troupe, "tensorflow_ps": tf,
                                       "tensorflow_ps_8": other})
    expect(failed and not c["ok"] and abs(c["loss_relative_diff"]["tensorflow_ps_8"] - 0.02)
           < 1e-9, f"a mean loss 2 % off is different work and must fail: {c}")
    c, failed = run_all.ps_comparison({"troupe_bench_ps": troupe,
                                       "tensorflow_ps": {"error": "exited with 1"}})
    expect(not failed and c.get("error") == "no result from tensorflow_ps",
           f"a failed peer gives no comparison, names itself and does not fail the run: {c}")
    c, failed = run_all.ps_comparison({"troupe_bench_ps": {"error": "exited with 1"},
                                       "tensorflow_ps": tf})
    expect(not failed and c.get("error") == "no result from troupe_bench_ps",
           f"a failed troupe run is named: {c}")


def main():
    check_arguments()
    check_output()
    check_comparison()
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    if failures:
        sys.exit(1)
    print("tf_ps: arguments, output and the comparison with troupe bench ps behave")


if __name__ == "__main__":
    main()
