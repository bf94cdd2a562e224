#pragma once
// HierarchicalCopyAllReduce (mirrored.md §2.7.4, TF aggregate_gradients_using_hierarchical_copy),
// built for the DGX-1 (two fully connected islands of four GPUs). For tensor (pack) index i over
// n devices, half = n / 2:
//   1. g0_main = i % n; the device ranges are lower = [0, half) and upper = [half, n).
//      Group A is the range holding g0_main, group B the other one.
//   2. Every member sends its input to its group's main; each main sums its group in rank order.
//   3. B's main sends its partial sum to g0_main, which adds it: total = partial_A + partial_B.
//   4. g0_main sends the total to B's main; each main copies it to its group's members.
// B's main sits at the same offset within B as g0_main within A (wrapping if B is smaller); for
// even n that is exactly upstream's g1_main = (g0_main + half) % n.
//
// Errata fix (odd n): upstream's groups are [0, half) and [half, 2*half), so for odd n device n-1
// belongs to neither group and its contribution is silently dropped. Here the upper range is
// [half, n): the upper group takes the extra device, and every device is summed.
// n = 1 degenerates to a copy.

#include <memory>
#include <vector>

#include "core/collective/chunk_accumulator.hpp"
#include "core/collective/collective_algorithm.hpp"

namespace troupe {

/// The two groups and mains of one hierarchical-copy reduction (pure arithmetic, exposed for
/// tests).
struct HierarchicalGroups {
  ElementRange group_a;  ///< ranks [begin, end) of the group holding g0_main
  ElementRange group_b;  ///< the other ranks; empty when n == 1
  int g0_main = 0;       ///< where the total is formed
  int g1_main = 0;       ///< B's main (== g0_main when B is empty)
};

/// Groups and mains for `group_size` devices and tensor index `tensor_index`.
HierarchicalGroups hierarchical_groups(int group_size, int64_t tensor_index);

/// Two-level reduce (group mains, then g0_main) and copy back along the same edges.
class HierarchicalCopy : public CollectiveAlgorithm {
 public:
  explicit HierarchicalCopy(const CollectiveSpec& spec);

 protected:
  void check_identity(const CollectiveMessage& m) const override;
  std::vector<CollectiveMessage> begin(const Tensor& flat_input) override;
  std::vector<CollectiveMessage> receive(const CollectiveMessage& m) override;
  bool finished() const override { return completed_ == chunks_.size(); }

 private:
  static bool contains(ElementRange group, int rank) {
    return rank >= group.begin && rank < group.end();
  }
  bool is_main() const { return spec_.rank == my_main_; }
  /// A main's group sum for chunk c is complete: combine, forward or finish it.
  void group_sum_ready(int c, std::vector<CollectiveMessage>& out);
  /// g0_main: partial_A and partial_B both present for chunk c.
  void total_ready(int c, std::vector<CollectiveMessage>& out);
  /// The total of chunk c is in result_: copy it to this main's members.
  void broadcast_to_members(int c, std::vector<CollectiveMessage>& out);

  HierarchicalGroups groups_;
  ElementRange my_group_;
  int my_main_ = 0;
  std::vector<ElementRange> chunks_;
  std::unique_ptr<ChunkAccumulator> group_sum_;  ///< mains only
  std::vector<Tensor> partial_b_;                ///< g0_main: B's partial per chunk (views)
  std::vector<bool> own_partial_done_;           ///< mains: own group summed for chunk c
  size_t completed_ = 0;
};

}  // namespace troupe
