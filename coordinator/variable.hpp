#pragma once
// A plain variable: a named, device-placed tensor that is updated in place. It is the component
// type of distributed variables and what update() hands to its per-component function.
// Reads return the live tensor handle without copying; the first write after a read that is still
// held copies first (copy-on-write), so a value that was read never changes under its reader —
// TensorFlow's "identity copy" semantics at the cost of a copy only when it matters. A variable on
// a GPU device keeps its value in that GPU's memory.

#include <memory>
#include <string>

#include "core/tensor.hpp"
#include "kernels/ops.hpp"

namespace troupe {

/// One tensor-valued variable.
class Variable {
 public:
  Variable(std::string name, std::string device, Tensor initial,
           std::shared_ptr<const KernelRegistry> kernels);

  const std::string& name() const { return name_; }
  const std::string& device() const { return device_; }
  DType dtype() const { return value_.dtype(); }
  const Shape& shape() const { return value_.shape(); }

  /// The current value (no copy; later writes do not change it).
  Tensor read() const { return value_; }
  /// value = x; x must have the variable's dtype and shape.
  void assign(const Tensor& x);
  void assign_add(const Tensor& x);
  void assign_sub(const Tensor& x);
  /// Row updates: value[indices[i]] = / += / -= rows[i] (indices rank 1 int32/int64).
  void scatter_update(const Tensor& indices, const Tensor& rows);
  void scatter_add(const Tensor& indices, const Tensor& rows);
  void scatter_sub(const Tensor& indices, const Tensor& rows);

  /// The storage to update in place (copied first if a reader still holds it); for kernels
  /// such as optimizer updates.
  Tensor& mutable_value();
  /// Ops for this variable's kernels; for a GPU variable it first makes that GPU current.
  Ops ops() const;

 private:
  void check_value(const Tensor& x, const char* op) const;
  /// `x` in this variable's memory (a host value assigned to a GPU variable is copied over).
  Tensor local(const Tensor& x) const;

  std::string name_;
  std::string device_;
  Tensor value_;
  std::shared_ptr<const KernelRegistry> kernels_;
};

}  // namespace troupe
