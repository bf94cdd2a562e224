#include "coordinator/tensor_fusion.hpp"

#include "core/packing.hpp"

namespace troupe {

TensorFusion::TensorFusion(CrossDeviceOpKind kind, const AllReduceOptions& options,
                           const std::vector<Tensor>& tensors) {
  for (auto& t : tensors) shapes_.push_back(t.shape());
  bool one_dtype = true;
  for (auto& t : tensors) one_dtype = one_dtype && t.dtype() == tensors[0].dtype();
  if (tensors.size() < 2 || !one_dtype) {
    packs_ = tensors;
    return;
  }
  if (kind == CrossDeviceOpKind::collective_all_reduce) {
    mode_ = Mode::groups;
    groups_ = collective_pack_groups(tensors, options.bytes_per_pack);
    for (auto& group : groups_) {
      std::vector<Tensor> members;
      for (size_t i : group) members.push_back(tensors[i]);
      packs_.push_back(concat_flat(members));
    }
    return;
  }
  mode_ = Mode::concat_split;
  auto packed = pack_tensors(tensors, options.num_packs);
  packs_ = std::move(packed.packs);
  layout_ = std::move(packed.layout);
}

std::vector<Tensor> TensorFusion::unpack(const std::vector<Tensor>& reduced) const {
  if (reduced.size() != packs_.size())
    throw internal_error("tensor fusion: " + std::to_string(reduced.size()) +
                         " reduced packs for " + std::to_string(packs_.size()) + " packs");
  switch (mode_) {
    case Mode::none: return reduced;
    case Mode::concat_split: return unpack_tensors(reduced, layout_);
    case Mode::groups: {
      std::vector<Tensor> out(shapes_.size());
      for (size_t g = 0; g < groups_.size(); ++g) {
        std::vector<Shape> shapes;
        for (size_t i : groups_[g]) shapes.push_back(shapes_[i]);
        auto parts = split_flat(reduced[g], shapes);
        for (size_t k = 0; k < parts.size(); ++k) out[groups_[g][k]] = parts[k];
      }
      return out;
    }
  }
  return reduced;
}

}  // namespace troupe
