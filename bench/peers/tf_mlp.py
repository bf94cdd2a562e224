"""TensorFlow peer: the MLP of mlp_spec.json, without a strategy or with MirroredStrategy over
two logical CPUs, as the TensorFlow guide "Custom training with tf.distribute.Strategy" writes it
(Keras layers and SGD, tf.function running `window` steps per call like Keras' steps_per_execution,
the loss scaled by tf.nn.compute_average_loss). Prints one JSON object.

Threads as TensorFlow's performance guide recommends for CPU: intra-op = the cores one replica
has, inter-op = the replicas that run at once. oneDNN is on (TF_ENABLE_ONEDNN_OPTS=1, TensorFlow's
x86 default since 2.9, set explicitly)."""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import troupe_data  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["single", "mirrored"], required=True)
    ap.add_argument("--spec", required=True)
    ap.add_argument("--cache", default=None)
    args = ap.parse_args()
    spec = json.load(open(args.spec))
    cores = os.cpu_count()
    replicas = 2 if args.mode == "mirrored" else 1
    intra, inter = max(1, cores // replicas), replicas
    tf.config.threading.set_intra_op_parallelism_threads(intra)
    tf.config.threading.set_inter_op_parallelism_threads(inter)
    if args.mode == "mirrored":
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(replicas)])
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    else:
        strategy = tf.distribute.get_strategy()  # the default (no) strategy

    x, y, params = troupe_data.mlp_workload(spec, args.cache)
    batch, window = spec["global_batch"], spec["window"]
    steps = spec["warmup_steps"] + spec["timed_steps"]
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch, drop_remainder=True).prefetch(
        tf.data.AUTOTUNE)
    with strategy.scope():
        model = tf.keras.Sequential([
            tf.keras.Input(shape=(spec["input_dim"],)),
            *[tf.keras.layers.Dense(h, activation="relu") for h in spec["hidden"]],
            tf.keras.layers.Dense(spec["classes"]),
        ])
        model.set_weights(params)
        optimizer = tf.keras.optimizers.SGD(learning_rate=spec["learning_rate"])
    dist = strategy.experimental_distribute_dataset(ds) if args.mode == "mirrored" else ds
    iterator = iter(dist)

    def step(inputs):
        features, labels = inputs
        with tf.GradientTape() as tape:
            logits = model(features, training=True)
            per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=batch)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def train_window(it):
        losses = tf.TensorArray(tf.float32, size=window)
        for i in tf.range(window):
            per_replica = strategy.run(step, args=(next(it),))
            losses = losses.write(i, strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica,
                                                     axis=None))
        return losses.stack()

    losses = []
    for _ in range(spec["warmup_steps"] // window):
        losses.extend(train_window(iterator).numpy().tolist())
    calls = spec["timed_steps"] // window
    start = time.perf_counter()
    timed = [train_window(iterator) for _ in range(calls)]
    timed = [t.numpy() for t in timed]
    seconds = time.perf_counter() - start
    for t in timed:
        losses.extend(t.tolist())
    assert len(losses) == steps, (len(losses), steps)
    print(json.dumps({
        "peer": "tensorflow", "config": "no strategy" if args.mode == "single" else
        "MirroredStrategy, 2 logical CPUs", "replicas": replicas,
        "version": tf.__version__, "intra_op_threads": intra, "inter_op_threads": inter,
        "onednn": os.environ["TF_ENABLE_ONEDNN_OPTS"],
        "examples_per_s": spec["timed_steps"] * batch / seconds,
        "first_loss": float(np.mean(losses[:window])),
        "final_loss": float(np.mean(losses[-window:])),
        "losses": losses,
    }))


if __name__ == "__main__":
    main()
