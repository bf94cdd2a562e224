#pragma once
// A classification batch's logged statistics computed on the GPU: the sum of the per-example
// losses and the number of correct argmax predictions. Without it every step copied the loss of
// each example, the logits and the labels to the host (three copies, each waiting for the
// device) to add up two numbers.

#include "core/tensor.hpp"

namespace troupe {

struct ClassificationStats {
  double loss_sum = 0;  ///< sum of the per-example losses, in double
  int64_t correct = 0;  ///< rows whose first largest logit is at the label
};

/// `loss` [n] and `logits` [n, classes] (float32 or float64, one dtype), `labels` [n] (int32 or
/// int64), all in the memory of one GPU. One single-block kernel on the GPU's legacy default
/// stream (after the replicas' work there) sums in a fixed order, so the result does not vary
/// between runs; one 16-byte copy back. A label outside [0, classes) counts as wrong. Throws
/// invalid_argument naming the tensor that does not fit.
ClassificationStats gpu_classification_stats(const Tensor& loss, const Tensor& logits,
                                             const Tensor& labels);

}  // namespace troupe
