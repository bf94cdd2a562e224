#include "coordinator/variable.hpp"

#include "coordinator/device_inventory.hpp"

namespace troupe {

Variable::Variable(std::string name, std::string device, Tensor initial,
                   std::shared_ptr<const KernelRegistry> kernels)
    : name_(std::move(name)), device_(std::move(device)), kernels_(std::move(kernels)) {
  if (!initial.defined())
    throw invalid_argument("variable '" + name_ + "': undefined initial value");
  if (!kernels_) throw invalid_argument("variable '" + name_ + "': no kernel registry");
  // The variable owns its storage on its device; the caller's tensor stays untouched.
  Tensor placed = to_device(initial, device_);
  value_ = placed.shares_buffer_with(initial) ? clone_in_place_memory(placed) : placed;
}

Ops Variable::ops() const {
  bind_device(device_);
  return Ops(*kernels_);
}

Tensor Variable::local(const Tensor& x) const {
  if (x.memory() == value_.memory() &&
      (x.memory() == MemoryKind::host ||
       x.buffer()->device_index() == value_.buffer()->device_index()))
    return x;
  return to_device(x, device_);
}

void Variable::check_value(const Tensor& x, const char* op) const {
  if (!x.defined())
    throw invalid_argument(std::string(op) + " of variable '" + name_ + "': undefined value");
  if (x.dtype() != value_.dtype() || x.shape() != value_.shape())
    throw invalid_argument(std::string(op) + " of variable '" + name_ + "' (" +
                           value_.description() + ") with a value of " + x.description());
}

Tensor& Variable::mutable_value() {
  if (value_.buffer().use_count() > 1) value_ = clone_in_place_memory(value_);
  return value_;
}

void Variable::assign(const Tensor& value) {
  check_value(value, "assign");
  Tensor x = local(value);
  if (x.shares_buffer_with(value_) && x.offset() == value_.offset()) return;
  // A fresh buffer beats copy-on-write then copy: one copy either way, no aliasing question.
  if (value_.buffer().use_count() > 1) {
    value_ = x.shares_buffer_with(value) ? clone_in_place_memory(x) : x;
    return;
  }
  ops().copy(x, value_);
}

void Variable::assign_add(const Tensor& x) {
  check_value(x, "assign_add");
  Tensor& v = mutable_value();
  ops().add(v, local(x), v);
}

void Variable::assign_sub(const Tensor& x) {
  check_value(x, "assign_sub");
  Tensor& v = mutable_value();
  ops().sub(v, local(x), v);
}

void Variable::scatter_update(const Tensor& indices, const Tensor& rows) {
  ops().scatter_update_rows(local(indices), local(rows), mutable_value());
}

void Variable::scatter_add(const Tensor& indices, const Tensor& rows) {
  ops().scatter_add_rows(local(indices), local(rows), mutable_value());
}

void Variable::scatter_sub(const Tensor& indices, const Tensor& rows) {
  ops().scatter_sub_rows(local(indices), local(rows), mutable_value());
}

}  // namespace troupe
