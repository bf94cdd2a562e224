// Linear regression, softmax classifier and MLP: one stack of dense layers (ReLU between them)
// with an MSE or a softmax cross-entropy head. Intermediates are allocated where the inputs live
// (host, or the replica's GPU), so the same code runs on both.
#include <cmath>
#include <string>

#include "coordinator/device_inventory.hpp"
#include "train/losses.hpp"
#include "train/model.hpp"

namespace troupe {
namespace {

enum class Head { mse, softmax };

class DenseStack : public Model {
 public:
  DenseStack(std::string kind, std::vector<int64_t> widths, Head head, const ModelConfig& config)
      : kind_(std::move(kind)), widths_(std::move(widths)), head_(head), config_(config) {
    for (int64_t w : widths_)
      if (w <= 0)
        throw invalid_argument("model '" + kind_ + "': layer widths must be positive, got " +
                               std::to_string(w));
    if (config.dtype != DType::float32 && config.dtype != DType::float64)
      throw invalid_argument("model '" + kind_ + "': dtype must be float32 or float64, got " +
                             std::string(dtype_name(config.dtype)));
  }

  std::string kind() const override { return kind_; }

  std::vector<NamedTensor> initial_parameters() const override {
    std::vector<NamedTensor> params;
    for (size_t l = 0; l + 1 < widths_.size(); ++l) {
      std::string prefix = layers() == 1 ? "dense" : "dense_" + std::to_string(l);
      params.push_back({prefix + "/kernel", glorot_uniform(widths_[l], widths_[l + 1],
                                                           config_.seed + 2 * l, config_.dtype)});
      params.push_back({prefix + "/bias", Tensor::zeros(config_.dtype, Shape{widths_[l + 1]})});
    }
    return params;
  }

  Tensor forward(const Ops& ops, const std::vector<Tensor>& params,
                 const Tensor& features) const override {
    std::vector<Tensor> pre, post;
    return run_forward(ops, params, features, pre, post);
  }

  ModelOutput compute(const Ops& ops, const std::vector<Tensor>& params, const Tensor& features,
                      const Tensor& labels, int64_t global_batch, bool with_grads,
                      GradientForm form) const override {
    std::vector<Tensor> pre, post;  // per layer: pre-activation, and the layer's input
    Tensor out = run_forward(ops, params, features, pre, post);
    LossWithGrad loss = head_ == Head::mse
                            ? mean_squared_error(ops, out, labels, global_batch)
                            : sparse_softmax_cross_entropy(ops, out, labels, global_batch);
    ModelOutput result;
    result.stats = loss.stats;
    if (!with_grads) return result;
    result.grads.resize(params.size());
    Tensor dz = loss.grad;
    for (size_t l = layers(); l-- > 0;) {
      const Tensor& kernel = params[2 * l];
      if (form == GradientForm::kernel_products) {
        result.grads[2 * l].lhs = post[l];
        result.grads[2 * l].rhs = dz;
      } else {
        Tensor dkernel = allocate_like(kernel, kernel.dtype(), kernel.shape());
        ops.matmul(post[l], dz, dkernel, /*transpose_a=*/true);
        result.grads[2 * l].values = dkernel;
      }
      Tensor dbias = allocate_like(kernel, kernel.dtype(), Shape{kernel.shape()[1]});
      ops.bias_add_grad(dz, dbias);
      result.grads[2 * l + 1].values = dbias;
      if (l == 0) break;
      Tensor dinput = allocate_like(kernel, kernel.dtype(), post[l].shape());
      ops.matmul(dz, kernel, dinput, false, /*transpose_b=*/true);
      ops.relu_grad(dinput, pre[l - 1], dinput);
      dz = dinput;
    }
    return result;
  }

 private:
  size_t layers() const { return widths_.size() - 1; }

  Tensor run_forward(const Ops& ops, const std::vector<Tensor>& params, const Tensor& features,
                     std::vector<Tensor>& pre, std::vector<Tensor>& post) const {
    if (params.size() != 2 * layers())
      throw invalid_argument("model '" + kind_ + "' takes " + std::to_string(2 * layers()) +
                             " parameters, got " + std::to_string(params.size()));
    if (features.shape().rank() != 2 || features.shape()[1] != widths_[0])
      throw invalid_argument("model '" + kind_ + "' expects features [batch, " +
                             std::to_string(widths_[0]) + "], got " + features.description());
    Tensor x = features;
    for (size_t l = 0; l < layers(); ++l) {
      post.push_back(x);
      Tensor z = allocate_like(x, config_.dtype, Shape{x.shape()[0], widths_[l + 1]});
      ops.matmul(x, params[2 * l], z);
      ops.bias_add(z, params[2 * l + 1], z);
      pre.push_back(z);
      if (l + 1 == layers()) return z;
      Tensor a = allocate_like(z, config_.dtype, z.shape());
      ops.relu(z, a);
      x = a;
    }
    return x;
  }

  std::string kind_;
  std::vector<int64_t> widths_;  // input, hidden..., output
  Head head_;
  ModelConfig config_;
};

}  // namespace

Tensor glorot_uniform(int64_t fan_in, int64_t fan_out, uint64_t seed, DType dtype) {
  const double limit = std::sqrt(6.0 / double(fan_in + fan_out));
  return Tensor::random_uniform(Shape{fan_in, fan_out}, seed, -limit, limit, dtype);
}

std::unique_ptr<Model> make_linear_regression(const ModelConfig& config) {
  return std::make_unique<DenseStack>(
      "linear", std::vector<int64_t>{config.input_dim, config.units}, Head::mse, config);
}

std::unique_ptr<Model> make_softmax_classifier(const ModelConfig& config) {
  return std::make_unique<DenseStack>(
      "softmax", std::vector<int64_t>{config.input_dim, config.classes}, Head::softmax, config);
}

std::unique_ptr<Model> make_mlp(const ModelConfig& config) {
  std::vector<int64_t> widths{config.input_dim};
  widths.insert(widths.end(), config.hidden.begin(), config.hidden.end());
  widths.push_back(config.classes);
  return std::make_unique<DenseStack>("mlp", std::move(widths), Head::softmax, config);
}

}  // namespace troupe
