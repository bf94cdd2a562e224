"""Checks that troupe_data.py rebuilds troupe's numbers exactly (run by bench/run-all first).

The digests are of troupe's own output for seed 42 (core/data/synthetic.cpp and
Tensor::random_uniform, dumped through libtroupe_core): the first 1000 examples of the MLP's
synthetic_classification (features float32 [1000, 784], labels int64) and the Glorot kernels of
the 784-256-10 MLP (layer 0, then layer 1). Run: python3 bench/peers/test_troupe_data.py"""
import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import troupe_data  # noqa: E402

FEATURES_SHA256 = "1bf16fdd7c580533116764248fff37d40a4462e54a6d3a13f4f207cfad7c2c61"
LABELS_SHA256 = "a86dae6629a7cb593738c5409d2fd88c081f11852cddeeff68787239b9f89d4c"
KERNELS_SHA256 = "9d378de3f1be92f4a798d3cd0aed415b52c3e50bbe316c1278a76d9a156a9814"


def sha(data):
    return hashlib.sha256(data).hexdigest()


def main():
    failures = []
    # Random123's known answer for philox4x32-10, counter 0, key 0 (tests/core/tensor_test.cpp).
    block = [int(w[0]) for w in troupe_data.philox_blocks(0, 0, [0])]
    if block != [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]:
        failures.append("philox4x32-10 known answer: got " + ", ".join(hex(w) for w in block))
    x, y = troupe_data.synthetic_classification(42, 0, 1000, 784, 10)
    if sha(x.tobytes()) != FEATURES_SHA256:
        failures.append("synthetic_classification features (seed 42, 1000 x 784) differ from "
                        "troupe's: sha256 " + sha(x.tobytes()))
    if sha(y.tobytes()) != LABELS_SHA256:
        failures.append("synthetic_classification labels differ from troupe's: sha256 " +
                        sha(y.tobytes()))
    p = troupe_data.mlp_initial_weights([784, 256, 10], 42)
    kernels = p[0].tobytes() + p[2].tobytes()
    if sha(kernels) != KERNELS_SHA256 or p[1].any() or p[3].any():
        failures.append("MLP initial weights differ from troupe's: kernels sha256 " + sha(kernels))
    # A slice from the middle equals the same rows of a fill from 0 (element i depends on i only).
    xs, ys = troupe_data.synthetic_classification(42, 997, 3, 784, 10)
    if xs.tobytes() != x[997:].tobytes() or ys.tobytes() != y[997:].tobytes():
        failures.append("examples 997..999 generated alone differ from the same rows of 0..999")
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    if failures:
        sys.exit(1)
    print("troupe_data: Philox, synthetic_classification and Glorot kernels match troupe's")


if __name__ == "__main__":
    main()
