"""What every all-reduce peer shares: the sizes, repetitions and accounting of
`troupe bench allreduce` (float32 SUM, 2 ranks; algbw = bytes / time, busbw = algbw x 2(n-1)/n,
as nccl-tests count; one warm-up all-reduce, then the mean of `reps`, slowest rank reported)."""
import json

SIZES = [4096, 1 << 20, 64 << 20]
REPS = {4096: 500, 1 << 20: 50, 64 << 20: 10}


def reps_for(size):
    return REPS.get(size, 10)


def row(size, seconds_per_op, ranks):
    algbw = size / seconds_per_op / 1e9
    return {"bytes": size, "time_us": seconds_per_op * 1e6, "algbw_gbps": algbw,
            "busbw_gbps": algbw * 2 * (ranks - 1) / ranks}


def emit(peer, config, version, ranks, rows, **extra):
    print(json.dumps(dict(peer=peer, config=config, version=version, ranks=ranks, results=rows,
                          **extra)))
