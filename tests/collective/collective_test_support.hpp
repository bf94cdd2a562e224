#pragma once
// Helpers shared by the collective tests: a plain-loop reduce function (the kernels layer is not
// linked here), Gloo-style closed-form inputs, and a one-call way to run an algorithm N times.

#include <memory>
#include <string>
#include <vector>

#include "core/collective/algorithm_choice.hpp"
#include "core/collective/collective_algorithm.hpp"
#include "core/collective/local_driver.hpp"
#include "core/tensor.hpp"

namespace troupe::testing {

/// dst[i] += src[i], one plain loop per dtype.
inline void add_loop(void* dst, const void* src, DType dtype, int64_t count) {
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* d = static_cast<T*>(dst);
    const T* s = static_cast<const T*>(src);
    for (int64_t i = 0; i < count; ++i) d[i] += s[i];
  });
}

/// dst[i] = a[i] + b[i] with no __restrict assumptions (dst may be a or b): a ReduceIntoFn.
inline void add_into_loop(void* dst, const void* a, const void* b, DType dtype, int64_t count) {
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    for (int64_t i = 0; i < count; ++i)
      static_cast<T*>(dst)[i] = static_cast<const T*>(a)[i] + static_cast<const T*>(b)[i];
  });
}

/// Rank r's element i: (r + 1) + (i % 1013); integers small enough to be exact in float32.
inline double closed_form_input(int rank, int64_t i) { return double(rank + 1) + double(i % 1013); }
/// Sum over n ranks of closed_form_input: n(n+1)/2 + n * (i % 1013).
inline double closed_form_sum(int n, int64_t i) {
  return n * (n + 1) / 2.0 + double(n) * double(i % 1013);
}

/// Rank `rank`'s input of `count` elements of `dtype`, shaped [count].
inline Tensor closed_form_tensor(DType dtype, int rank, int64_t count) {
  Tensor t(dtype, Shape{count});
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* p = t.data<T>();
    for (int64_t i = 0; i < count; ++i) p[i] = T(closed_form_input(rank, i));
  });
  return t;
}

/// Element i of `t` as a double.
inline double element(const Tensor& t, int64_t i) {
  return dispatch_dtype(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    return double(t.data<T>()[i]);
  });
}

/// One instance per rank of algorithm `kind` for the given shape of collective.
inline std::vector<std::unique_ptr<CollectiveAlgorithm>> make_peers(CrossDeviceOpKind kind, int n,
                                                                    DType dtype, int64_t count,
                                                                    int64_t chunk_bytes,
                                                                    int root = 0,
                                                                    int64_t tensor_index = 0) {
  std::vector<std::unique_ptr<CollectiveAlgorithm>> peers;
  for (int r = 0; r < n; ++r) {
    CollectiveSpec spec;
    spec.rank = r;
    spec.group_size = n;
    spec.dtype = dtype;
    spec.count = count;
    spec.chunk_bytes = chunk_bytes;
    spec.instance = 7;
    spec.reduce = &add_loop;
    spec.root = root;
    spec.tensor_index = tensor_index;
    peers.push_back(make_collective(kind, spec));
  }
  return peers;
}

}  // namespace troupe::testing
