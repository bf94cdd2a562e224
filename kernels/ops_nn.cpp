// Ops: matmul, bias_add, softmax cross-entropy.

#include "kernels/ops.hpp"
#include "kernels/ops_checks.hpp"

namespace troupe {

namespace {
std::string flag(bool b) { return b ? "true" : "false"; }
}  // namespace

void Ops::matmul(const Tensor& a, const Tensor& b, Tensor& out, bool transpose_a, bool transpose_b,
                 double alpha, double beta) const {
  auto device = checks::common_device("matmul", {{"a", a}, {"b", b}, {"out", out}});
  checks::rank_is("matmul", {"a", a}, 2);
  checks::rank_is("matmul", {"b", b}, 2);
  checks::same_dtype("matmul", {"a", a}, {"b", b});
  checks::same_dtype("matmul", {"a", a}, {"out", out});
  const int64_t m = transpose_a ? a.shape()[1] : a.shape()[0];
  const int64_t k = transpose_a ? a.shape()[0] : a.shape()[1];
  const int64_t kb = transpose_b ? b.shape()[1] : b.shape()[0];
  const int64_t n = transpose_b ? b.shape()[0] : b.shape()[1];
  if (k != kb)
    throw invalid_argument("matmul: inner dimensions differ: a " + a.description() +
                           " (transpose_a=" + flag(transpose_a) + ") and b " + b.description() +
                           " (transpose_b=" + flag(transpose_b) + ")");
  checks::shape_is("matmul", {"out", out}, Shape{m, n},
                   "for a " + a.description() + " and b " + b.description());
  MatmulArgs x;
  x.dtype = a.dtype(), x.m = m, x.n = n, x.k = k;
  x.a = a.raw_data(), x.b = b.raw_data(), x.c = out.raw_data();
  x.transpose_a = transpose_a, x.transpose_b = transpose_b, x.alpha = alpha, x.beta = beta;
  x.ctx = gpu_;
  kernel<MatmulArgs>("matmul", device, a.dtype())(x);
}

void Ops::bias_add(const Tensor& value, const Tensor& bias, Tensor& out) const {
  auto device = checks::common_device("bias_add", {{"value", value}, {"bias", bias}, {"out", out}});
  if (value.shape().rank() < 1)
    throw invalid_argument("bias_add: value " + value.description() + " must have rank >= 1");
  checks::rank_is("bias_add", {"bias", bias}, 1);
  checks::same_dtype("bias_add", {"value", value}, {"bias", bias});
  const int64_t cols = value.shape()[value.shape().rank() - 1];
  if (bias.shape()[0] != cols)
    throw invalid_argument("bias_add: bias " + bias.description() +
                           " must match the last dimension of value " + value.description());
  checks::same_layout("bias_add", {"value", value}, {"out", out});
  RowsArgs x;
  x.dtype = value.dtype(), x.cols = cols, x.rows = cols ? value.num_elements() / cols : 0;
  x.a = value.raw_data(), x.b = bias.raw_data(), x.out = out.raw_data(), x.ctx = gpu_;
  kernel<RowsArgs>("bias_add", device, value.dtype())(x);
}

void Ops::bias_add_grad(const Tensor& grad, Tensor& out) const {
  auto device = checks::common_device("bias_add_grad", {{"grad", grad}, {"out", out}});
  if (grad.shape().rank() < 1)
    throw invalid_argument("bias_add_grad: grad " + grad.description() + " must have rank >= 1");
  checks::same_dtype("bias_add_grad", {"grad", grad}, {"out", out});
  const int64_t cols = grad.shape()[grad.shape().rank() - 1];
  checks::shape_is("bias_add_grad", {"out", out}, Shape{cols}, "for grad " + grad.description());
  RowsArgs x;
  x.dtype = grad.dtype(), x.cols = cols, x.rows = cols ? grad.num_elements() / cols : 0;
  x.a = grad.raw_data(), x.out = out.raw_data(), x.ctx = gpu_;
  kernel<RowsArgs>("bias_add_grad", device, grad.dtype())(x);
}

void Ops::softmax_cross_entropy(const Tensor& logits, const Tensor& labels, Tensor& loss,
                                Tensor& grad) const {
  const char* op = "softmax_cross_entropy";
  auto device = checks::common_device(
      op, {{"logits", logits}, {"labels", labels}, {"loss", loss}, {"grad", grad}});
  checks::rank_is(op, {"logits", logits}, 2);
  checks::rank_is(op, {"labels", labels}, 1);
  checks::is_index(op, {"labels", labels});
  const int64_t rows = logits.shape()[0], classes = logits.shape()[1];
  if (labels.shape()[0] != rows)
    throw invalid_argument(std::string(op) + ": labels " + labels.description() +
                           " must have one label per row of logits " + logits.description());
  if (classes == 0 && rows > 0)
    throw invalid_argument(std::string(op) + ": logits " + logits.description() +
                           " must have at least one class");
  checks::same_layout(op, {"logits", logits}, {"grad", grad});
  checks::same_dtype(op, {"logits", logits}, {"loss", loss});
  checks::shape_is(op, {"loss", loss}, Shape{rows}, "for logits " + logits.description());
  SoftmaxXentArgs x;
  x.dtype = logits.dtype(), x.label_dtype = labels.dtype(), x.rows = rows, x.classes = classes;
  x.logits = logits.raw_data(), x.labels = labels.raw_data();
  x.loss = loss.raw_data(), x.grad = grad.raw_data(), x.ctx = gpu_;
  kernel<SoftmaxXentArgs>(op, device, logits.dtype())(x);
}

SoftmaxXent Ops::softmax_cross_entropy(const Tensor& logits, const Tensor& labels) const {
  if (!logits.defined())
    throw invalid_argument("softmax_cross_entropy: logits is an undefined tensor");
  const int64_t rows = logits.shape().rank() > 0 ? logits.shape()[0] : 0;
  SoftmaxXent result{Tensor(logits.dtype(), Shape{rows}), Tensor(logits.dtype(), logits.shape())};
  softmax_cross_entropy(logits, labels, result.loss, result.grad);
  return result;
}

}  // namespace troupe
