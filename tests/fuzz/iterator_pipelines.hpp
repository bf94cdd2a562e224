#pragma once
// The input pipelines fuzz_iterator_state restores states into; the seed writer saves real
// states of the same pipelines.
#include <cstdint>
#include <vector>

#include "core/data/dataset.hpp"
#include "core/tensor.hpp"

namespace troupe::fuzz {

inline constexpr int kIteratorPipelines = 4;

inline data::Dataset iterator_pipeline(int which) {
  using data::Dataset;
  switch (which) {
    case 0: return Dataset::range(0, 40).shuffle(8, 7).batch(3);
    case 1: return Dataset::range(0, 10).repeat(3).take(25).batch(4, true);
    case 2:
      return Dataset::from_tensor_slices(
                 {Tensor::from_vector<float>(Shape(std::vector<int64_t>{3, 2}),
                                             {1, 2, 3, 4, 5, 6})})
          .repeat()
          .shuffle(4, 3)
          .batch(2)
          .take(6);
    default: return Dataset::range(0, 24).batch(6).rebatch({2, 3});
  }
}

}  // namespace troupe::fuzz
