#include "messages/tensor_chunking.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace troupe {

std::vector<tensor_chunk_msg> split_into_chunks(const Tensor& t, uint64_t transfer_id,
                                                size_t max_chunk_bytes) {
  if (!t.defined()) throw invalid_argument("split_into_chunks: undefined tensor");
  int64_t total = t.num_elements();
  int64_t per_chunk = std::max<int64_t>(1, int64_t(max_chunk_bytes / dtype_size(t.dtype())));
  int64_t count = std::max<int64_t>(1, (total + per_chunk - 1) / per_chunk);
  if (count > std::numeric_limits<uint32_t>::max())
    throw invalid_argument("split_into_chunks: " + std::to_string(count) + " chunks is too many");
  Tensor flat = t.reshape(Shape{total});
  std::vector<tensor_chunk_msg> chunks;
  chunks.reserve(size_t(count));
  for (int64_t i = 0; i < count; ++i) {
    tensor_chunk_msg c;
    c.transfer_id = transfer_id;
    c.index = uint32_t(i);
    c.count = uint32_t(count);
    c.shape = t.shape().dims();
    c.element_offset = i * per_chunk;
    c.values = flat.slice_rows(c.element_offset, std::min(total, c.element_offset + per_chunk));
    chunks.push_back(std::move(c));
  }
  return chunks;
}

bool ChunkAssembler::add(const tensor_chunk_msg& chunk) {
  if (!chunk.values.defined())
    throw invalid_argument("chunk " + std::to_string(chunk.index) + " carries no values");
  if (expected_ == 0) {
    if (chunk.count == 0) throw invalid_argument("chunk declares a count of 0");
    transfer_id_ = chunk.transfer_id;
    expected_ = chunk.count;
    seen_.assign(chunk.count, false);
    result_ = Tensor(chunk.values.dtype(), Shape(chunk.shape));
  }
  if (chunk.transfer_id != transfer_id_)
    throw invalid_argument("chunk of transfer " + std::to_string(chunk.transfer_id) +
                           " mixed into transfer " + std::to_string(transfer_id_));
  if (chunk.count != expected_ || chunk.index >= expected_)
    throw invalid_argument("chunk " + std::to_string(chunk.index) + "/" +
                           std::to_string(chunk.count) + " does not fit a transfer of " +
                           std::to_string(expected_) + " chunks");
  if (chunk.values.dtype() != result_.dtype() || chunk.shape != result_.shape().dims())
    throw invalid_argument(
        "chunk " + std::to_string(chunk.index) + " has " + chunk.values.description() +
        " of shape " + Shape(chunk.shape).to_string() + ", transfer is " + result_.description());
  int64_t n = chunk.values.num_elements();
  if (chunk.element_offset < 0 || n > result_.num_elements() ||
      chunk.element_offset > result_.num_elements() - n)
    throw invalid_argument("chunk " + std::to_string(chunk.index) + " range [" +
                           std::to_string(chunk.element_offset) + ", +" + std::to_string(n) +
                           ") lies outside " + std::to_string(result_.num_elements()) +
                           " elements");
  if (seen_[chunk.index])
    throw invalid_argument("chunk " + std::to_string(chunk.index) + " arrived twice");
  seen_[chunk.index] = true;
  ++received_;
  size_t esize = dtype_size(result_.dtype());
  if (n > 0)
    std::memcpy(static_cast<char*>(result_.raw_data()) + size_t(chunk.element_offset) * esize,
                chunk.values.raw_data(), size_t(n) * esize);
  return complete();
}

Tensor ChunkAssembler::take() {
  if (!complete())
    throw failed_precondition("ChunkAssembler: " + std::to_string(received_) + " of " +
                              std::to_string(expected_) + " chunks arrived");
  return std::move(result_);
}

}  // namespace troupe
