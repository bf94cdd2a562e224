"""TensorFlow peer: the collective all-reduce of MultiWorkerMirroredStrategy (RING, gRPC between
2 worker processes, one CPU replica each), timed as ReplicaContext.all_reduce(SUM) inside
strategy.run in a tf.function. TensorFlow's gRPC server binds 0.0.0.0, so both workers run in a
private network namespace (`unshare -n`, loopback up): nothing is reachable from outside, and the
fixed ports cannot collide with anything. Prints one JSON object (allreduce_common).

  python tf_allreduce.py               # launcher: enters the namespace, starts both workers
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import allreduce_common as common  # noqa: E402

RANKS = 2
PORTS = [21001, 21002]  # inside the private namespace only


def worker(index):
    os.environ["TF_CONFIG"] = json.dumps({
        "cluster": {"worker": [f"127.0.0.1:{p}" for p in PORTS]},
        "task": {"type": "worker", "index": index}})
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    options = tf.distribute.experimental.CommunicationOptions(
        implementation=tf.distribute.experimental.CommunicationImplementation.RING)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)

    @tf.function
    def all_reduce(x):
        # tf.identity inside the replica function takes the replica's device (the input tensor
        # of a traced function has none, and all_reduce needs one to name the destination).
        return strategy.run(lambda t: tf.distribute.get_replica_context().all_reduce(
            tf.distribute.ReduceOp.SUM, tf.identity(t)), args=(x,))

    rows = []
    for size in common.SIZES:
        # A per-replica value placed on the worker's CPU (a plain tensor has no device, and
        # all_reduce needs one to name the destination).
        x = strategy.experimental_distribute_values_from_function(
            lambda ctx, n=size // 4: tf.ones([n], tf.float32))
        first = strategy.experimental_local_results(all_reduce(x))[0].numpy()  # warm-up: tracing, the collective's group and key
        if first[0] != RANKS:
            raise RuntimeError(f"TF all-reduce of {size} bytes gave {first[0]}, not {RANKS}")
        reps = common.reps_for(size)
        strategy.experimental_local_results(all_reduce(x))[0].numpy()
        start = time.perf_counter()
        for _ in range(reps):
            y = all_reduce(x)
        strategy.experimental_local_results(y)[0].numpy()
        rows.append(common.row(size, (time.perf_counter() - start) / reps, RANKS))
    print(json.dumps({"index": index, "rows": rows, "version": tf.__version__}), flush=True)


def in_namespace():
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", str(i)],
                              stdout=subprocess.PIPE, text=True) for i in range(RANKS)]
    outs = []
    for p in procs:
        out, _ = p.communicate(timeout=900)
        if p.returncode != 0:
            raise SystemExit(f"tf_allreduce: worker exited with {p.returncode}")
        outs.append(json.loads(out.strip().splitlines()[-1]))
    rows = []
    for i, size in enumerate(common.SIZES):  # the slower worker of each size
        slowest = max(o["rows"][i]["time_us"] for o in outs)
        rows.append(common.row(size, slowest * 1e-6, RANKS))
    common.emit("tensorflow", "MultiWorkerMirroredStrategy collective all-reduce (RING, gRPC), "
                "2 processes in a private network namespace", "tensorflow " + outs[0]["version"],
                RANKS, rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", type=int)
    ap.add_argument("--in-namespace", action="store_true")
    args = ap.parse_args()
    if args.worker is not None:
        worker(args.worker)
    elif args.in_namespace:
        in_namespace()
    else:
        os.execvp("unshare", ["unshare", "-n", "--", sys.executable, __file__, "--in-namespace"])


if __name__ == "__main__":
    main()
