#pragma once
// Models with hand-written forward and backward passes over Ops kernels. A Model is stateless:
// it names its parameters and their seeded initial values, and computes loss and gradients from
// parameter tensors it is handed — so the same model runs on one device, on every replica of a
// strategy (parameters = that replica's variable components) and in finite-difference tests.
// Loss convention (tf.nn.compute_average_loss): gradients are of loss_sum / global_batch, so
// SUM-all-reducing the replicas' gradients gives the single-device gradient of the global batch.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "kernels/ops.hpp"

namespace troupe {

/// What the built-in model factories read; fields a model does not use are ignored.
struct ModelConfig {
  int64_t input_dim = 1;         ///< features per example (dense models)
  std::vector<int64_t> hidden;   ///< MLP hidden layer widths (ReLU)
  int64_t classes = 2;           ///< softmax / MLP outputs
  int64_t units = 1;             ///< linear regression outputs (targets per example)
  int64_t users = 0;             ///< embedding model: rows of the user table
  int64_t items = 0;             ///< embedding model: rows of the item table
  int64_t dim = 8;               ///< embedding width
  uint64_t seed = 0;             ///< initializer seed (deterministic)
  DType dtype = DType::float32;  ///< float32 or float64 (tests use float64)
};

/// A parameter's name (e.g. "dense/kernel") and initial value.
struct NamedTensor {
  std::string name;
  Tensor value;
};

/// A gradient: dense (indices undefined) or rows of a table (IndexedSlices: values[i] is the
/// gradient of row indices[i]; duplicates add up).
struct Gradient {
  Tensor values;
  Tensor indices;
  /// Instead of values, where the caller asked for it (GradientForm::kernel_products): a dense
  /// layer's kernel gradient as its factors, lhs^T rhs (lhs: the layer's inputs [rows, in], rhs:
  /// the gradient at its outputs [rows, out]). The all-reduce then sums the replicas' products
  /// without any replica forming its own (train/gradient_products.hpp).
  Tensor lhs{}, rhs{};  // default-initialised: {values, indices} aggregates stay warning-free
  bool is_sparse() const { return indices.defined(); }
  bool is_product() const { return !values.defined() && lhs.defined(); }
};

/// How compute() hands back gradients: all as values, or dense kernels' as products where the
/// model has them (a model without any returns values either way).
enum class GradientForm { values, kernel_products };

/// Loss statistics of one (replica) batch.
struct LossStats {
  double loss_sum = 0;  ///< sum of per-example losses (not divided)
  int64_t correct = 0;  ///< classifiers: examples whose argmax is the label; else 0
  int64_t rows = 0;     ///< examples in the batch
};

/// Loss statistics and, when asked for, gradients in parameter order.
struct ModelOutput {
  LossStats stats;
  std::vector<Gradient> grads;
};

/// A model: parameters + forward/backward.
class Model {
 public:
  virtual ~Model() = default;
  /// Registry name: "linear", "softmax", "mlp", "embedding".
  virtual std::string kind() const = 0;
  /// Parameter names and initial values, in the order compute() takes them.
  virtual std::vector<NamedTensor> initial_parameters() const = 0;
  /// Model outputs (regression values [n, units] or logits [n, classes], or ratings [n, 1]).
  virtual Tensor forward(const Ops& ops, const std::vector<Tensor>& params,
                         const Tensor& features) const = 0;
  /// Loss statistics of this batch and, if `with_grads`, gradients of loss_sum / global_batch.
  virtual ModelOutput compute(const Ops& ops, const std::vector<Tensor>& params,
                              const Tensor& features, const Tensor& labels, int64_t global_batch,
                              bool with_grads = true,
                              GradientForm form = GradientForm::values) const = 0;
};

/// y = x W + b with W [input_dim, units], MSE loss (labels float [n, units]; [n] when units is 1).
std::unique_ptr<Model> make_linear_regression(const ModelConfig& config);
/// logits = x W + b, sparse softmax cross-entropy (labels int32/int64 [n]).
std::unique_ptr<Model> make_softmax_classifier(const ModelConfig& config);
/// Dense ReLU layers of config.hidden widths, then a softmax output layer.
std::unique_ptr<Model> make_mlp(const ModelConfig& config);
/// Matrix factorisation: rating = <users[u], items[i]>, MSE loss; features int32/int64 [n, 2]
/// (user, item), sparse (row) gradients.
std::unique_ptr<Model> make_embedding_model(const ModelConfig& config);

/// Glorot (Xavier) uniform initial kernel [fan_in, fan_out], seeded.
Tensor glorot_uniform(int64_t fan_in, int64_t fan_out, uint64_t seed, DType dtype);

}  // namespace troupe
