#include "coordinator/variable.hpp"

namespace troupe {

Variable::Variable(std::string name, std::string device, Tensor initial,
                   std::shared_ptr<const KernelRegistry> kernels)
    : name_(std::move(name)), device_(std::move(device)), kernels_(std::move(kernels)) {
  if (!initial.defined())
    throw invalid_argument("variable '" + name_ + "': undefined initial value");
  if (!kernels_) throw invalid_argument("variable '" + name_ + "': no kernel registry");
  value_ = initial.clone();  // the variable owns its storage; the caller's tensor stays untouched
}

void Variable::check_value(const Tensor& x, const char* op) const {
  if (!x.defined())
    throw invalid_argument(std::string(op) + " of variable '" + name_ + "': undefined value");
  if (x.dtype() != value_.dtype() || x.shape() != value_.shape())
    throw invalid_argument(std::string(op) + " of variable '" + name_ + "' (" +
                           value_.description() + ") with a value of " + x.description());
}

Tensor& Variable::mutable_value() {
  if (value_.buffer().use_count() > 1) value_ = value_.clone();
  return value_;
}

void Variable::assign(const Tensor& x) {
  check_value(x, "assign");
  if (x.shares_buffer_with(value_) && x.offset() == value_.offset()) return;
  // A fresh buffer beats copy-on-write then copy: one copy either way, no aliasing question.
  if (value_.buffer().use_count() > 1) {
    value_ = x.clone();
    return;
  }
  ops().copy(x, value_);
}

void Variable::assign_add(const Tensor& x) {
  check_value(x, "assign_add");
  Tensor& v = mutable_value();
  ops().add(v, x, v);
}

void Variable::assign_sub(const Tensor& x) {
  check_value(x, "assign_sub");
  Tensor& v = mutable_value();
  ops().sub(v, x, v);
}

void Variable::scatter_update(const Tensor& indices, const Tensor& rows) {
  ops().scatter_update_rows(indices, rows, mutable_value());
}

void Variable::scatter_add(const Tensor& indices, const Tensor& rows) {
  ops().scatter_add_rows(indices, rows, mutable_value());
}

void Variable::scatter_sub(const Tensor& indices, const Tensor& rows) {
  ops().scatter_sub_rows(indices, rows, mutable_value());
}

}  // namespace troupe
