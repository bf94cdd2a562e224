#include "core/data/synthetic.hpp"

#include <algorithm>
#include <thread>

#include "core/data/node_helpers.hpp"
#include "core/data/row_cache.hpp"
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

void check_cache_bytes(int64_t bytes, const char* who) {
  if (bytes < 0)
    throw invalid_argument(std::string(who) + ": cache_bytes must be >= 0, got " +
                           std::to_string(bytes));
}

size_t spec_bytes(const TensorSpec& spec) {
  return size_t(Shape(spec.dims).num_elements()) * dtype_size(spec.dtype);
}

// How a source whose rows are computed by `compute` fills and views batch rows.
struct RowAccess {
  IndexedSourceNode::FillAt fill;
  IndexedSourceNode::ViewAt view;  ///< null without a cache
};

// Through a cache of the first epoch when all rows fit in `budget` bytes. The first batch asked
// for as views materialises every row at once, on all cores; from then on batches of
// consecutive rows are views of the cache (an unshuffled, unsharded pipeline copies nothing).
// Sharded or shuffled pipelines never ask for views and fill the cache row by row as they go.
template <class Compute>
RowAccess cached_rows(const ElementSpec& spec, int64_t rows, int64_t budget, Compute compute) {
  std::vector<size_t> component_bytes;
  for (const auto& c : spec) component_bytes.push_back(spec_bytes(c));
  if (budget == 0 || RowCache::bytes_needed(rows, component_bytes) > size_t(budget))
    return {compute, nullptr};
  auto cache = std::make_shared<RowCache>(rows, std::move(component_bytes));
  auto fill = [cache, compute](int64_t i, const RowDestination& dst) {
    if (cache->read(i, dst)) return;
    compute(i, dst);
    cache->store(i, dst);
  };
  auto view = [cache, compute, spec](int64_t begin, int64_t n) {
    cache->materialize(compute, int(std::max(1u, std::thread::hardware_concurrency())));
    return cache->view_rows(begin, n, spec);
  };
  return {fill, view};
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
  check_cache_bytes(o.cache_bytes, "synthetic_classification");
  Tensor means = synthetic_class_means(o);
  // Example i written into (features, label) memory: the one definition both paths use.
  auto compute = [o, means](int64_t i, const RowDestination& dst) {
    Philox labels(o.seed, kStreamLabels), noise(o.seed, kStreamFeatures);
    int64_t label = int64_t(labels.bits(uint64_t(i)) % uint32_t(o.num_classes));
    float* px = static_cast<float*>(dst[0]);
    const float* m = means.data<float>() + label * o.num_features;
    noise.fill_normal(px, uint64_t(i * o.num_features), o.num_features);
    for (int64_t j = 0; j < o.num_features; ++j) px[j] += m[j];
    if (o.label_dtype == DType::int64)
      *static_cast<int64_t*>(dst[1]) = label;
    else
      *static_cast<int32_t*>(dst[1]) = int32_t(label);
  };
  auto at = [o, compute](int64_t i) -> std::optional<Element> {
    Element e{Tensor(DType::float32, {o.num_features}), Tensor(o.label_dtype, {})};
    compute(i, {e[0].raw_data(), e[1].raw_data()});
    return e;
  };
  ElementSpec spec{{DType::float32, {o.num_features}}, {o.label_dtype, {}}};
  RowAccess rows = cached_rows(spec, o.num_examples, o.cache_bytes, compute);
  return Dataset(std::make_shared<IndexedSourceNode>("synthetic_classification", spec,
                                                     o.num_examples, at, rows.fill, rows.view));
}

RegressionTruth synthetic_regression_truth(const RegressionOptions& o) {
  // Weight (j, t) and bias t take counters j * T + t and F * T + t: with T = 1 these are the
  // counters a one-target regression always used, so its data does not change.
  const int64_t targets = o.num_targets;
  Philox rng(o.seed, kStreamWeights);
  RegressionTruth truth{targets == 1 ? Tensor(DType::float32, {o.num_features})
                                     : Tensor(DType::float32, {o.num_features, targets}),
                        Tensor(DType::float32, {targets})};
  float* w = truth.weights.data<float>();
  for (int64_t i = 0; i < o.num_features * targets; ++i) w[i] = float(rng.normal(uint64_t(i)));
  float* b = truth.bias.data<float>();
  for (int64_t t = 0; t < targets; ++t)
    b[t] = float(rng.normal(uint64_t(o.num_features * targets + t)));
  return truth;
}

Dataset synthetic_regression(const RegressionOptions& o) {
  check_counts(o.num_examples, o.num_features, "synthetic_regression");
  if (!(o.noise_stddev >= 0))
    throw invalid_argument("synthetic_regression: noise_stddev must be >= 0");
  if (o.num_targets < 1)
    throw invalid_argument("synthetic_regression: num_targets must be >= 1, got " +
                           std::to_string(o.num_targets));
  check_cache_bytes(o.cache_bytes, "synthetic_regression");
  RegressionTruth truth = synthetic_regression_truth(o);
  // Example i written into (x, y) memory: the one definition both paths use.
  auto compute = [o, truth](int64_t i, const RowDestination& dst) {
    const int64_t targets = o.num_targets;
    Philox inputs(o.seed, kStreamInputs), noise(o.seed, kStreamNoise);
    float* px = static_cast<float*>(dst[0]);
    float* py = static_cast<float*>(dst[1]);
    const float* w = truth.weights.data<float>();
    inputs.fill_normal(px, uint64_t(i * o.num_features), o.num_features);
    for (int64_t t = 0; t < targets; ++t) {
      double v =
          truth.bias.data<float>()[t] + o.noise_stddev * noise.normal(uint64_t(i * targets + t));
      for (int64_t j = 0; j < o.num_features; ++j) v += double(px[j]) * w[j * targets + t];
      py[t] = float(v);
    }
  };
  auto at = [o, compute](int64_t i) -> std::optional<Element> {
    Element e{Tensor(DType::float32, {o.num_features}), Tensor(DType::float32, {o.num_targets})};
    compute(i, {e[0].raw_data(), e[1].raw_data()});
    return e;
  };
  ElementSpec spec{{DType::float32, {o.num_features}}, {DType::float32, {o.num_targets}}};
  RowAccess rows = cached_rows(spec, o.num_examples, o.cache_bytes, compute);
  return Dataset(std::make_shared<IndexedSourceNode>("synthetic_regression", spec, o.num_examples,
                                                     at, rows.fill, rows.view));
}

}  // namespace troupe::data
