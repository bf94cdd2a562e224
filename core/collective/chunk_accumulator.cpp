#include "core/collective/chunk_accumulator.hpp"

#include <algorithm>
#include <cstring>

namespace troupe {

ChunkAccumulator::ChunkAccumulator(std::vector<int> members, std::vector<ElementRange> chunks)
    : members_(std::move(members)), chunks_(std::move(chunks)) {
  std::sort(members_.begin(), members_.end());
  parts_.assign(chunks_.size(), std::vector<Tensor>(members_.size()));
  arrived_.assign(chunks_.size(), 0);
}

bool ChunkAccumulator::is_member(int rank) const {
  return std::binary_search(members_.begin(), members_.end(), rank);
}

bool ChunkAccumulator::add(int rank, int chunk, const Tensor& payload) {
  auto pos = size_t(std::lower_bound(members_.begin(), members_.end(), rank) - members_.begin());
  if (pos == members_.size() || members_[pos] != rank)
    throw internal_error("ChunkAccumulator: rank " + std::to_string(rank) + " is not a member");
  Tensor& slot = parts_.at(size_t(chunk)).at(pos);
  if (slot.defined())
    throw internal_error("ChunkAccumulator: rank " + std::to_string(rank) + " chunk " +
                         std::to_string(chunk) + " added twice");
  slot = payload;
  return ++arrived_[size_t(chunk)] == int(members_.size());
}

void ChunkAccumulator::sum_into(int chunk, Tensor& flat, ReduceFn reduce) {
  auto& parts = parts_.at(size_t(chunk));
  const ElementRange& range = chunks_[size_t(chunk)];
  size_t elem = dtype_size(flat.dtype());
  char* dst = static_cast<char*>(flat.raw_data()) + size_t(range.begin) * elem;
  if (range.count) {
    std::memcpy(dst, parts[0].raw_data(), size_t(range.count) * elem);
    for (size_t i = 1; i < parts.size(); ++i)
      reduce(dst, parts[i].raw_data(), flat.dtype(), range.count);
  }
  for (auto& p : parts) p = Tensor();
}

}  // namespace troupe
