// Matrix factorisation: rating(u, i) = <users[u], items[i]>. Forward gathers rows; backward
// produces row (IndexedSlices) gradients that optimizers apply with sparse kernels.
#include <string>

#include "train/losses.hpp"
#include "train/model.hpp"

namespace troupe {
namespace {

// Column `c` of int features [n, 2] as an int64 [n] tensor.
Tensor id_column(const Tensor& features, int c) {
  const int64_t n = features.shape()[0];
  Tensor ids(DType::int64, Shape{n});
  int64_t* out = ids.data<int64_t>();
  for (int64_t r = 0; r < n; ++r) out[r] = host_index(features, 2 * r + c);
  return ids;
}

template <class T>
void row_dots(const Tensor& u, const Tensor& v, Tensor& out) {
  const int64_t n = u.shape()[0], d = u.shape()[1];
  const T* a = u.data<T>();
  const T* b = v.data<T>();
  T* o = out.data<T>();
  for (int64_t r = 0; r < n; ++r) {
    T s = 0;
    for (int64_t k = 0; k < d; ++k) s += a[r * d + k] * b[r * d + k];
    o[r] = s;
  }
}

// out[r] = g[r] * rows[r] (row-wise scaling).
template <class T>
Tensor scale_rows(const Tensor& g, const Tensor& rows) {
  const int64_t n = rows.shape()[0], d = rows.shape()[1];
  Tensor out(rows.dtype(), rows.shape());
  const T* gp = g.data<T>();
  const T* rp = rows.data<T>();
  T* o = out.data<T>();
  for (int64_t r = 0; r < n; ++r)
    for (int64_t k = 0; k < d; ++k) o[r * d + k] = gp[r] * rp[r * d + k];
  return out;
}

class EmbeddingModel : public Model {
 public:
  explicit EmbeddingModel(const ModelConfig& config) : config_(config) {
    if (config.users <= 0 || config.items <= 0 || config.dim <= 0)
      throw invalid_argument("model 'embedding' needs positive users, items and dim, got users=" +
                             std::to_string(config.users) + " items=" +
                             std::to_string(config.items) + " dim=" + std::to_string(config.dim));
  }
  std::string kind() const override { return "embedding"; }

  std::vector<NamedTensor> initial_parameters() const override {
    // Keras' Embedding default: uniform(-0.05, 0.05); larger here so dot products are not ~0.
    return {
        {"embedding/users", Tensor::random_uniform(Shape{config_.users, config_.dim}, config_.seed,
                                                   -0.5, 0.5, config_.dtype)},
        {"embedding/items", Tensor::random_uniform(Shape{config_.items, config_.dim},
                                                   config_.seed + 1, -0.5, 0.5, config_.dtype)}};
  }

  Tensor forward(const Ops& ops, const std::vector<Tensor>& params,
                 const Tensor& features) const override {
    Tensor u, v;
    return predict(ops, params, features, u, v);
  }

  ModelOutput compute(const Ops& ops, const std::vector<Tensor>& params, const Tensor& features,
                      const Tensor& labels, int64_t global_batch, bool with_grads,
                      GradientForm /*its gradients are rows: always values*/) const override {
    Tensor u, v;
    Tensor ratings = predict(ops, params, features, u, v);
    LossWithGrad loss = mean_squared_error(ops, ratings, labels, global_batch);
    ModelOutput result;
    result.stats = loss.stats;
    if (!with_grads) return result;
    const bool f64 = config_.dtype == DType::float64;
    result.grads.push_back(
        {f64 ? scale_rows<double>(loss.grad, v) : scale_rows<float>(loss.grad, v),
         id_column(features, 0)});
    result.grads.push_back(
        {f64 ? scale_rows<double>(loss.grad, u) : scale_rows<float>(loss.grad, u),
         id_column(features, 1)});
    return result;
  }

 private:
  Tensor predict(const Ops& ops, const std::vector<Tensor>& params, const Tensor& features,
                 Tensor& u, Tensor& v) const {
    if (params.size() != 2)
      throw invalid_argument("model 'embedding' takes 2 parameters, got " +
                             std::to_string(params.size()));
    if (features.shape().rank() != 2 || features.shape()[1] != 2)
      throw invalid_argument("model 'embedding' expects features [batch, 2] (user, item), got " +
                             features.description());
    u = ops.gather_rows(params[0], id_column(features, 0));
    v = ops.gather_rows(params[1], id_column(features, 1));
    Tensor ratings(config_.dtype, Shape{features.shape()[0], 1});
    if (config_.dtype == DType::float64)
      row_dots<double>(u, v, ratings);
    else
      row_dots<float>(u, v, ratings);
    return ratings;
  }

  ModelConfig config_;
};

}  // namespace

std::unique_ptr<Model> make_embedding_model(const ModelConfig& config) {
  return std::make_unique<EmbeddingModel>(config);
}

}  // namespace troupe
