#pragma once
// Synthetic ratings for the embedding (matrix factorisation) model: random (user, item) pairs
// rated by hidden rank-R factors, rating = <factor_user, factor_item> with factors uniform in
// [-1, 1], so the model can learn them exactly. `troupe data synthesize --kind ratings` writes
// these very examples to TFRecord files, and `data: {kind: synthetic_ratings}` reads them from
// memory: the same seed and sizes give the same ratings in the same order either way.

#include <cstdint>

#include "core/data/dataset.hpp"

namespace troupe::data {

struct RatingsOptions {
  int64_t num_examples = 1024;
  int64_t num_users = 100;  ///< user ids 0..num_users-1
  int64_t num_items = 100;  ///< item ids 0..num_items-1
  int64_t rank = 2;         ///< width of the hidden factors
  uint64_t seed = 0;
};

/// Elements (ids int64[2] = {user, item}, rating float32 scalar), unbatched. The generator is
/// sequential (one mt19937_64 stream: the factors, then a (user, item) pair per example), so
/// the examples are made once, when the dataset is created (20 bytes each). Throws
/// invalid_argument naming the option for a count below 1 (examples below 0).
Dataset synthetic_ratings(const RatingsOptions& options);

}  // namespace troupe::data
