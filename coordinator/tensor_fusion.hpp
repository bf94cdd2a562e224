#pragma once
// Tensor fusion for batched all-reduces (spec mirrored.md §2.7.5, §5.2): one replica's list of
// tensors becomes a few flat packs — grouped by bytes_per_pack in reversed order for
// CollectiveAllReduce, concatenated and split into num_packs for the NCCL / hierarchical ops — and
// the reduced packs are cut back into the original shapes. Lists of mixed dtypes are not fused.

#include <vector>

#include "coordinator/cross_device_ops.hpp"
#include "core/packing.hpp"

namespace troupe {

/// The packs of one replica's tensors and how to undo them.
class TensorFusion {
 public:
  TensorFusion(CrossDeviceOpKind kind, const AllReduceOptions& options,
               const std::vector<Tensor>& tensors);

  const std::vector<Tensor>& packs() const { return packs_; }
  /// The original tensors' shapes, filled from the reduced packs (same order as packs()).
  std::vector<Tensor> unpack(const std::vector<Tensor>& reduced) const;

 private:
  enum class Mode { none, concat_split, groups };
  Mode mode_ = Mode::none;
  std::vector<Tensor> packs_;
  PackLayout layout_;                        // concat_split
  std::vector<std::vector<size_t>> groups_;  // groups: original indices per pack
  std::vector<Shape> shapes_;
};

}  // namespace troupe
