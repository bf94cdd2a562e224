#pragma once
// Argument checks shared by the Ops implementation files; each throws invalid_argument whose
// message starts with the op's name and names the offending tensors. Internal to kernels/.

#include <initializer_list>
#include <string>

#include "core/tensor.hpp"
#include "kernels/registry.hpp"

namespace troupe::checks {

/// A tensor argument with the name the error messages use.
struct Arg {
  const char* name;
  const Tensor& tensor;
};

/// Every tensor is defined; returns the device they all live on (they must agree).
KernelDevice common_device(const char* op, std::initializer_list<Arg> args);
/// `a` and `b` have the same dtype and shape.
void same_layout(const char* op, Arg a, Arg b);
/// `a` and `b` have the same dtype.
void same_dtype(const char* op, Arg a, Arg b);
/// `t` has rank `rank`.
void rank_is(const char* op, Arg t, size_t rank);
/// `t` holds int32 or int64 (index or label tensors).
void is_index(const char* op, Arg t);
/// `t` has exactly `shape`; `why` ends the message (e.g. "for a [2, 3] x [3, 4] product").
void shape_is(const char* op, Arg t, const Shape& shape, const std::string& why);

}  // namespace troupe::checks
