"""The data and initial weights of troupe's MLP experiment, rebuilt bit for bit in numpy.

troupe generates both from Philox4x32-10 (core/random.cpp): element i of a stream depends only on
(seed, stream, i). This module ports the generator and the float32 Box-Muller of
Philox::fill_normal operation by operation (numpy float32 arithmetic is IEEE single precision,
rounded after every operation, as troupe's random.cpp compiled with -ffp-contract=off), so the
features, labels and Glorot-uniform kernels equal troupe's exactly and every peer trains on the
same numbers as `troupe run`:

  - synthetic_classification (core/data/synthetic.cpp): class means 3.0 * normal(i) on stream 11
    (double Box-Muller), label bits(i) % classes on stream 12, features fill_normal on stream 13
    plus the label's mean;
  - glorot_uniform (train/dense_models.cpp): kernel of layer l from seed + 2 l, stream 0,
    low + (high - low) * uniform_float(i); biases zero.
"""

import math
import os

import numpy as np

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK32 = np.uint64(0xFFFFFFFF)


def philox_blocks(seed, stream, counters):
    """Philox4x32-10 blocks for uint64 `counters`: four uint32 arrays (Philox::block)."""
    counters = np.asarray(counters, dtype=np.uint64)
    c0 = counters & MASK32
    c1 = counters >> np.uint64(32)
    c2 = np.full_like(c0, stream & 0xFFFFFFFF)
    c3 = np.full_like(c0, stream >> 32)
    k0, k1 = seed & 0xFFFFFFFF, seed >> 32
    for _ in range(10):
        p0 = M0 * c0  # 32 x 32 -> 64 bits, exact in uint64
        p1 = M1 * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0), p1 & MASK32,
                          (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1), p0 & MASK32)
        k0 = (k0 + W0) & 0xFFFFFFFF
        k1 = (k1 + W1) & 0xFFFFFFFF
    return [c.astype(np.uint32) for c in (c0, c1, c2, c3)]


