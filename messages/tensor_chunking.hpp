#pragma once
// Splitting a large tensor into chunk messages and putting it back together. Chunks are views of
// the original buffer (no copy on the sending side).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/tensor.hpp"
#include "messages/tensor_msg.hpp"

namespace troupe {

/// Default chunk size: 16 MiB keeps CAF 0.17 in its linear regime.
constexpr size_t kDefaultChunkBytes = size_t(16) << 20;

/// Splits `t` into chunks of at most `max_chunk_bytes` (rounded down to whole elements, at least
/// one element); a tensor with no elements gives one empty chunk. Throws for undefined tensors.
std::vector<tensor_chunk_msg> split_into_chunks(const Tensor& t, uint64_t transfer_id,
                                                size_t max_chunk_bytes = kDefaultChunkBytes);

/// Collects the chunks of one transfer, in any order, into a fresh tensor.
class ChunkAssembler {
 public:
  /// Adds one chunk; throws invalid_argument naming what disagrees with earlier chunks (transfer
  /// id, dtype, shape, count, range). Returns true once every chunk has arrived.
  bool add(const tensor_chunk_msg& chunk);
  /// True when all chunks have arrived.
  bool complete() const { return received_ == expected_ && expected_ > 0; }
  /// The assembled tensor; throws failed_precondition before complete().
  Tensor take();

 private:
  uint64_t transfer_id_ = 0;
  uint32_t expected_ = 0;
  uint32_t received_ = 0;
  std::vector<bool> seen_;
  Tensor result_;
};

}  // namespace troupe
