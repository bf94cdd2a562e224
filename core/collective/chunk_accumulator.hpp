#pragma once
// Collects one contribution per member for each chunk and sums a chunk once all have arrived,
// always in ascending rank order, so the floating-point result does not depend on arrival order
// (TF's add_n over the per-device values in device order).

#include <vector>

#include "core/collective/chunk_layout.hpp"
#include "core/tensor.hpp"

namespace troupe {

/// Per-chunk gathering of the members' payload views, then an ordered n-ary sum.
class ChunkAccumulator {
 public:
  using ReduceFn = void (*)(void* dst, const void* src, DType dtype, int64_t count);

  /// `members`: the contributing ranks in any order (summed ascending); `chunks`: the layout.
  ChunkAccumulator(std::vector<int> members, std::vector<ElementRange> chunks);

  /// True when `rank` is one of the members.
  bool is_member(int rank) const;
  /// Keeps `payload` (a view, not copied) as `rank`'s part of chunk `chunk`; returns true when
  /// that completes the chunk.
  bool add(int rank, int chunk, const Tensor& payload);
  /// Writes the ordered sum of chunk `chunk` into flat[range] and drops the kept views.
  void sum_into(int chunk, Tensor& flat, ReduceFn reduce);

 private:
  std::vector<int> members_;  ///< ascending
  std::vector<ElementRange> chunks_;
  std::vector<std::vector<Tensor>> parts_;  ///< [chunk][member position]
  std::vector<int> arrived_;                ///< per chunk
};

}  // namespace troupe
