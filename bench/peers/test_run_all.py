"""Checks of run_all.py's and troupe_data.py's failure paths and of the experiment run_all gives
`troupe run` (run by bench/run-all before measuring; python3 bench/peers/test_run_all.py)."""
import copy
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_all  # noqa: E402
import troupe_data  # noqa: E402

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)


def main():
    spec = json.load(open(os.path.join(HERE, "mlp_spec.json")))
    ref = {"replicas": 1, "first_loss": 0.6866711, "final_loss": 5.0e-6}
    close = {"replicas": 2, "first_loss": 0.6866711 + 5e-6, "final_loss": 5.0e-6 + 9e-6}
    far = {"replicas": 1, "first_loss": 0.6866711 + 2e-5, "final_loss": 5.0e-6}
    checks, failed = run_all.check_losses({"troupe_run_1": ref, "close": close}, spec)
    expect(not failed and all(c["ok"] for c in checks) and len(checks) == 2,
           f"losses within 1e-5 must pass: {checks}")
    checks, failed = run_all.check_losses({"troupe_run_1": ref, "far": far}, spec)
    bad = [c for c in checks if not c["ok"]]
    expect(failed and len(bad) == 1 and bad[0]["name"] == "far" and
           bad[0]["loss"] == "first_loss", f"a first loss 2e-5 off must fail, by name: {checks}")
    checks, failed = run_all.check_losses({"far": far}, spec)
    expect(failed and checks[0].get("error") == "no reference run",
           f"without troupe's run the check must fail and say so: {checks}")
    checks, failed = run_all.check_losses({"troupe_run_1": {"error": "exit 1"}, "far": far}, spec)
    expect(failed and checks[0].get("error") == "no reference run",
           f"a failed troupe run must fail the check: {checks}")

    big = copy.deepcopy(spec)
    big["timed_steps"] = 1000
    try:
        troupe_data.mlp_workload(big)
        failures.append("mlp_workload accepted more steps than examples")
    except ValueError as e:
        expect("exceed examples=60000" in str(e) and "wrap around" in str(e),
               f"mlp_workload's error names the problem: {e}")

    odd = copy.deepcopy(spec)
    odd["warmup_steps"] = 5
    try:
        run_all.troupe_run("/nonexistent/troupe", odd, 1)
        failures.append("troupe_run accepted a warm-up that is not a multiple of the window")
    except ValueError as e:
        expect("multiples of window" in str(e), f"troupe_run's error names the problem: {e}")

    try:
        run_all.sh([sys.executable, "-c", "import sys; sys.stderr.write('boom'); sys.exit(3)"])
        failures.append("sh() accepted a failing command")
    except RuntimeError as e:
        expect("exited with 3" in str(e) and "boom" in str(e),
               f"sh()'s error names the status and the stderr: {e}")

    try:
        run_all.sh([sys.executable, "-c", "import time; time.sleep(60)"], timeout=1)
        failures.append("sh() waited past its timeout")
    except RuntimeError as e:
        expect("ran past 1 s and was killed" in str(e), f"sh()'s timeout error names it: {e}")

    yaml = run_all.troupe_experiment_yaml(spec, 2)
    for line in ("seed: 42", "devices: [CPU:0, CPU:1]", "global_batch: 256",
                 "learning_rate: 0.1", "steps: 208", "log_every: 8"):
        expect(line in yaml, f"the experiment for troupe run lacks '{line}':\n{yaml}")
    expect("shuffle" not in yaml, "the peers read the data in order: troupe must not shuffle")
    gpu = run_all.troupe_experiment_yaml(spec, 1, "GPU")
    for line in ("devices: [GPU:0]", "kind: nccl"):
        expect(line in gpu, f"the GPU experiment for troupe run lacks '{line}':\n{gpu}")

    import cpu_ab  # the A/B script: ratios oriented so that above 1 always means B better
    faster = cpu_ab.summarise("run2", [(100.0, 110.0), (100.0, 90.0), (100.0, 120.0)])
    expect(faster["b_better_in"] == 2 and faster["median_pair_ratio"] == 1.1,
           f"examples/s: B higher is B better: {faster}")
    quicker = cpu_ab.summarise("allreduce_processes", [(30.0, 25.0), (30.0, 20.0)])
    expect(quicker["b_better_in"] == 2 and quicker["median_pair_ratio"] > 1,
           f"times: B lower is B better: {quicker}")
    for argv, words in ((["/bin/true", "/bin/true", "--work", "run2,nope"], "unknown workload"),
                        (["/nonexistent/troupe", "/bin/true"], "not an executable"),
                        (["/bin/true", "/bin/true", "--rounds", "0"], "at least 1")):
        p = subprocess.run([sys.executable, os.path.join(HERE, "cpu_ab.py")] + argv,
                           capture_output=True, text=True)
        expect(p.returncode == 2 and words in p.stderr,
               f"cpu_ab.py {argv}: exit 2 naming '{words}', got {p.returncode}: {p.stderr}")

    import report  # needs matplotlib, which bench/peers/setup.sh installs for this python
    expect(report.limit_goal(0.85) == "**met**" and report.limit_goal(0.7) == "**missed**",
           "the 2-core limit goal is met at 0.8 and above, missed below")
    expect(report.limit_goal(1.26).startswith("**not judged**"),
           "a ratio above the limit (sampled in a slower phase) is not counted as met")
    expect(report.reach(300.0, 250.0) == " (needs 1.20x the 2-core GEMM limit of this run: out "
           "of reach here)", f"a goal past the limit says so: {report.reach(300.0, 250.0)}")
    expect(report.reach(300.0, 250.0, 280.0) == " (needs 1.20x the 2-core GEMM limit of this "
           "run, 1.07x the cores' multiply-add peak: out of reach here)",
           f"with the peak measured, the goal names both: {report.reach(300.0, 250.0, 280.0)}")
    expect(report.reach(260.0, 250.0, 280.0) == " (needs 1.04x the 2-core GEMM limit of this "
           "run, 0.93x the cores' multiply-add peak: past every GEMM library measured)",
           f"past the limit but below the peak: {report.reach(260.0, 250.0, 280.0)}")
    expect(report.reach(200.0, 250.0) == " (needs 0.80 of the 2-core GEMM limit)" and
           report.reach(200.0, None) == "", "a goal within the limit says how much it needs")
    # The generated section lists every round's 2-replica ratio to its own limit.
    sample = json.load(open(os.path.join(HERE, "..", "results", "2026-11-28.json")))
    sample["mlp"]["troupe_bench_train"]["rounds_ratio_to_limit_2_replicas"] = [0.71, 0.74, 1.26]
    text = report.section(sample, "bench/results/2026-11-28.json")
    expect("that round's own limit: 0.71, 0.74, 1.26 (median 0.74)" in text,
           "the report lists each round's ratio to its own limit and their median")
    # The parameter-server section says what a ps task's kernels take of troupe's step.
    sample = json.load(open(os.path.join(HERE, "..", "results", "2026-11-28g.json")))
    text = "\n".join(report.ps_section(sample))
    expect("Of troupe's 880 us per worker step, one ps task's kernels take 16.7 us to gather its "
           "512 rows (of 500,000) and 19.1 us to apply SGD to them" in text,
           f"the ps section names the shard's kernel time: {text[-400:]}")

    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    if failures:
        sys.exit(1)
    print("run_all: loss checks, input checks, the troupe experiment and the A/B script behave")


if __name__ == "__main__":
    main()
