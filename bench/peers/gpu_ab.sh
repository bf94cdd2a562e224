#!/bin/bash
# Two troupe builds on one GPU, alternated: `troupe run` of gpu_mlp.py's two workloads
# (mlp_spec.json, 1,600 steps; the wide MLP, 400 steps) on GPU:0, ROUNDS rounds of A then B,
# then one run of each under the CUDA-call shim (bench/cuda_call_time.c, built here with cc) for
# the count of blocking copies. Prints each run's steady-state examples/s ("after step 8"); the
# A/B tables of docs/benchmarks.md "On one GPU" come from this.
#
#   bash bench/peers/gpu_ab.sh OLD/troupe NEW/troupe [ROUNDS]
set -euo pipefail
a=$1 b=$2 rounds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -shared -fPIC -o "$work/cuda_call_time.so" "$here/../cuda_call_time.c" -ldl
PYTHONPATH="$here" python3 - "$work" "$here/mlp_spec.json" <<'END'
import json, sys
import gpu_mlp, run_all
s = json.load(open(sys.argv[2]))
for name, spec in (("mlp_spec", dict(s, timed_steps=1592)),
                   ("wide", dict(dict(s, **gpu_mlp.WIDE), timed_steps=392))):
    open(f"{sys.argv[1]}/{name}.yaml", "w").write(run_all.troupe_experiment_yaml(spec, 1, "GPU"))
END
run() {  # label binary workload [preload]
  echo "== $3 $1"
  LD_PRELOAD=${4:-} "$2" run --file "$work/$3.yaml" --dir "$work/run-$RANDOM" 2>&1 |
    grep -E "finished|cuda_call_time|rror" || true
}
for w in mlp_spec wide; do
  for r in $(seq "$rounds"); do run "A round $r" "$a" $w; run "B round $r" "$b" $w; done
  run "A shim" "$a" $w "$work/cuda_call_time.so"
  run "B shim" "$b" $w "$work/cuda_call_time.so"
done
