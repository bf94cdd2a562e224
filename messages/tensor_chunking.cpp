#include "messages/tensor_chunking.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace troupe {
namespace {

std::string describe_dims(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace

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
    int64_t total = 1;  // the declared shape's element count, refused before it overflows
    for (int64_t d : chunk.shape) {
      if (d < 0 || (d != 0 && total > std::numeric_limits<int64_t>::max() / d))
        throw invalid_argument("chunk " + std::to_string(chunk.index) + " declares shape " +
                               describe_dims(chunk.shape) + ", which is negative or overflows");
      total *= d;
    }
    transfer_id_ = chunk.transfer_id;
    expected_ = chunk.count;
    dtype_ = chunk.values.dtype();
    shape_ = chunk.shape;
    total_elements_ = total;
  }
  if (chunk.transfer_id != transfer_id_)
    throw invalid_argument("chunk of transfer " + std::to_string(chunk.transfer_id) +
                           " mixed into transfer " + std::to_string(transfer_id_));
  if (chunk.count != expected_ || chunk.index >= expected_)
    throw invalid_argument("chunk " + std::to_string(chunk.index) + "/" +
                           std::to_string(chunk.count) + " does not fit a transfer of " +
                           std::to_string(expected_) + " chunks");
  if (chunk.values.dtype() != dtype_ || chunk.shape != shape_)
    throw invalid_argument("chunk " + std::to_string(chunk.index) + " has " +
                           chunk.values.description() + " of shape " + describe_dims(chunk.shape) +
                           ", transfer is " + std::string(dtype_name(dtype_)) + " " +
                           describe_dims(shape_));
  int64_t n = chunk.values.num_elements();
  if (chunk.element_offset < 0 || n > total_elements_ || chunk.element_offset > total_elements_ - n)
    throw invalid_argument("chunk " + std::to_string(chunk.index) + " range [" +
                           std::to_string(chunk.element_offset) + ", +" + std::to_string(n) +
                           ") lies outside " + std::to_string(total_elements_) + " elements");
  if (!seen_.insert(chunk.index).second)
    throw invalid_argument("chunk " + std::to_string(chunk.index) + " arrived twice");
  if (!pieces_.emplace(chunk.element_offset, std::make_pair(chunk.index, chunk.values)).second)
    throw invalid_argument("chunk " + std::to_string(chunk.index) + " starts at element " +
                           std::to_string(chunk.element_offset) + " like an earlier chunk");
  ++received_;
  if (received_ == expected_) assemble();
  return complete();
}

// All chunks are here: they must tile [0, total) with neither gap nor overlap before the
// result (whose size they then add up to) is allocated.
void ChunkAssembler::assemble() {
  int64_t next = 0;
  for (const auto& [offset, piece] : pieces_) {
    if (offset != next)
      throw invalid_argument("chunk " + std::to_string(piece.first) + " starts at element " +
                             std::to_string(offset) + ", expected " + std::to_string(next) +
                             " (the chunks leave a gap or overlap)");
    next = offset + piece.second.num_elements();
  }
  if (next != total_elements_)
    throw invalid_argument("the chunks cover " + std::to_string(next) + " of " +
                           std::to_string(total_elements_) + " elements");
  result_ = Tensor(dtype_, Shape(shape_));
  size_t esize = dtype_size(dtype_);
  for (const auto& [offset, piece] : pieces_)
    if (piece.second.num_elements() > 0)
      std::memcpy(static_cast<char*>(result_.raw_data()) + size_t(offset) * esize,
                  piece.second.raw_data(), size_t(piece.second.num_elements()) * esize);
  pieces_.clear();
  assembled_ = true;
}

Tensor ChunkAssembler::take() {
  if (!complete())
    throw failed_precondition("ChunkAssembler: " + std::to_string(received_) + " of " +
                              std::to_string(expected_) + " chunks arrived");
  return std::move(result_);
}

}  // namespace troupe
