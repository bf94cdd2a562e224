"""gloo peer: torch.distributed.all_reduce (SUM, float32, in place) on 2 ranks, one process each,
gloo bound to loopback (GLOO_SOCKET_IFNAME=lo), the rendezvous through a file store. Prints one
JSON object (allreduce_common)."""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import allreduce_common as common  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

RANKS = 2


def run(rank, store, out):
    torch.set_num_threads(1)
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=RANKS)
    rows = []
    for size in common.SIZES:
        t = torch.ones(size // 4, dtype=torch.float32)
        dist.all_reduce(t)  # warm-up: connections and buffers
        if float(t[0]) != RANKS:
            raise RuntimeError(f"gloo all-reduce of {size} bytes gave {float(t[0])}, not {RANKS}")
        reps = common.reps_for(size)
        dist.barrier()
        start = time.perf_counter()
        for _ in range(reps):
            dist.all_reduce(t)
        seconds = torch.tensor([(time.perf_counter() - start) / reps], dtype=torch.float64)
        dist.all_reduce(seconds, op=dist.ReduceOp.MAX)
        rows.append(common.row(size, float(seconds[0]), RANKS))
    if rank == 0:
        import json
        with open(out, "w") as f:
            json.dump(rows, f)
    dist.destroy_process_group()
    # Leave without interpreter teardown (see torch_mlp.py: a finished gloo rank was seen hanging).
    os._exit(0)


def main():
    import json
    with tempfile.TemporaryDirectory() as tmp:
        store, out = os.path.join(tmp, "store"), os.path.join(tmp, "rows.json")
        mp.spawn(run, args=(store, out), nprocs=RANKS)
        rows = json.load(open(out))
    common.emit("gloo", "torch.distributed all_reduce, gloo, 2 processes, loopback",
                "torch " + torch.__version__, RANKS, rows)


if __name__ == "__main__":
    main()
