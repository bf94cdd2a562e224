"""PyTorch peer: the MLP of mlp_spec.json in one process, or with DistributedDataParallel over
gloo on 2 ranks (each rank takes its half of every global batch, rows in order, as troupe's
replicas do). Prints one JSON object.

Configured as PyTorch's documentation recommends for CPU DDP: one process per rank, each with
torch.set_num_threads(cores / ranks) (the DDP and performance-tuning guides: OMP_NUM_THREADS =
physical cores / processes); gloo bound to the loopback interface (GLOO_SOCKET_IFNAME=lo), the
rendezvous through a file store, so nothing listens beyond 127.0.0.1."""
import argparse
import ctypes
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import troupe_data  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def blas_threads():
    """Threads of the BLAS under torch's CPU GEMMs, or None where that is not OpenBLAS. Debian's
    torch calls the system's libblas.so.3 (OpenBLAS's pthread build by default), whose own thread
    pool torch.set_num_threads does not size: with 1 torch thread a GEMM still runs on every core
    (on the 2-vCPU AMD EPYC VM: 160 k examples/s, 95 k with OPENBLAS_NUM_THREADS=1). DDP's ranks
    gain from it too (92 k / 78 k against 61 k / 63 k), as a rank waiting at the all-reduce leaves
    its core to the other's GEMM, so it is left as the package sets it and reported."""
    try:
        return ctypes.CDLL("libblas.so.3").openblas_get_num_threads()
    except (OSError, AttributeError):
        return None


def build_model(spec, params):
    widths = [spec["input_dim"]] + spec["hidden"] + [spec["classes"]]
    layers = []
    for l in range(len(widths) - 1):
        lin = torch.nn.Linear(widths[l], widths[l + 1])
        with torch.no_grad():  # troupe's kernels are [in, out]; torch's weights are [out, in]
            lin.weight.copy_(torch.from_numpy(params[2 * l].T.copy()))
            lin.bias.copy_(torch.from_numpy(params[2 * l + 1]))
        layers.append(lin)
        if l + 2 < len(widths):
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def train(rank, world, threads, spec, cache, store_path, out_path, device="cpu"):
    torch.set_num_threads(threads)
    if world > 1:
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"
        dist.init_process_group("gloo", init_method="file://" + store_path, rank=rank,
                                world_size=world)
    x, y, params = troupe_data.mlp_workload(spec, cache)
    model = build_model(spec, params).to(device)
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=spec["learning_rate"])
    batch, local = spec["global_batch"], spec["global_batch"] // world
    xs, ys = torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    losses = []

    def step(s):
        rows = slice(s * batch + rank * local, s * batch + (rank + 1) * local)
        optimizer.zero_grad(set_to_none=True)
        # Mean over the local rows; DDP averages the ranks' gradients: the global batch's mean.
        loss = F.cross_entropy(model(xs[rows]), ys[rows])
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())

    for s in range(spec["warmup_steps"]):
        step(s)
    if world > 1:
        dist.barrier()
    sync()
    start = time.perf_counter()
    for s in range(spec["warmup_steps"], spec["warmup_steps"] + spec["timed_steps"]):
        step(s)
    sync()  # CUDA launches are asynchronous: the time ends when the GPU is done
    seconds = time.perf_counter() - start
    local_losses = torch.stack(losses).cpu()
    if world > 1:  # the global batch's loss is the mean of the ranks' means (equal halves)
        dist.all_reduce(local_losses)
        local_losses /= world
        t = torch.tensor([seconds], dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        seconds = float(t[0])
        dist.destroy_process_group()
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump({"seconds": seconds, "losses": local_losses.tolist()}, f)
    if world > 1:
        # Leave without interpreter teardown: a gloo rank of Debian's torch 1.13 was seen hanging
        # in a futex wait after destroy_process_group, its work done and written (bench/run-all
        # waited 3.5 min for it).
        os._exit(0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, choices=[1, 2], required=True)
    ap.add_argument("--spec", required=True)
    ap.add_argument("--cache", default=None)
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                    help="cuda: the one-process run on GPU 0 (model and whole data set on the GPU)")
    ap.add_argument("--threads", type=int, default=0,
                    help="threads per rank (default: cores / ranks, as PyTorch recommends)")
    args = ap.parse_args()
    threads = args.threads or max(1, os.cpu_count() // args.ranks)
    if args.device == "cuda" and args.ranks != 1:
        ap.error("--device cuda runs one process (--ranks 1)")
    spec = json.load(open(args.spec))
    troupe_data.mlp_workload(spec, args.cache)  # fill the cache once, before the ranks start
    with tempfile.TemporaryDirectory() as tmp:
        store, out = os.path.join(tmp, "store"), os.path.join(tmp, "out.json")
        if args.ranks == 1:
            train(0, 1, threads, spec, args.cache, store, out, args.device)
        else:
            mp.spawn(train, args=(args.ranks, threads, spec, args.cache, store, out), nprocs=args.ranks)
        result = json.load(open(out))
    losses, window = result["losses"], spec["window"]
    print(json.dumps({
        "peer": "pytorch", "config": "one process, CUDA GPU 0" if args.device == "cuda" else
        f"one process, {threads} thread(s)" if args.ranks == 1 else
        "DistributedDataParallel, gloo, 2 ranks", "replicas": args.ranks,
        "version": torch.__version__, "threads_per_rank": threads,
        "blas_threads_per_rank": blas_threads(),
        "examples_per_s": spec["timed_steps"] * spec["global_batch"] / result["seconds"],
        "first_loss": float(np.mean(losses[:window])),
        "final_loss": float(np.mean(losses[-window:])),
        "losses": losses,
    }))


if __name__ == "__main__":
    main()
