#pragma once
// The typed, Tensor-level face of the kernels: shape and dtype checks, then one registry lookup
// on (op, device of the tensors, dtype) and one kernel call. Outputs are caller-allocated
// tensors of the right dtype and shape (so the same call works for host and GPU memory); the
// returning overloads allocate host tensors. Formulas are TensorFlow's (docs/kernels.md).

#include <cstdint>
#include <vector>

#include "core/tensor.hpp"
#include "kernels/kernel_args.hpp"
#include "kernels/registry.hpp"

namespace troupe {

/// Plain gradient descent (tf.keras.optimizers.SGD without momentum).
struct SgdOptions {
  double learning_rate = 0.01;
};

/// SGD with momentum (TF ApplyMomentum).
struct MomentumOptions {
  double learning_rate = 0.01;
  double momentum = 0.9;
  bool nesterov = false;
};

/// Adam (TF ApplyAdam); `step` is the 1-based step t used for beta1^t and beta2^t.
struct AdamOptions {
  double learning_rate = 0.001;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-7;
  int64_t step = 1;
};

/// Adagrad as Keras v2 (TF ApplyAdagradV2): epsilon is added outside the square root.
struct AdagradOptions {
  double learning_rate = 0.001;
  double epsilon = 1e-7;
};

/// Per-row loss and gradient of sparse softmax cross-entropy.
struct SoftmaxXent {
  Tensor loss;  ///< [rows]
  Tensor grad;  ///< [rows, classes], d loss / d logits
};

/// Runs kernels from one registry. Cheap to copy; holds the registry by reference.
class Ops {
 public:
  /// `gpu` carries the stream and cuBLAS handle used when the tensors live on a GPU.
  explicit Ops(const KernelRegistry& registry, DeviceContext gpu = {});

  const KernelRegistry& registry() const { return *registry_; }

  // ---- element-wise (out may be one of the inputs) -------------------------------------------
  /// out = a + b (all numeric dtypes).
  void add(const Tensor& a, const Tensor& b, Tensor& out) const;
  /// out = a - b (all numeric dtypes).
  void sub(const Tensor& a, const Tensor& b, Tensor& out) const;
  /// out = alpha * a.
  void scale(const Tensor& a, double alpha, Tensor& out) const;
  /// y += alpha * x.
  void axpy(double alpha, const Tensor& x, Tensor& y) const;
  /// Every element of out = value (converted to out's dtype).
  void fill(Tensor& out, double value) const;
  /// dst = src (same dtype and shape).
  void copy(const Tensor& src, Tensor& dst) const;
  /// out = max(features, 0).
  void relu(const Tensor& features, Tensor& out) const;
  /// out = gradients where features > 0, else 0 (TF ReluGrad).
  void relu_grad(const Tensor& gradients, const Tensor& features, Tensor& out) const;

  // ---- reductions ---------------------------------------------------------------------------
  /// out = inputs[0] + ... + inputs[n-1] over raw buffers of `count` elements, summed left to
  /// right in one blocked pass; out may be one of the inputs. For collectives.
  void sum_n(const std::vector<const void*>& inputs, void* out, DType dtype, int64_t count,
             KernelDevice device = KernelDevice::cpu) const;
  /// Tensor form of sum_n: all inputs and out share dtype and shape; at least one input.
  void sum_n(const std::vector<Tensor>& inputs, Tensor& out) const;
  /// out (one element) = sum of all elements of a.
  void reduce_sum(const Tensor& a, Tensor& out) const;
  /// Host convenience: the sum as a scalar tensor.
  Tensor reduce_sum(const Tensor& a) const;

  // ---- dense layers -------------------------------------------------------------------------
  /// out = alpha * op(a) @ op(b) + beta * out, op = transpose when asked; all rank 2.
  void matmul(const Tensor& a, const Tensor& b, Tensor& out, bool transpose_a = false,
              bool transpose_b = false, double alpha = 1.0, double beta = 0.0) const;
  /// out[..., c] = value[..., c] + bias[c]; bias is rank 1 of the last dimension.
  void bias_add(const Tensor& value, const Tensor& bias, Tensor& out) const;
  /// out[c] = sum over all leading positions of grad[..., c] (TF BiasAddGrad).
  void bias_add_grad(const Tensor& grad, Tensor& out) const;
  /// TF SparseSoftmaxCrossEntropyWithLogits: logits [rows, classes], labels [rows] int32/int64.
  void softmax_cross_entropy(const Tensor& logits, const Tensor& labels, Tensor& loss,
                             Tensor& grad) const;
  /// Host convenience returning fresh loss and grad tensors.
  SoftmaxXent softmax_cross_entropy(const Tensor& logits, const Tensor& labels) const;

  // ---- rows ---------------------------------------------------------------------------------
  /// out[i] = params[indices[i]]; indices rank 1 int32/int64; out [n, params.shape[1:]].
  void gather_rows(const Tensor& params, const Tensor& indices, Tensor& out) const;
  /// Host convenience allocating the result.
  Tensor gather_rows(const Tensor& params, const Tensor& indices) const;
  /// target[indices[i]] += updates[i], in index order (duplicates accumulate).
  void scatter_add_rows(const Tensor& indices, const Tensor& updates, Tensor& target) const;
  /// target[indices[i]] -= updates[i], in index order (all numeric dtypes).
  void scatter_sub_rows(const Tensor& indices, const Tensor& updates, Tensor& target) const;
  /// target[indices[i]] = updates[i], in index order: for a duplicated index the last wins.
  void scatter_update_rows(const Tensor& indices, const Tensor& updates, Tensor& target) const;

  // ---- optimizers: dense --------------------------------------------------------------------
  void apply_sgd(Tensor& var, const Tensor& grad, const SgdOptions& o) const;
  void apply_momentum(Tensor& var, Tensor& accum, const Tensor& grad,
                      const MomentumOptions& o) const;
  void apply_adam(Tensor& var, Tensor& m, Tensor& v, const Tensor& grad,
                  const AdamOptions& o) const;
  void apply_adagrad(Tensor& var, Tensor& accum, const Tensor& grad, const AdagradOptions& o) const;

  // ---- optimizers: sparse rows (grad [n, var.shape[1:]], duplicates applied in order) --------
  void sparse_apply_sgd(Tensor& var, const Tensor& indices, const Tensor& grad,
                        const SgdOptions& o) const;
  void sparse_apply_momentum(Tensor& var, Tensor& accum, const Tensor& indices, const Tensor& grad,
                             const MomentumOptions& o) const;
  void sparse_apply_adam(Tensor& var, Tensor& m, Tensor& v, const Tensor& indices,
                         const Tensor& grad, const AdamOptions& o) const;
  void sparse_apply_adagrad(Tensor& var, Tensor& accum, const Tensor& indices, const Tensor& grad,
                            const AdagradOptions& o) const;

 private:
  template <class Args>
  KernelFn<Args> kernel(const char* op, KernelDevice device, DType dtype) const {
    return registry_->find<Args>(op, device, dtype);
  }
  void scatter_rows(const char* op, const Tensor& indices, const Tensor& updates,
                    Tensor& target) const;
  void run_optimizer(const char* op, OptimizerArgs& args, const Tensor& var) const;
  void run_sparse_optimizer(const char* op, OptimizerArgs& args, const Tensor& var,
                            const Tensor& indices, const Tensor& grad) const;

  const KernelRegistry* registry_;
  DeviceContext gpu_;
};

}  // namespace troupe
