"""TensorFlow peer of `troupe bench ps`'s sparse part: ParameterServerStrategy with an in-process
cluster (2 workers, 2 ps, made as the TensorFlow tutorial "Parameter server training with
ParameterServerStrategy" makes it: `tf.distribute.Server`s in this process, the worker config's
inter-op threads raised when the machine has fewer cores than workers + 1), a 1,000,000 x 64
float32 embedding split over the 2 ps by FixedShardsPartitioner(2), and a ClusterCoordinator
scheduling steps of 1024 uniformly random ids: embedding lookup, loss 0.5 * sum(row^2) / 1024,
SGD on the looked-up rows only (the gradient of each shard is a tf.IndexedSlices, applied with
scatter_sub on that shard). rows/s = timed steps * 1024 / wall time of the timed steps.

troupe's initial values (v[i] = ((i * 7919) % 1000) / 1000 over the flattened index, each ps
building its own part) and learning rate (0.5), so the mean loss matches `troupe bench ps`'s
loss_mean up to the sampling of the ids.

--steps-per-function K runs K steps in one scheduled tf.function (a loop on the worker, what
Keras calls steps_per_execution): one coordinator dispatch per K steps. --tasks processes gives
each worker and ps a process of its own (`tf_ps.py --serve JOB:INDEX` children, ended when the
measurement is done) instead of the tutorial's in-process cluster.

TensorFlow's gRPC servers bind 0.0.0.0, so the whole cluster runs in a private network namespace
(`unshare -n`, loopback up): nothing outside can reach it. Prints one JSON object.

  python tf_ps.py [--steps-per-worker 200] [--warmup-steps 20] [--steps-per-function 1]
                  [--tasks in-process|processes]
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time

WORKERS = 2
PS = 2
ROWS = 1_000_000
DIM = 64
IDS_PER_STEP = 1024
LEARNING_RATE = 0.5  # troupe bench ps's SGD rate


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps-per-worker", type=int, default=200,
                    help="timed steps = this x 2 workers (troupe bench ps --steps)")
    ap.add_argument("--warmup-steps", type=int, default=20,
                    help="steps scheduled and joined before timing (tracing, connections)")
    ap.add_argument("--steps-per-function", type=int, default=1,
                    help="steps in one scheduled tf.function (a loop on the worker; Keras calls "
                         "it steps_per_execution): fewer coordinator round trips per step")
    ap.add_argument("--tasks", choices=["in-process", "processes"], default="in-process",
                    help="the 2 workers and 2 ps as servers in this process (the tutorial's "
                         "in-process cluster) or one process each")
    ap.add_argument("--serve", help=argparse.SUPPRESS)  # JOB:INDEX, a --tasks processes child
    ap.add_argument("--cluster-json", help=argparse.SUPPRESS)
    ap.add_argument("--in-namespace", action="store_true",
                    help="already inside a private network namespace: run the cluster here")
    args = ap.parse_args(argv)
    if args.steps_per_worker < 1:
        ap.error(f"--steps-per-worker must be >= 1, got {args.steps_per_worker}")
    if args.warmup_steps < 1:
        ap.error(f"--warmup-steps must be >= 1 (the first step traces the function), "
                 f"got {args.warmup_steps}")
    k = args.steps_per_function
    if k < 1:
        ap.error(f"--steps-per-function must be >= 1, got {k}")
    for name, steps in (("--steps-per-worker", args.steps_per_worker),
                        ("--warmup-steps", args.warmup_steps)):
        if steps % k:
            ap.error(f"{name} {steps} is not a multiple of --steps-per-function {k}")
    return args


def summarize(steps_per_worker, steps_per_function, seconds, losses, version,
              inter_op_threads, tasks="in-process"):
    """The JSON object this script prints, from the timed steps' wall time and the losses of the
    scheduled functions (each the mean of its steps); its fields mean what `troupe bench ps
    --json`'s "sparse" fields mean (ms_per_step: wall time per step of one worker, as WORKERS
    steps run at once)."""
    timed_steps = WORKERS * steps_per_worker
    if steps_per_worker < 1 or seconds <= 0:
        raise ValueError(f"tf_ps: no timed work to summarize (steps={timed_steps}, "
                         f"seconds={seconds})")
    functions = timed_steps // steps_per_function
    if len(losses) != functions:
        raise ValueError(f"tf_ps: {len(losses)} losses fetched for {functions} scheduled "
                         f"functions of {steps_per_function} step(s)")
    return {
        "peer": "tensorflow",
        "config": f"ParameterServerStrategy, "
                  + ("in-process cluster" if tasks == "in-process" else "a process per task")
                  + f" ({WORKERS} workers, {PS} ps, "
                  f"gRPC in a private network namespace), FixedShardsPartitioner({PS}), "
                  f"ClusterCoordinator, {steps_per_function} step(s) per scheduled function, "
                  f"worker inter-op threads {inter_op_threads}",
        "steps_per_function": steps_per_function, "tasks": tasks,
        "version": "tensorflow " + version,
        "rows": ROWS, "dim": DIM, "ps": PS, "workers": WORKERS, "ids_per_step": IDS_PER_STEP,
        "steps_per_worker": steps_per_worker, "timed_steps": timed_steps, "seconds": seconds,
        "rows_per_s": timed_steps * IDS_PER_STEP / seconds,
        "ms_per_step": seconds * 1e3 / steps_per_worker,
        "loss_mean": sum(losses) / len(losses),
    }


def loopback_ports(count):
    """Free ports on 127.0.0.1, all bound until all are known (none comes back twice)."""
    socks = []
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def troupe_value(flat_index):
    """troupe bench ps's initial value at a flattened index, in float32 as troupe computes it."""
    import numpy as np
    return np.float32((flat_index * 7919) % 1000) / np.float32(1000)


