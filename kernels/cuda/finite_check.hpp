#pragma once
// Whether GPU tensors hold only finite values, decided on the GPU: the non-finite guard
// (train.on_nan) asks this of every step's reduced gradients, which would otherwise be copied to
// the host whole, every step.

#include <vector>

#include "core/tensor.hpp"

namespace troupe {

/// True when no element of any of `tensors` (all in the memory of one GPU) is NaN or infinite;
/// integer tensors are finite. One kernel per tensor on the GPU's legacy default stream (after
/// the replicas' work there) and one 4-byte copy back, which waits for the whole device.
bool gpu_tensors_finite(const std::vector<Tensor>& tensors);

}  // namespace troupe
