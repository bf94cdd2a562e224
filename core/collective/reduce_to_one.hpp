#pragma once
// ReductionToOneDevice (mirrored.md §2.7.1): every rank sends its input to the root
// (reduce_to_device), the root sums all inputs in rank order (add_n), then broadcasts the sum.
// Chunked like the ring: the root sums and broadcasts chunk c as soon as all n parts of chunk c
// have arrived. Simple and universal, but the root carries all the traffic.

#include <memory>
#include <vector>

#include "core/collective/chunk_accumulator.hpp"
#include "core/collective/collective_algorithm.hpp"

namespace troupe {

/// Gather-to-root, ordered n-ary sum, broadcast; `spec.root` is the reduce device's rank.
class ReduceToOne : public CollectiveAlgorithm {
 public:
  /// Throws invalid_argument for an empty group or a root outside it.
  explicit ReduceToOne(const CollectiveSpec& spec);

 protected:
  void check_identity(const CollectiveMessage& m) const override;
  std::vector<CollectiveMessage> begin(const Tensor& flat_input) override;
  std::vector<CollectiveMessage> receive(const CollectiveMessage& m) override;
  bool finished() const override { return completed_ == chunks_.size(); }

 private:
  bool is_root() const { return spec_.rank == spec_.root; }
  /// Root: sum chunk c and emit its broadcast to every other rank.
  void finish_chunk(int c, std::vector<CollectiveMessage>& out);

  std::vector<ElementRange> chunks_;
  std::unique_ptr<ChunkAccumulator> sums_;  ///< root only
  size_t completed_ = 0;                    ///< chunks summed (root) or received (others)
};

}  // namespace troupe