def check_initial_rows(tf, embedding):
    """The first and last rows of each part against troupe's formula: the parts were built on
    the ps with the right offsets."""
    ids = [0, ROWS // PS - 1, ROWS // PS, ROWS - 1]
    got = tf.nn.embedding_lookup(embedding, tf.constant(ids, tf.int64)).numpy()
    for k, row in enumerate(ids):
        want = [troupe_value(row * DIM + c) for c in range(DIM)]
        if list(got[k]) != want:
            raise RuntimeError(f"tf_ps: initial row {row} is {list(got[k][:4])}..., troupe's "
                               f"formula gives {want[:4]}...")


def worker_inter_op_threads():
    """As create_in_process_cluster in the tutorial: a worker runs scheduled functions
    concurrently and needs at least workers + 1 inter-op threads on a small machine; 0 keeps
    TensorFlow's default (one per core)."""
    return WORKERS + 1 if os.cpu_count() < WORKERS + 1 else 0


def make_server(tf, cluster, job, index):
    config = None
    if job == "worker" and worker_inter_op_threads():
        config = tf.compat.v1.ConfigProto()
        config.inter_op_parallelism_threads = worker_inter_op_threads()
    return tf.distribute.Server(cluster, job_name=job, task_index=index, config=config,
                                protocol="grpc")


def serve(args):
    """One task of the multi-process cluster: its server, until the coordinator's process ends
    it."""
    import tensorflow as tf
    job, index = args.serve.split(":")
    server = make_server(tf, tf.train.ClusterSpec(json.loads(args.cluster_json)), job,
                         int(index))
    print("ready", flush=True)
    server.join()


def start_task_processes(cluster_dict):
    """The --tasks processes cluster: one child per worker and ps, each `tf_ps.py --serve`;
    returns them once every one has said it serves."""
    children = []
    for job in ("worker", "ps"):
        for i in range(len(cluster_dict[job])):
            children.append(subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--serve", f"{job}:{i}",
                 "--cluster-json", json.dumps(cluster_dict)],
                stdout=subprocess.PIPE, text=True))
    for child in children:
        line = child.stdout.readline()  # TensorFlow's import and the server: seconds
        if line.strip() != "ready":
            stop_task_processes(children)
            raise RuntimeError(f"tf_ps: task {' '.join(child.args[2:4])} did not start "
                               f"(exit status {child.poll()})")
    return children


def stop_task_processes(children):
    for child in children:
        if child.poll() is None:
            child.terminate()
    for child in children:
        child.wait(timeout=60)


