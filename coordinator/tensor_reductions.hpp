#pragma once
// Host-side helpers for Strategy::reduce with an axis: sum one dimension away, scale, divide.

#include "core/tensor.hpp"
#include "kernels/ops.hpp"

namespace troupe {

/// The pieces of a mean over one axis: the sum over that axis and the axis length.
struct AxisSum {
  Tensor numerator;
  int64_t denominator = 0;
};

/// Sums dimension `axis` (negative counts from the end) away; invalid_argument outside
/// [-rank, rank).
AxisSum sum_over_axis(const Ops& ops, const Tensor& t, int axis);
/// t * factor in a new tensor (integer dtypes multiply exactly).
Tensor scaled(const Ops& ops, const Tensor& t, double factor);
/// t / denominator in a new tensor (integer dtypes divide truncating).
Tensor divided(const Ops& ops, const Tensor& t, int64_t denominator);

}  // namespace troupe
