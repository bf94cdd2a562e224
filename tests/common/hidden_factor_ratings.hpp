#pragma once
// The ratings the parameter_server tests train on: 4000 (user, item) pairs of 30 users x 20
// items, each rated by hidden rank-2 factors, as encoded tf.train.Example records
// {ids: int64[2], rating: float32} in a fixed order (seed 11).
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/data/example_proto.hpp"

namespace troupe::testing {

/// Calls `record(n, bytes)` for the n-th record, n = 0 .. 3999.
inline void hidden_factor_ratings(const std::function<void(int, const std::string&)>& record) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> x(-1.f, 1.f);
  std::vector<float> users(60), items(40);
  for (auto& v : users) v = x(rng);
  for (auto& v : items) v = x(rng);
  for (int n = 0; n < 4000; ++n) {
    int64_t u = int64_t(rng() % 30), i = int64_t(rng() % 20);
    data::Example example;
    example["ids"] = data::Feature::of_int64s({u, i});
    example["rating"] =
        data::Feature::of_floats({users[size_t(2 * u)] * items[size_t(2 * i)] +
                                  users[size_t(2 * u + 1)] * items[size_t(2 * i + 1)]});
    record(n, data::encode_example(example));
  }
}

}  // namespace troupe::testing