def run_cluster(args):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    # The tutorial's setting: a worker's failing RPC returns to the coordinator at once.
    os.environ["GRPC_FAIL_FAST"] = "use_caller"
    import tensorflow as tf

    ports = loopback_ports(WORKERS + PS)
    cluster_dict = {"worker": [f"127.0.0.1:{p}" for p in ports[:WORKERS]],
                    "ps": [f"127.0.0.1:{p}" for p in ports[WORKERS:]]}
    cluster = tf.train.ClusterSpec(cluster_dict)
    children, servers = [], []
    if args.tasks == "processes":
        children = start_task_processes(cluster_dict)
    else:  # the tutorial's create_in_process_cluster
        servers = [make_server(tf, cluster, job, i) for job in ("worker", "ps")
                   for i in range(len(cluster_dict[job]))]
    try:
        measure(tf, args, cluster)
    finally:
        stop_task_processes(children)
    del servers  # kept alive until here: the in-process cluster lives as long as these objects


def measure(tf, args, cluster):
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(cluster, rpc_layer="grpc")
    strategy = tf.distribute.ParameterServerStrategy(
        resolver,
        variable_partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner(PS))
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)

    def troupe_initial(partition_shape=(ROWS, DIM), partition_offset=(0, 0)):
        # Called once per part with the part's shape and offset, on the ps that holds it: only
        # the part's rows are built, nothing travels from the coordinator.
        rows, first = partition_shape[0], partition_offset[0]
        row = tf.range(first, first + rows, dtype=tf.int64)[:, None]
        flat = row * DIM + tf.range(DIM, dtype=tf.int64)[None, :]
        return tf.cast((flat * 7919) % 1000, tf.float32) / tf.constant(1000, tf.float32)

    with strategy.scope():
        embedding = tf.Variable(initial_value=troupe_initial, shape=(ROWS, DIM),
                                dtype=tf.float32, name="embedding")
    parts = [v.shape[0] for v in embedding.variables]
    if len(parts) != PS or sum(parts) != ROWS:
        raise RuntimeError(f"tf_ps: the embedding was split into {parts}, not {PS} parts of "
                           f"{ROWS} rows")
    check_initial_rows(tf, embedding)

    def one_step():
        ids = tf.random.uniform([IDS_PER_STEP], maxval=ROWS, dtype=tf.int64)
        with tf.GradientTape() as tape:
            looked_up = tf.nn.embedding_lookup(embedding, ids)
            loss = 0.5 * tf.reduce_sum(tf.square(looked_up)) / IDS_PER_STEP
        for part, grad in zip(embedding.variables, tape.gradient(loss, embedding.variables)):
            if not isinstance(grad, tf.IndexedSlices):
                raise TypeError(f"tf_ps: the gradient of {part.name} is dense ({type(grad)}): "
                                "the step would update every row")
            part.scatter_sub(tf.IndexedSlices(LEARNING_RATE * grad.values, grad.indices,
                                              grad.dense_shape))
        return loss

    k = args.steps_per_function

    @tf.function
    def steps():
        def replica_fn():
            if k == 1:
                return one_step()
            total = tf.constant(0.0)
            for _ in tf.range(k):  # a while loop on the worker; each step sees the last's update
                total += one_step()
            return total / k
        return strategy.run(replica_fn)

    for _ in range(args.warmup_steps // k):
        coordinator.schedule(steps)
    coordinator.join()
    timed_functions = WORKERS * args.steps_per_worker // k
    start = time.perf_counter()
    results = [coordinator.schedule(steps) for _ in range(timed_functions)]
    coordinator.join()
    seconds = time.perf_counter() - start
    losses = [float(r.fetch()) for r in results]
    print(json.dumps(summarize(args.steps_per_worker, k, seconds, losses, tf.__version__,
                               worker_inter_op_threads() or os.cpu_count(), args.tasks)),
          flush=True)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.serve:
        serve(args)
    elif args.in_namespace:
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        run_cluster(args)
    else:
        os.execvp("unshare", ["unshare", "-n", "--", sys.executable, os.path.abspath(__file__),
                              "--in-namespace", "--steps-per-worker", str(args.steps_per_worker),
                              "--warmup-steps", str(args.warmup_steps),
                              "--steps-per-function", str(args.steps_per_function),
                              "--tasks", args.tasks])


if __name__ == "__main__":
    main()
