#include "kernels/ops_checks.hpp"

namespace troupe::checks {

namespace {
std::string named(const Arg& a) { return std::string(a.name) + " " + a.tensor.description(); }
}  // namespace

KernelDevice common_device(const char* op, std::initializer_list<Arg> args) {
  const Arg* first = nullptr;
  for (const Arg& a : args) {
    if (!a.tensor.defined())
      throw invalid_argument(std::string(op) + ": " + a.name + " is an undefined tensor");
    if (first == nullptr) {
      first = &a;
    } else if (a.tensor.memory() != first->tensor.memory()) {
      throw invalid_argument(
          std::string(op) + ": " + first->name + " is on " +
          std::string(kernel_device_name(kernel_device_for(first->tensor.memory()))) + " but " +
          a.name + " is on " +
          std::string(kernel_device_name(kernel_device_for(a.tensor.memory()))));
    }
  }
  return first ? kernel_device_for(first->tensor.memory()) : KernelDevice::cpu;
}

void same_layout(const char* op, Arg a, Arg b) {
  if (a.tensor.dtype() != b.tensor.dtype() || a.tensor.shape() != b.tensor.shape())
    throw invalid_argument(std::string(op) + ": " + named(a) + " and " + named(b) +
                           " must have the same dtype and shape");
}

void same_dtype(const char* op, Arg a, Arg b) {
  if (a.tensor.dtype() != b.tensor.dtype())
    throw invalid_argument(std::string(op) + ": " + named(a) + " and " + named(b) +
                           " must have the same dtype");
}

void rank_is(const char* op, Arg t, size_t rank) {
  if (t.tensor.shape().rank() != rank)
    throw invalid_argument(std::string(op) + ": " + named(t) + " must have rank " +
                           std::to_string(rank));
}

void is_index(const char* op, Arg t) {
  if (t.tensor.dtype() != DType::int32 && t.tensor.dtype() != DType::int64)
    throw invalid_argument(std::string(op) + ": " + named(t) + " must be int32 or int64");
}

void shape_is(const char* op, Arg t, const Shape& shape, const std::string& why) {
  if (t.tensor.shape() != shape)
    throw invalid_argument(std::string(op) + ": " + named(t) + " must have shape " +
                           shape.to_string() + " " + why);
}

}  // namespace troupe::checks
