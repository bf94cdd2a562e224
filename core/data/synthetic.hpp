#pragma once
// Seeded synthetic datasets for examples, tests and benchmarks. Element i depends only on
// (seed, i), so any slice of the data can be regenerated anywhere and an iterator's position is
// a single index.

#include <cstdint>

#include "core/data/dataset.hpp"

namespace troupe::data {

/// Gaussian blobs: label ~ uniform over classes, features ~ N(mean[label], 1). Class means are
/// N(0, separation^2) per feature, so a softmax classifier can reach high accuracy.
struct ClassificationOptions {
  int64_t num_examples = 1024;
  int64_t num_features = 8;
  int64_t num_classes = 2;
  uint64_t seed = 0;
  double separation = 3.0;
  DType label_dtype = DType::int64;  ///< int32 or int64
  /// Keep the examples batch() computed, to copy them on later repeats, when all of them fit in
  /// this many bytes (num_examples x (4 x num_features + label bytes)); 0 never keeps any.
  /// With a cache, a batch() straight over the source (through repeat and take only) computes
  /// every example once, on all cores, and hands out its batches as views of the cache.
  int64_t cache_bytes = 0;
};

/// Elements (features float32[num_features], label scalar), unbatched. batch() over it (through
/// repeat and take) writes examples straight into the batch's rows: no tensor per example.
Dataset synthetic_classification(const ClassificationOptions& options);
/// The class means, float32[num_classes, num_features].
Tensor synthetic_class_means(const ClassificationOptions& options);

/// y = x W* + b* + noise, x ~ N(0, 1), W* ~ N(0, 1), b* ~ N(0, 1), noise ~ N(0, noise_stddev^2),
/// with num_targets outputs per example (one column of W* and one b* each). One target gives
/// the same numbers as before targets existed.
struct RegressionOptions {
  int64_t num_examples = 1024;
  int64_t num_features = 8;
  int64_t num_targets = 1;
  uint64_t seed = 0;
  double noise_stddev = 0.1;
  /// As ClassificationOptions::cache_bytes (rows of 4 x (num_features + num_targets) bytes).
  int64_t cache_bytes = 0;
};

/// Elements (x float32[num_features], y float32[num_targets]), unbatched.
Dataset synthetic_regression(const RegressionOptions& options);

/// The true parameters of a synthetic regression.
struct RegressionTruth {
  Tensor weights;  ///< float32[num_features, num_targets] ([num_features] for one target)
  Tensor bias;     ///< float32[num_targets]
};
RegressionTruth synthetic_regression_truth(const RegressionOptions& options);

}  // namespace troupe::data
