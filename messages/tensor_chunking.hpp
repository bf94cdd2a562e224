#pragma once
// Splitting a large tensor into chunk messages and putting it back together. Chunks are views of
// the original buffer (no copy on the sending side).

#include <cstddef>
#include <cstdint>
#include <vector>

#include <map>
#include <set>
#include <utility>
#include "core/tensor.hpp"

#include "messages/tensor_msg.hpp"

namespace troupe {

/// Default chunk size: 16 MiB keeps CAF 0.17 in its linear regime.
constexpr size_t kDefaultChunkBytes = size_t(16) << 20;

/// Splits `t` into chunks of at most `max_chunk_bytes` (rounded down to whole elements, at least
/// one element); a tensor with no elements gives one empty chunk. Throws for undefined tensors.
std::vector<tensor_chunk_msg> split_into_chunks(const Tensor& t, uint64_t transfer_id,
                                                size_t max_chunk_bytes = kDefaultChunkBytes);

/// Collects the chunks of one transfer, in any order, into a fresh tensor. The chunks are kept
/// (shared handles, no copy) and the tensor is allocated only once all of them have arrived and
/// tile it exactly: the shape a peer declares never allocates more than the peer has sent.
class ChunkAssembler {
 public:
  /// Adds one chunk; throws invalid_argument naming what disagrees with earlier chunks (transfer
  /// id, dtype, shape, count, range, a gap or overlap). Returns true once every chunk has arrived.
  bool add(const tensor_chunk_msg& chunk);
  /// True when all chunks have arrived and tile the tensor.
  bool complete() const { return assembled_; }
  /// The assembled tensor; throws failed_precondition before complete().
  Tensor take();

 private:
  void assemble();

  uint64_t transfer_id_ = 0;
  uint32_t expected_ = 0;
  uint32_t received_ = 0;
  DType dtype_ = DType::float32;
  std::vector<int64_t> shape_;
  int64_t total_elements_ = 0;
  std::set<uint32_t> seen_;                                // indices received (not a count-long
                                                           // bitmap: the count is the peer's)
  std::map<int64_t, std::pair<uint32_t, Tensor>> pieces_;  // element offset -> (index, values)
  bool assembled_ = false;
  Tensor result_;
};

}  // namespace troupe
