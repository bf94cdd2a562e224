#include "core/collective/hierarchical_copy.hpp"

namespace troupe {

HierarchicalGroups hierarchical_groups(int group_size, int64_t tensor_index) {
  if (group_size <= 0)
    throw invalid_argument("hierarchical copy: cannot reduce an empty group (group_size " +
                           std::to_string(group_size) + ")");
  if (tensor_index < 0)
    throw invalid_argument("hierarchical copy: negative tensor index " +
                           std::to_string(tensor_index));
  int half = group_size / 2;
  ElementRange lower{0, half}, upper{half, group_size - half};
  HierarchicalGroups g;
  g.g0_main = int(tensor_index % group_size);
  bool in_lower = g.g0_main < half;
  g.group_a = in_lower ? lower : upper;
  g.group_b = in_lower ? upper : lower;
  int64_t offset = g.g0_main - g.group_a.begin;
  g.g1_main = g.group_b.count ? int(g.group_b.begin + offset % g.group_b.count) : g.g0_main;
  return g;
}

HierarchicalCopy::HierarchicalCopy(const CollectiveSpec& spec)
    : CollectiveAlgorithm("hierarchical copy", spec),
      groups_(hierarchical_groups(spec.group_size, spec.tensor_index)) {
  bool in_a = contains(groups_.group_a, spec.rank);
  my_group_ = in_a ? groups_.group_a : groups_.group_b;
  my_main_ = in_a ? groups_.g0_main : groups_.g1_main;
  chunks_ = split_into_chunks({0, spec.count}, chunk_elems_);
  if (is_main()) {
    std::vector<int> members;
    for (int64_t r = my_group_.begin; r < my_group_.end(); ++r) members.push_back(int(r));
    group_sum_ = std::make_unique<ChunkAccumulator>(members, chunks_);
    own_partial_done_.assign(chunks_.size(), false);
    partial_b_.resize(chunks_.size());
  }
}

void HierarchicalCopy::check_identity(const CollectiveMessage& m) const {
  bool g0 = spec_.rank == groups_.g0_main;
  bool g1 = spec_.rank == groups_.g1_main && !g0;
  switch (m.phase) {
    case CollectivePhase::gather:
      if (!is_main() || !contains(my_group_, m.from))
        throw message_error(m, "gather must go from a group member to its group main");
      break;
    case CollectivePhase::cross_reduce:
      if (!g0 || groups_.group_b.count == 0 || m.from != groups_.g1_main)
        throw message_error(m, "cross_reduce must go from g1_main (rank " +
                                   std::to_string(groups_.g1_main) + ") to g0_main (rank " +
                                   std::to_string(groups_.g0_main) + ")");
      break;
    case CollectivePhase::cross_broadcast:
      if (!g1 || m.from != groups_.g0_main)
        throw message_error(m, "cross_broadcast must go from g0_main (rank " +
                                   std::to_string(groups_.g0_main) + ") to g1_main (rank " +
                                   std::to_string(groups_.g1_main) + ")");
      break;
    case CollectivePhase::broadcast:
      if (is_main() || m.from != my_main_)
        throw message_error(
            m, "broadcast must come from this rank's group main, rank " + std::to_string(my_main_));
      break;
    default: throw message_error(m, "phase is not part of a hierarchical copy");
  }
  if (m.step != 0) throw message_error(m, "step must be 0");
  if (m.chunk < 0 || size_t(m.chunk) >= chunks_.size())
    throw message_error(m,
                        "chunk outside the buffer's " + std::to_string(chunks_.size()) + " chunks");
  check_range(m, chunks_[m.chunk]);
}

std::vector<CollectiveMessage> HierarchicalCopy::begin(const Tensor& flat_input) {
  result_ = Tensor(spec_.dtype, Shape{spec_.count});
  std::vector<CollectiveMessage> out;
  for (size_t c = 0; c < chunks_.size(); ++c) {
    if (!is_main())
      out.push_back(
          make_message(my_main_, CollectivePhase::gather, 0, int(c), chunks_[c], flat_input));
    else if (group_sum_->add(spec_.rank, int(c), view(flat_input, chunks_[c])))
      group_sum_ready(int(c), out);
  }
  return out;
}

std::vector<CollectiveMessage> HierarchicalCopy::receive(const CollectiveMessage& m) {
  std::vector<CollectiveMessage> out;
  int c = m.chunk;
  switch (m.phase) {
    case CollectivePhase::gather:
      if (group_sum_->add(m.from, c, m.payload)) group_sum_ready(c, out);
      break;
    case CollectivePhase::cross_reduce:
      partial_b_[c] = m.payload;
      if (own_partial_done_[c]) total_ready(c, out);
      break;
    case CollectivePhase::cross_broadcast:
      // The total replaces g1_main's partial sum; before that partial was sent it is still needed.
      if (!own_partial_done_[c])
        throw message_error(m, "out of order: arrived before g1_main sent its partial sum");
      copy_into(result_, chunks_[c], m.payload);
      ++completed_;
      broadcast_to_members(c, out);
      break;
    default:  // broadcast
      copy_into(result_, chunks_[c], m.payload);
      ++completed_;
  }
  return out;
}

void HierarchicalCopy::group_sum_ready(int c, std::vector<CollectiveMessage>& out) {
  group_sum_->sum_into(c, result_, spec_.reduce);
  own_partial_done_[c] = true;
  if (spec_.rank != groups_.g0_main)
    out.push_back(
        make_message(groups_.g0_main, CollectivePhase::cross_reduce, 0, c, chunks_[c], result_));
  else if (groups_.group_b.count == 0 || partial_b_[c].defined())
    total_ready(c, out);
}

void HierarchicalCopy::total_ready(int c, std::vector<CollectiveMessage>& out) {
  if (groups_.group_b.count) {
    reduce_into(result_, chunks_[c], partial_b_[c]);
    partial_b_[c] = Tensor();
    out.push_back(
        make_message(groups_.g1_main, CollectivePhase::cross_broadcast, 0, c, chunks_[c], result_));
  }
  ++completed_;
  broadcast_to_members(c, out);
}

void HierarchicalCopy::broadcast_to_members(int c, std::vector<CollectiveMessage>& out) {
  for (int64_t r = my_group_.begin; r < my_group_.end(); ++r)
    if (r != spec_.rank)
      out.push_back(make_message(int(r), CollectivePhase::broadcast, 0, c, chunks_[c], result_));
}

}  // namespace troupe