def philox_bits(seed, stream, indices):
    """Philox::bits: word index % 4 of block index / 4."""
    indices = np.asarray(indices, dtype=np.uint64)
    words = np.stack(philox_blocks(seed, stream, indices // np.uint64(4)))
    return words[(indices % np.uint64(4)).astype(np.int64), np.arange(indices.size)]


def uniform_float(seed, stream, indices):
    """Philox::uniform_float: 24 random bits in [0, 1)."""
    return (philox_bits(seed, stream, indices) >> 8).astype(np.float32) * np.float32(2.0**-24)


def normal_double(seed, stream, indices):
    """Philox::normal: double Box-Muller on the block `index` (two 53-bit uniforms)."""
    b = philox_blocks(seed, stream, indices)
    hi = (b[0].astype(np.uint64) << np.uint64(32) | b[1].astype(np.uint64)) >> np.uint64(11)
    lo = (b[2].astype(np.uint64) << np.uint64(32) | b[3].astype(np.uint64)) >> np.uint64(11)
    u1 = (hi.astype(np.float64) + 1.0) * (1.0 / 9007199254740992.0)
    u2 = lo.astype(np.float64) * (1.0 / 9007199254740992.0)
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(6.283185307179586 * u2)


def _f(x):
    return np.float32(x)


def _log_unit(m):
    """random_math::log_unit: Cephes logf of m * 2^-24, m uint32 in [1, 2^24]."""
    bits = m.astype(np.int32).astype(np.float32).view(np.uint32)
    e = (bits >> 23).astype(np.int32) - 126 - 24
    mantissa = bits & np.uint32(0x007FFFFF)
    low = mantissa < np.uint32(0x003504F3)
    e = np.where(low, e - 1, e)
    x = (mantissa | np.where(low, np.uint32(0x3F800000), np.uint32(0x3F000000))).view(
        np.float32) - _f(1.0)
    z = x * x
    y = np.full_like(x, _f(7.0376836292e-2))
    for c in (-1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
              -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1):
        y = y * x + _f(c)
    y = y * x * z
    fe = e.astype(np.float32)
    y = y + _f(-2.12194440e-4) * fe
    y = y - _f(0.5) * z
    x = x + y
    return x + _f(0.693359375) * fe


def _sincos_quarter(x):
    """random_math::sincos_quarter: Cephes sinf / cosf polynomials on [-pi/4, pi/4]."""
    z = x * x
    ps = np.full_like(x, _f(-1.9515295891e-4))
    ps = ps * z + _f(8.3321608736e-3)
    ps = ps * z - _f(1.6666654611e-1)
    s = ps * z * x + x
    pc = np.full_like(x, _f(2.443315711809948e-5))
    pc = pc * z - _f(1.388731625493765e-3)
    pc = pc * z + _f(4.166664568298827e-2)
    c = pc * z * z - _f(0.5) * z + _f(1.0)
    return s, c


_QUARTER_TURN_STEP = _f(1.5707963267948966 / 4194304.0)


def _normal_pair(radius, angle):
    """random_math::normal_pair: (r cos t, r sin t) of two uint32 words."""
    r = np.sqrt(_f(-2.0) * _log_unit((radius >> 8) + np.uint32(1)))
    q = angle >> 30
    k = ((angle >> 8) & np.uint32(0x3FFFFF)).astype(np.int32) - 0x200000
    a = (k.astype(np.float32) + _f(0.5)) * _QUARTER_TURN_STEP
    s, c = _sincos_quarter(a)
    odd = (q & 1).astype(bool)
    cos_t = np.where(odd, s, c).view(np.uint32) ^ (((q + np.uint32(1)) & np.uint32(2)) << 30)
    sin_t = np.where(odd, c, s).view(np.uint32) ^ ((q & np.uint32(2)) << 30)
    return r * cos_t.view(np.float32), r * sin_t.view(np.float32)


def fill_normal(seed, stream, first, n):
    """Philox::fill_normal: float32 normals of elements [first, first + n)."""
    first_block, last_block = first // 4, (first + n + 3) // 4
    b = philox_blocks(seed, stream, np.arange(first_block, last_block, dtype=np.uint64))
    x0, y0 = _normal_pair(b[0], b[1])
    x1, y1 = _normal_pair(b[2], b[3])
    out = np.stack([x0, y0, x1, y1], axis=1).reshape(-1)
    return out[first - 4 * first_block:first - 4 * first_block + n]


# core/data/synthetic.cpp's Philox streams.
STREAM_MEANS, STREAM_LABELS, STREAM_FEATURES = 11, 12, 13


def synthetic_classification(seed, first, count, features, classes, separation=3.0):
    """Examples [first, first + count): (float32 [count, features], int64 [count])."""
    means = (separation * normal_double(seed, STREAM_MEANS, np.arange(classes * features))).astype(
        np.float32).reshape(classes, features)
    idx = np.arange(first, first + count, dtype=np.uint64)
    labels = (philox_bits(seed, STREAM_LABELS, idx) % np.uint32(classes)).astype(np.int64)
    x = fill_normal(seed, STREAM_FEATURES, first * features, count * features).reshape(
        count, features)
    return x + means[labels], labels


def glorot_uniform(fan_in, fan_out, seed):
    """train/dense_models.cpp glorot_uniform, float32 [fan_in, fan_out]."""
    limit = math.sqrt(6.0 / float(fan_in + fan_out))
    u = uniform_float(seed, 0, np.arange(fan_in * fan_out)).astype(np.float64)
    return (-limit + (limit - -limit) * u).astype(np.float32).reshape(fan_in, fan_out)


def mlp_initial_weights(widths, seed):
    """[kernel_0, bias_0, kernel_1, bias_1, ...] as troupe's DenseStack::initial_parameters."""
    params = []
    for l in range(len(widths) - 1):
        params.append(glorot_uniform(widths[l], widths[l + 1], seed + 2 * l))
        params.append(np.zeros(widths[l + 1], dtype=np.float32))
    return params


def mlp_workload(spec, cache_dir=None):
    """Features, labels and initial weights of `spec` (see mlp_spec.json), cached as .npz."""
    steps, batch = spec["warmup_steps"] + spec["timed_steps"], spec["global_batch"]
    count = steps * batch
    if count > spec["examples"]:
        raise ValueError(f"mlp spec: {steps} steps x {batch} exceed examples={spec['examples']}: "
                         "troupe would wrap around the data set, the peers would not")
    widths = [spec["input_dim"]] + spec["hidden"] + [spec["classes"]]
    path = None
    if cache_dir:
        os.makedirs(cache_dir, exist_ok=True)
        path = os.path.join(cache_dir, "mlp-seed{}-{}x{}-{}.npz".format(
            spec["seed"], count, "-".join(map(str, widths)), spec.get("data_version", 1)))
        if os.path.exists(path):
            z = np.load(path)
            return z["x"], z["y"], [z[f"p{i}"] for i in range(2 * (len(widths) - 1))]
    x, y = synthetic_classification(spec["seed"], 0, count, spec["input_dim"], spec["classes"])
    params = mlp_initial_weights(widths, spec["seed"])
    if path:
        tmp = path + ".tmp.npz"
        np.savez(tmp, x=x, y=y, **{f"p{i}": p for i, p in enumerate(params)})
        os.replace(tmp, path)
    return x, y, params
