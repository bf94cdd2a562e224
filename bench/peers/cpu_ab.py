"""Two troupe builds on this machine's CPUs, alternated: the way to show that a change made a
figure faster or slower on a VM whose speed swings between phases. Each round runs every chosen
workload once with build A and once with build B, A first in odd rounds and B first in even ones,
so a phase that spans a pair hits both; a pair's ratio is B against A measured back to back.

    python3 bench/peers/cpu_ab.py OLD/bin/troupe NEW/bin/troupe [--rounds 8]
        [--work run2,train,allreduce_processes] [--out ab.json]

Prints each round's figures, then per workload: the median of each side, the median of the pair
ratios (above 1: B better, whichever way the figure runs) and in how many pairs B was better.
Workloads (all on run_all.py's MLP of mlp_spec.json, or its all-reduce sizes):
"""
import argparse
import json
import os
import statistics
import sys
import time

import run_all

SPEC = json.load(open(os.path.join(run_all.HERE, "mlp_spec.json")))


def troupe_run(replicas):
    return lambda t: run_all.troupe_run(t, SPEC, replicas)["examples_per_s"]


def bench_train(replicas):
    def figure(t):
        report = run_all.last_json(run_all.sh([t, "bench", "train", "--json", "--steps",
                                               str(SPEC["timed_steps"]), "--rounds", "1"]))
        return next(r["examples_per_s"] for r in report["results"] if r["replicas"] == replicas)
    return figure


def allreduce(where, size):
    def figure(t):
        report = run_all.last_json(run_all.sh([t, "bench", "allreduce", "--json", "--sizes", size]
                                              + where))
        return report["results"][0]["time_us"]
    return figure


def ps_sparse(t):
    report = run_all.last_json(run_all.sh([t, "bench", "ps", "--json", "--reps", "1"]))
    return report["sparse"]["rows_per_s"]


# name: (what it measures, unit, higher is better, figure(troupe binary)).
WORKLOADS = {
    "run1": ("`troupe run` of the MLP, 1 replica", "examples/s", True, troupe_run(1)),
    "run2": ("`troupe run` of the MLP, 2 replicas", "examples/s", True, troupe_run(2)),
    "train": ("`troupe bench train`, 2 replicas", "examples/s", True, bench_train(2)),
    "allreduce_in_process": ("64 MiB all-reduce, 1 process x 2 replicas", "us", False,
                             allreduce(["--replicas", "2"], "64MiB")),
    "allreduce_processes": ("64 MiB all-reduce, 2 processes", "us", False,
                            allreduce(["--processes", "2"], "64MiB")),
    "ps": ("`troupe bench ps`, sparse embedding steps (2 ps processes, 2 workers)", "rows/s",
           True, ps_sparse),
}
__doc__ += "".join(f"  {name}: {w[0]} ({w[1]})\n" for name, w in WORKLOADS.items())


def summarise(name, pairs):
    """pairs: [(a, b)] figures of one workload. Ratios are oriented so above 1 means B better."""
    _, unit, higher, _ = WORKLOADS[name]
    ratios = [(b / a if higher else a / b) for a, b in pairs]
    return {"workload": name, "unit": unit, "higher_is_better": higher,
            "a_median": statistics.median(a for a, _ in pairs),
            "b_median": statistics.median(b for _, b in pairs),
            "pair_ratios_b_better_above_1": [round(r, 4) for r in ratios],
            "median_pair_ratio": round(statistics.median(ratios), 4),
            "b_better_in": sum(r > 1 for r in ratios), "pairs": len(pairs)}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="troupe binary A (the baseline)")
    ap.add_argument("b", help="troupe binary B (the change)")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--work", default="run2,train", help="comma-separated: " +
                    ", ".join(WORKLOADS))
    ap.add_argument("--out", help="also write every figure and the summary here (JSON)")
    args = ap.parse_args()
    names = [w for w in args.work.split(",") if w]
    unknown = [w for w in names if w not in WORKLOADS]
    if unknown:
        ap.error(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(WORKLOADS)}")
    for binary in (args.a, args.b):
        if not os.access(binary, os.X_OK):
            ap.error(f"{binary}: not an executable troupe binary")
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    pairs = {name: [] for name in names}
    started = time.time()
    for r in range(1, args.rounds + 1):
        for name in names:
            figure = WORKLOADS[name][3]
            order = [("A", args.a), ("B", args.b)] if r % 2 else [("B", args.b), ("A", args.a)]
            got = {side: figure(binary) for side, binary in order}
            pairs[name].append((got["A"], got["B"]))
            run_all.log(f"round {r} {name}: A {got['A']:,.1f}  B {got['B']:,.1f} "
                        f"{WORKLOADS[name][1]} (load {os.getloadavg()[0]:.1f})")
    summary = [summarise(name, pairs[name]) for name in names]
    for s in summary:
        print(f"{s['workload']}: A median {s['a_median']:,.1f}, B median {s['b_median']:,.1f} "
              f"{s['unit']}; pair ratio median {s['median_pair_ratio']} (above 1: B better), "
              f"B better in {s['b_better_in']} of {s['pairs']}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"a": os.path.abspath(args.a), "b": os.path.abspath(args.b),
                       "machine": run_all.machine_facts(), "minutes":
                       round((time.time() - started) / 60, 1), "rounds": args.rounds,
                       "figures": {n: [list(p) for p in pairs[n]] for n in names},
                       "summary": summary}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
