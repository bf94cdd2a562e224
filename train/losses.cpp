#include "train/losses.hpp"

#include <string>
#include <tuple>

#include "coordinator/device_inventory.hpp"

namespace troupe {
namespace {

void check_global_batch(int64_t global_batch) {
  if (global_batch <= 0)
    throw invalid_argument("global batch size must be positive, got " +
                           std::to_string(global_batch));
}

template <class T>
double sum_as_double(const Tensor& t) {
  const T* p = t.data<T>();
  double s = 0;
  for (int64_t i = 0; i < t.num_elements(); ++i) s += double(p[i]);
  return s;
}

template <class T>
int64_t count_correct(const Tensor& logits, const Tensor& labels) {
  const T* p = logits.data<T>();
  const int64_t rows = logits.shape()[0], classes = logits.shape()[1];
  int64_t correct = 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c)
      if (p[r * classes + c] > p[r * classes + best]) best = c;
    if (best == host_index(labels, r)) ++correct;
  }
  return correct;
}

bool on_one_gpu(const Tensor& a, const Tensor& b, const Tensor& c) {
  for (const Tensor* t : {&a, &b, &c})
    if (t->memory() != MemoryKind::gpu || t->buffer()->device_index() != a.buffer()->device_index())
      return false;
  return true;
}

}  // namespace

double host_sum(const Tensor& t) {
  if (t.dtype() == DType::float64) return sum_as_double<double>(t);
  if (t.dtype() == DType::float32) return sum_as_double<float>(t);
  throw invalid_argument("host_sum: expected float32 or float64, got " + t.description());
}

int64_t host_index(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::int64) return t.data<int64_t>()[i];
  if (t.dtype() == DType::int32) return t.data<int32_t>()[i];
  throw invalid_argument("expected int32 or int64 indices, got " + t.description());
}

LossWithGrad mean_squared_error(const Ops& ops, const Tensor& predictions, const Tensor& labels,
                                int64_t global_batch) {
  check_global_batch(global_batch);
  if (labels.num_elements() != predictions.num_elements() || labels.dtype() != predictions.dtype())
    throw invalid_argument("mean_squared_error: labels " + labels.description() +
                           " do not match predictions " + predictions.description());
  LossWithGrad out;
  out.grad = allocate_like(predictions, predictions.dtype(), predictions.shape());
  ops.sub(predictions, labels.reshape(predictions.shape()), out.grad);  // diff
  // loss_sum = diff . diff, as a [1, n] x [n, 1] product so it stays a kernel call.
  const int64_t n = predictions.num_elements();
  Tensor flat = out.grad.reshape(Shape{n, 1});
  Tensor dot = allocate_like(predictions, predictions.dtype(), Shape{1, 1});
  ops.matmul(flat, flat, dot, /*transpose_a=*/true);
  out.stats.rows = predictions.shape().rank() > 0 ? predictions.shape()[0] : 1;
  // Keras averages over the outputs of an example, so `units: k` does not scale the loss by k.
  const double outputs = out.stats.rows > 0 ? double(n) / double(out.stats.rows) : 1.0;
  out.stats.loss_sum = host_sum(to_host(dot)) / outputs;
  ops.scale(out.grad, 2.0 / (double(global_batch) * outputs), out.grad);
  return out;
}

LossWithGrad sparse_softmax_cross_entropy(const Ops& ops, const Tensor& logits,
                                          const Tensor& labels, int64_t global_batch) {
  check_global_batch(global_batch);
  // Loss and gradient where the logits live; the statistics are read on the host.
  SoftmaxXent x;
  if (!logits.defined())
    throw invalid_argument("softmax_cross_entropy: logits is an undefined tensor");
  const int64_t rows = logits.shape().rank() > 0 ? logits.shape()[0] : 0;
  x.loss = allocate_like(logits, logits.dtype(), Shape{rows});
  x.grad = allocate_like(logits, logits.dtype(), logits.shape());
  ops.softmax_cross_entropy(logits, labels, x.loss, x.grad);
  LossWithGrad out;
  out.stats.rows = logits.shape()[0];
  if (on_one_gpu(x.loss, logits, labels)) {
    // Two numbers, added up where the values are: one small copy instead of three.
    std::tie(out.stats.loss_sum, out.stats.correct) =
        gpu_loss_sum_and_correct(x.loss, logits, labels);
  } else {
    out.stats.loss_sum = host_sum(to_host(x.loss));
    const Tensor host_logits = to_host(logits), host_labels = to_host(labels);
    out.stats.correct = logits.dtype() == DType::float64
                            ? count_correct<double>(host_logits, host_labels)
                            : count_correct<float>(host_logits, host_labels);
  }
  ops.scale(x.grad, 1.0 / double(global_batch), x.grad);
  out.grad = x.grad;
  return out;
}

}  // namespace troupe
