#pragma once
// The GEMM work an MLP step executes, counted from the layer widths the way train/dense_models
// runs it: per layer a forward product and a weight gradient, and an input gradient for every
// layer but the first (nothing consumes the gradient of the input features). `troupe bench
// train` divides by this, so a ratio to its limit above 1 means a wrong count.

#include <cstdint>
#include <vector>

namespace troupe {

/// One GEMM of a training step: rows x inner x cols (2 * rows * inner * cols FLOPs), with the
/// operand transposes dense_models passes to matmul (they change which kernel a library runs).
struct GemmShape {
  int64_t rows = 0, inner = 0, cols = 0;
  bool transpose_a = false, transpose_b = false;
  double flops() const { return 2.0 * double(rows) * double(inner) * double(cols); }
};

/// The GEMMs one training step of an MLP with `widths` (input, hidden..., output) runs on a
/// batch of `rows` examples, in execution order (forward, then backward from the last layer).
std::vector<GemmShape> mlp_step_gemms(const std::vector<int64_t>& widths, int64_t rows);

/// FLOPs of those GEMMs per example.
double mlp_gemm_flops_per_example(const std::vector<int64_t>& widths);

}  // namespace troupe
