#pragma once
// Chunked ring all-reduce (the bandwidth-optimal schedule of Baidu/Horovod/Gloo's AllreduceRing):
// the buffer is split into n segments; in n-1 reduce-scatter steps each rank adds its left
// neighbour's partial segment into its own and passes it on, leaving rank r with the full sum of
// segment (r+1) mod n; n-1 all-gather steps then circulate the finished segments. Each segment
// is cut into chunks of <= chunk_bytes that move independently: a chunk is forwarded as soon as
// it has been reduced, so reduction of one chunk overlaps the transfer of the next.
//
// Step numbering (k = 0..n-2), for rank r with left = r-1 and right = r+1 (mod n):
//   reduce_scatter step k: r sends segment (r-k), receives and reduces segment (r-1-k);
//   all_gather step k:     r sends segment (r+1-k), receives and stores segment (r-k).
// Each segment's sum is accumulated in ring order starting at its own index, once, then copied:
// every rank ends with bit-identical results whatever the delivery interleaving.

#include <vector>

#include "core/collective/collective_algorithm.hpp"

namespace troupe {

/// Ring all-reduce over `spec.group_size` ranks; see the file comment for the schedule.
class RingAllReduce : public CollectiveAlgorithm {
 public:
  explicit RingAllReduce(const CollectiveSpec& spec);

 protected:
  void check_identity(const CollectiveMessage& m) const override;
  std::vector<CollectiveMessage> begin(const Tensor& flat_input) override;
  std::vector<CollectiveMessage> receive(const CollectiveMessage& m) override;
  bool finished() const override;

 private:
  int wrap(int r) const { return ((r % spec_.group_size) + spec_.group_size) % spec_.group_size; }
  /// Segment a message of `phase` and `step` carries into this rank.
  int incoming_segment(CollectivePhase phase, int step) const;

  int left_, right_, last_step_;
  Tensor input_;  ///< flat view of this rank's input; read, never written
  std::vector<std::vector<ElementRange>> chunks_;  ///< per segment
  std::vector<std::vector<bool>> reduced_;         ///< [step][chunk]: reduce_scatter processed
  int64_t expected_ = 0, received_ = 0;            ///< messages this rank must process
};

}  // namespace troupe
