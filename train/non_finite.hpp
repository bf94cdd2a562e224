#pragma once
// What a training step does when its loss or gradients are not finite (Keras' TerminateOnNaN):
// the experiment key `train.on_nan`. One NaN example otherwise poisons every parameter through
// the all-reduce, and the run goes on writing NaN checkpoints.

#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "train/model.hpp"

namespace troupe {

/// stop: the step throws naming the step and the replica(s), nothing applied (the default);
/// skip_step: no replica applies the step's update, the optimizer counts it; ignore: applied.
enum class OnNonFinite { stop, skip_step, ignore };

/// "stop", "skip_step", "ignore"; invalid_argument naming the text otherwise.
OnNonFinite parse_on_non_finite(const std::string& text);
/// The name parse_on_non_finite reads.
const char* on_non_finite_name(OnNonFinite policy);

/// True when no element of `t` is NaN or infinite (integer tensors always are). A GPU tensor is
/// copied to the host first. A view of a buffer known to be all finite (Buffer::finiteness, set
/// by the in-process all-reduce as it wrote the sum) answers without reading the bytes.
bool all_finite(const Tensor& t);
/// all_finite of every gradient's values.
bool all_finite(const std::vector<Gradient>& grads);
/// all_finite of every tensor.
bool all_finite(const std::vector<Tensor>& tensors);

}  // namespace troupe
