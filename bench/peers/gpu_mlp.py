"""The MLP on one NVIDIA GPU: `troupe run` with one GPU replica (variables in GPU memory, cuBLAS
GEMMs, NcclAllReduce strategy) against PyTorch on the same GPU, with `troupe run` and PyTorch on
the same machine's CPU cores beside them. Two workloads: mlp_spec.json (784-256-10, batch 256:
launch-bound on a GPU) and a wide one (784-1024-1024-10, batch 1024), both on the same data and
initial weights (troupe_data.py), so every run's first and final window losses are checked against
troupe's CPU run. Rounds interleave the configurations; the best round of each is reported.

    python3 bench/peers/gpu_mlp.py --troupe build/bin/troupe --out gpu.json

Needs a CUDA GPU, a troupe built with CUDA, and PyTorch with CUDA (the python running this)."""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_all  # noqa: E402

# lr 0.01: at 0.1 the wide net's first steps overshoot, and float rounding differences between
# libraries grow past the loss tolerance within a window.
WIDE = {"hidden": [1024, 1024], "global_batch": 1024, "timed_steps": 48, "learning_rate": 0.01}


def torch_run(spec_path, device, cache):
    cmd = [sys.executable, os.path.join(HERE, "torch_mlp.py"), "--ranks", "1", "--spec", spec_path,
           "--cache", cache, "--device", device]
    return run_all.last_json(run_all.sh(cmd, timeout=600))


def loss_checks(runs, reference, tolerance):
    ref = runs.get(reference)
    checks = []
    for name, r in runs.items():
        if name == reference or not ref or "first_loss" not in r or "first_loss" not in ref:
            continue
        for which in ("first_loss", "final_loss"):
            diff = abs(r[which] - ref[which])
            checks.append({"name": name, "loss": which, "value": r[which], "troupe_cpu": ref[which],
                           "abs_diff": diff, "ok": diff <= tolerance * max(1.0, abs(ref[which]))})
    return checks


def gpu_facts():
    out = run_all.sh(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                      "--format=csv,noheader"])
    import torch
    return {"gpu": out.strip(), "torch": torch.__version__, "cuda": torch.version.cuda,
            "cpu": platform.processor() or run_all.sh(["sh", "-c", "grep -m1 'model name' "
                                                       "/proc/cpuinfo"]).strip(),
            "cpus": os.cpu_count()}


def measure_workload(troupe, spec, spec_path, rounds, cache):
    configs = {
        "troupe_run_gpu_1": lambda: run_all.troupe_run(troupe, spec, 1, "GPU"),
        "pytorch_cuda": lambda: torch_run(spec_path, "cuda", cache),
        "troupe_run_cpu_1": lambda: run_all.troupe_run(troupe, spec, 1),
        "troupe_run_cpu_2": lambda: run_all.troupe_run(troupe, spec, 2),
        "pytorch_cpu": lambda: torch_run(spec_path, "cpu", cache),
    }
    results, loads = {}, []
    for r in range(rounds):
        for name, fn in configs.items():
            run_all.measure(name, fn, results, loads)
    best = {name: dict(run_all.best(runs, key=lambda x: x["examples_per_s"]),
                       rounds=[x.get("examples_per_s") for x in runs])
            for name, runs in results.items()}
    for r in best.values():
        r.pop("losses", None)
        r.pop("window_losses", None)
    gpu, torch_gpu = best["troupe_run_gpu_1"], best["pytorch_cuda"]
    ratio = None
    if "examples_per_s" in gpu and "examples_per_s" in torch_gpu:
        ratio = gpu["examples_per_s"] / torch_gpu["examples_per_s"]
    checks = loss_checks(best, "troupe_run_cpu_1", spec["loss_tolerance"])
    return {"spec": spec, "runs": best, "troupe_gpu_vs_pytorch_cuda": ratio,
            "loss_checks": checks, "losses_ok": all(c["ok"] for c in checks)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--troupe", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cache", default="/tmp/troupe-gpu-mlp-cache")
    args = ap.parse_args()
    base = json.load(open(os.path.join(HERE, "mlp_spec.json")))
    wide = dict(base, **WIDE)
    report = {"date": time.strftime("%Y-%m-%dT%H:%M:%S"), "machine": gpu_facts(), "workloads": {}}
    for name, spec in (("mlp_spec", base), ("wide", wide)):
        path = os.path.join(args.cache, f"{name}.json")
        os.makedirs(args.cache, exist_ok=True)
        json.dump(spec, open(path, "w"))
        report["workloads"][name] = measure_workload(args.troupe, spec, path, args.rounds,
                                                     args.cache)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    for name, w in report["workloads"].items():
        line = ", ".join(f"{k} {v.get('examples_per_s', float('nan')):.0f}"
                         for k, v in w["runs"].items())
        print(f"{name}: {line}; troupe GPU / PyTorch CUDA {w['troupe_gpu_vs_pytorch_cuda']}; "
              f"losses ok: {w['losses_ok']}")
    return 0 if all(w["losses_ok"] for w in report["workloads"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
