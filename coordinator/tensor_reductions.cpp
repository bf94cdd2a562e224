#include "coordinator/tensor_reductions.hpp"

namespace troupe {

AxisSum sum_over_axis(const Ops& ops, const Tensor& t, int axis) {
  const int rank = int(t.shape().rank());
  if (axis < -rank || axis >= rank)
    throw invalid_argument("reduce: axis " + std::to_string(axis) + " is outside [" +
                           std::to_string(-rank) + ", " + std::to_string(rank) +
                           ") for a value of shape " + t.shape().to_string());
  if (axis < 0) axis += rank;
  const auto& dims = t.shape().dims();
  int64_t outer = 1, inner = 1, len = dims[size_t(axis)];
  for (int i = 0; i < axis; ++i) outer *= dims[size_t(i)];
  for (int i = axis + 1; i < rank; ++i) inner *= dims[size_t(i)];
  std::vector<int64_t> out_dims;
  for (int i = 0; i < rank; ++i)
    if (i != axis) out_dims.push_back(dims[size_t(i)]);
  Tensor out = Tensor::zeros(t.dtype(), Shape(out_dims));
  dispatch_dtype(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = t.data<T>();
    T* o = out.data<T>();
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t k = 0; k < len; ++k)
        for (int64_t b = 0; b < inner; ++b) o[a * inner + b] += in[(a * len + k) * inner + b];
  });
  (void)ops;
  return {out, len};
}

Tensor scaled(const Ops& ops, const Tensor& t, double factor) {
  Tensor out(t.dtype(), t.shape());
  if (is_floating(t.dtype())) {
    ops.scale(t, factor, out);
    return out;
  }
  dispatch_dtype(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    for (int64_t i = 0; i < t.num_elements(); ++i) out.data<T>()[i] = T(t.data<T>()[i] * T(factor));
  });
  return out;
}

Tensor divided(const Ops& ops, const Tensor& t, int64_t denominator) {
  if (denominator == 0) throw invalid_argument("reduce MEAN over an empty axis (0 elements)");
  if (is_floating(t.dtype())) return scaled(ops, t, 1.0 / double(denominator));
  Tensor out(t.dtype(), t.shape());
  dispatch_dtype(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    for (int64_t i = 0; i < t.num_elements(); ++i)
      out.data<T>()[i] = T(t.data<T>()[i] / T(denominator));
  });
  return out;
}

}  // namespace troupe
