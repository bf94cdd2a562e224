// Ops: optimizer updates, dense and sparse rows.

#include <cmath>

#include "kernels/ops.hpp"
#include "kernels/ops_checks.hpp"

namespace troupe {

namespace {
OptimizerHyper hyper(const SgdOptions& o) {
  OptimizerHyper h;
  h.lr = o.learning_rate;
  return h;
}
OptimizerHyper hyper(const MomentumOptions& o) {
  OptimizerHyper h;
  h.lr = o.learning_rate, h.momentum = o.momentum, h.nesterov = o.nesterov;
  return h;
}
OptimizerHyper hyper(const AdamOptions& o) {
  if (o.step < 1) throw invalid_argument("adam: step " + std::to_string(o.step) + " must be >= 1");
  OptimizerHyper h;
  h.lr = o.learning_rate, h.beta1 = o.beta1, h.beta2 = o.beta2, h.epsilon = o.epsilon;
  h.beta1_power = std::pow(o.beta1, double(o.step));
  h.beta2_power = std::pow(o.beta2, double(o.step));
  return h;
}
OptimizerHyper hyper(const AdagradOptions& o) {
  OptimizerHyper h;
  h.lr = o.learning_rate, h.epsilon = o.epsilon;
  return h;
}
}  // namespace

void Ops::run_optimizer(const char* op, OptimizerArgs& args, const Tensor& var) const {
  args.dtype = var.dtype(), args.count = var.num_elements(), args.ctx = gpu_;
  kernel<OptimizerArgs>(op, kernel_device_for(var.memory()), var.dtype())(args);
}

void Ops::run_sparse_optimizer(const char* op, OptimizerArgs& args, const Tensor& var,
                               const Tensor& indices, const Tensor& grad) const {
  if (var.shape().rank() < 1)
    throw invalid_argument(std::string(op) + ": var " + var.description() + " must have rank >= 1");
  checks::rank_is(op, {"indices", indices}, 1);
  checks::is_index(op, {"indices", indices});
  checks::same_dtype(op, {"var", var}, {"grad", grad});
  checks::shape_is(op, {"grad", grad}, var.shape().with_leading(indices.num_elements()),
                   "for var " + var.description() + " and indices " + indices.description());
  args.dtype = var.dtype(), args.index_dtype = indices.dtype();
  args.indices = indices.raw_data(), args.num_indices = indices.num_elements();
  args.row_elements = var.shape().row_elements(), args.table_rows = var.shape()[0];
  args.ctx = gpu_;
  kernel<OptimizerArgs>(op, kernel_device_for(var.memory()), var.dtype())(args);
}

void Ops::apply_sgd(Tensor& var, const Tensor& grad, const SgdOptions& o) const {
  checks::common_device("apply_sgd", {{"var", var}, {"grad", grad}});
  checks::same_layout("apply_sgd", {"var", var}, {"grad", grad});
  OptimizerArgs x;
  x.var = var.raw_data(), x.grad = grad.raw_data(), x.hyper = hyper(o);
  run_optimizer("apply_sgd", x, var);
}

void Ops::apply_momentum(Tensor& var, Tensor& accum, const Tensor& grad,
                         const MomentumOptions& o) const {
  const char* op = "apply_momentum";
  checks::common_device(op, {{"var", var}, {"accum", accum}, {"grad", grad}});
  checks::same_layout(op, {"var", var}, {"accum", accum});
  checks::same_layout(op, {"var", var}, {"grad", grad});
  OptimizerArgs x;
  x.var = var.raw_data(), x.slot1 = accum.raw_data(), x.grad = grad.raw_data();
  x.hyper = hyper(o);
  run_optimizer(op, x, var);
}

void Ops::apply_adam(Tensor& var, Tensor& m, Tensor& v, const Tensor& grad,
                     const AdamOptions& o) const {
  const char* op = "apply_adam";
  checks::common_device(op, {{"var", var}, {"m", m}, {"v", v}, {"grad", grad}});
  checks::same_layout(op, {"var", var}, {"m", m});
  checks::same_layout(op, {"var", var}, {"v", v});
  checks::same_layout(op, {"var", var}, {"grad", grad});
  OptimizerArgs x;
  x.var = var.raw_data(), x.slot1 = m.raw_data(), x.slot2 = v.raw_data();
  x.grad = grad.raw_data(), x.hyper = hyper(o);
  run_optimizer(op, x, var);
}

void Ops::apply_adagrad(Tensor& var, Tensor& accum, const Tensor& grad,
                        const AdagradOptions& o) const {
  const char* op = "apply_adagrad";
  checks::common_device(op, {{"var", var}, {"accum", accum}, {"grad", grad}});
  checks::same_layout(op, {"var", var}, {"accum", accum});
  checks::same_layout(op, {"var", var}, {"grad", grad});
  OptimizerArgs x;
  x.var = var.raw_data(), x.slot1 = accum.raw_data(), x.grad = grad.raw_data();
  x.hyper = hyper(o);
  run_optimizer(op, x, var);
}

void Ops::sparse_apply_sgd(Tensor& var, const Tensor& indices, const Tensor& grad,
                           const SgdOptions& o) const {
  const char* op = "sparse_apply_sgd";
  checks::common_device(op, {{"var", var}, {"indices", indices}, {"grad", grad}});
  OptimizerArgs x;
  x.var = var.raw_data(), x.grad = grad.raw_data(), x.hyper = hyper(o);
  run_sparse_optimizer(op, x, var, indices, grad);
}

void Ops::sparse_apply_momentum(Tensor& var, Tensor& accum, const Tensor& indices,
                                const Tensor& grad, const MomentumOptions& o) const {
  const char* op = "sparse_apply_momentum";
  checks::common_device(op, {{"var", var}, {"accum", accum}, {"indices", indices}, {"grad", grad}});
  checks::same_layout(op, {"var", var}, {"accum", accum});
  OptimizerArgs x;
  x.var = var.raw_data(), x.slot1 = accum.raw_data(), x.grad = grad.raw_data();
  x.hyper = hyper(o);
  run_sparse_optimizer(op, x, var, indices, grad);
}

void Ops::sparse_apply_adam(Tensor& var, Tensor& m, Tensor& v, const Tensor& indices,
                            const Tensor& grad, const AdamOptions& o) const {
  const char* op = "sparse_apply_adam";
  checks::common_device(op,
                        {{"var", var}, {"m", m}, {"v", v}, {"indices", indices}, {"grad", grad}});
  checks::same_layout(op, {"var", var}, {"m", m});
  checks::same_layout(op, {"var", var}, {"v", v});
  OptimizerArgs x;
  x.var = var.raw_data(), x.slot1 = m.raw_data(), x.slot2 = v.raw_data();
  x.grad = grad.raw_data(), x.hyper = hyper(o);
  run_sparse_optimizer(op, x, var, indices, grad);
}

void Ops::sparse_apply_adagrad(Tensor& var, Tensor& accum, const Tensor& indices,
                               const Tensor& grad, const AdagradOptions& o) const {
  const char* op = "sparse_apply_adagrad";
  checks::common_device(op, {{"var", var}, {"accum", accum}, {"indices", indices}, {"grad", grad}});
  checks::same_layout(op, {"var", var}, {"accum", accum});
  OptimizerArgs x;
  x.var = var.raw_data(), x.slot1 = accum.raw_data(), x.grad = grad.raw_data();
  x.hyper = hyper(o);
  run_sparse_optimizer(op, x, var, indices, grad);
}

}  // namespace troupe
