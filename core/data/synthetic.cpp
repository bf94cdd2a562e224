#include "core/data/synthetic.hpp"

#include "core/data/node_helpers.hpp"
#include "core/random.hpp"

namespace troupe::data {
namespace {

// Philox streams, one per role, so the roles' numbers are independent.
constexpr uint64_t kStreamMeans = 11, kStreamLabels = 12, kStreamFeatures = 13;
constexpr uint64_t kStreamWeights = 21, kStreamInputs = 22, kStreamNoise = 23;

void check_counts(int64_t examples, int64_t features, const char* who) {
  if (examples < 0 || features <= 0)
    throw invalid_argument(std::string(who) +
                           ": need num_examples >= 0 and num_features > 0 (got " +
                           std::to_string(examples) + ", " + std::to_string(features) + ")");
}

}  // namespace

Tensor synthetic_class_means(const ClassificationOptions& o) {
  Philox rng(o.seed, kStreamMeans);
  Tensor means(DType::float32, {o.num_classes, o.num_features});
  float* m = means.data<float>();
  for (int64_t i = 0; i < means.num_elements(); ++i)
    m[i] = float(o.separation * rng.normal(uint64_t(i)));
  return means;
}

Dataset synthetic_classification(const ClassificationOptions& o) {
  check_counts(o.num_examples, o.num_features, "synthetic_classification");
  if (o.num_classes < 2)
    throw invalid_argument("synthetic_classification: num_classes must be >= 2, got " +
                           std::to_string(o.num_classes));
  if (o.label_dtype != DType::int32 && o.label_dtype != DType::int64)
    throw invalid_argument("synthetic_classification: label dtype must be int32 or int64, got " +
                           std::string(dtype_name(o.label_dtype)));
  Tensor means = synthetic_class_means(o);
  auto at = [o, means](int64_t i) -> std::optional<Element> {
    Philox labels(o.seed, kStreamLabels), noise(o.seed, kStreamFeatures);
    int64_t label = int64_t(labels.bits(uint64_t(i)) % uint32_t(o.num_classes));
    Tensor x(DType::float32, {o.num_features});
    float* px = x.data<float>();
    const float* m = means.data<float>() + label * o.num_features;
    noise.fill_normal(px, uint64_t(i * o.num_features), o.num_features);
    for (int64_t j = 0; j < o.num_features; ++j) px[j] += m[j];
    Tensor y = o.label_dtype == DType::int64 ? Tensor::from_scalar<int64_t>(label)
                                             : Tensor::from_scalar<int32_t>(int32_t(label));
    return Element{x, y};
  };
  ElementSpec spec{{DType::float32, {o.num_features}}, {o.label_dtype, {}}};
  return Dataset(
      std::make_shared<IndexedSourceNode>("synthetic_classification", spec, o.num_examples, at));
}

RegressionTruth synthetic_regression_truth(const RegressionOptions& o) {
  Philox rng(o.seed, kStreamWeights);
  RegressionTruth truth{Tensor(DType::float32, {o.num_features}), 0.0f};
  float* w = truth.weights.data<float>();
  for (int64_t j = 0; j < o.num_features; ++j) w[j] = float(rng.normal(uint64_t(j)));
  truth.bias = float(rng.normal(uint64_t(o.num_features)));
  return truth;
}

Dataset synthetic_regression(const RegressionOptions& o) {
  check_counts(o.num_examples, o.num_features, "synthetic_regression");
  if (!(o.noise_stddev >= 0))
    throw invalid_argument("synthetic_regression: noise_stddev must be >= 0");
  RegressionTruth truth = synthetic_regression_truth(o);
  auto at = [o, truth](int64_t i) -> std::optional<Element> {
    Philox inputs(o.seed, kStreamInputs), noise(o.seed, kStreamNoise);
    Tensor x(DType::float32, {o.num_features});
    float* px = x.data<float>();
    const float* w = truth.weights.data<float>();
    double y = truth.bias + o.noise_stddev * noise.normal(uint64_t(i));
    inputs.fill_normal(px, uint64_t(i * o.num_features), o.num_features);
    for (int64_t j = 0; j < o.num_features; ++j) y += double(px[j]) * w[j];
    return Element{x, Tensor::from_vector<float>({1}, {float(y)})};
  };
  ElementSpec spec{{DType::float32, {o.num_features}}, {DType::float32, {1}}};
  return Dataset(
      std::make_shared<IndexedSourceNode>("synthetic_regression", spec, o.num_examples, at));
}

}  // namespace troupe::data
