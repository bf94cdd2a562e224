#include "net/bulk_tensor_stream.hpp"

#include <algorithm>
#include <cerrno>
#include <vector>

#include "net/socket_io.hpp"

namespace troupe::net {
namespace {

constexpr uint32_t kMaxRank = 32;
// Progress is published per slice so that a watcher sees a transfer move (and a stalled one not).
constexpr uint64_t kSliceBytes = uint64_t(1) << 20;

// A read or write that failed: the peer went away, or the socket's timeout passed without
// progress (a stopped or overloaded peer), which errno tells apart (the helpers below clear it).
std::string lost(const char* what, uint64_t done, uint64_t total) {
  const bool stalled = errno == EAGAIN || errno == EWOULDBLOCK;
  return std::string(stalled ? "no progress within the timeout " : "connection lost ") + what +
         " after " + std::to_string(done) + " of " + std::to_string(total) + " payload bytes";
}

bool read_exactly(int fd, void* data, size_t size) {
  errno = 0;
  return read_all(fd, data, size);
}

bool write_exactly(int fd, const void* data, size_t size) {
  errno = 0;
  return write_all(fd, data, size);
}

}  // namespace

std::string write_tensor_chunked(int fd, const Tensor& t, uint64_t chunk_bytes,
                                 std::atomic<uint64_t>* progress) {
  chunk_bytes = std::clamp<uint64_t>(chunk_bytes, 1, kMaxBulkChunkBytes);
  uint8_t dtype = static_cast<uint8_t>(t.dtype());
  uint32_t rank = uint32_t(t.shape().rank());
  uint64_t total = t.byte_size();
  if (!write_exactly(fd, &dtype, 1) || !write_exactly(fd, &rank, 4) ||
      !write_exactly(fd, t.shape().dims().data(), 8 * rank) || !write_exactly(fd, &total, 8) ||
      !write_exactly(fd, &chunk_bytes, 8))
    return lost("while sending the descriptor", 0, total);
  const char* data = static_cast<const char*>(t.raw_data());
  for (uint64_t offset = 0; offset < total;) {
    uint64_t length = std::min(chunk_bytes, total - offset);
    if (!write_exactly(fd, &offset, 8) || !write_exactly(fd, &length, 8))
      return lost("while sending a chunk header", offset, total);
    for (uint64_t done = 0; done < length;) {
      uint64_t slice = std::min(kSliceBytes, length - done);
      if (!write_exactly(fd, data + offset + done, slice))
        return lost("mid-chunk", offset + done, total);
      done += slice;
      if (progress) progress->fetch_add(slice);
    }
    offset += length;
  }
  return {};
}

std::shared_ptr<Buffer> ReceiveBuffers::take(uint64_t bytes) {
  for (auto& b : kept_)
    if (b.use_count() == 1 && b->bytes() >= bytes && b->bytes() <= 2 * bytes + 4096) return b;
  auto fresh = Buffer::allocate_host(size_t(bytes));
  if (kept_.size() == capacity) kept_.erase(kept_.begin());
  kept_.push_back(fresh);
  return fresh;
}

std::string read_tensor_chunked(int fd, Tensor& out, ReceiveBuffers* buffers) {
  uint8_t dtype = 0;
  uint32_t rank = 0;
  if (!read_exactly(fd, &dtype, 1) || !read_exactly(fd, &rank, 4))
    return "connection lost before the tensor descriptor";
  if (!is_valid_dtype(dtype)) return "bad tensor descriptor: dtype " + std::to_string(dtype);
  if (rank > kMaxRank)
    return "bad tensor descriptor: rank " + std::to_string(rank) + " (at most " +
           std::to_string(kMaxRank) + ")";
  std::vector<int64_t> dims(rank);
  uint64_t expected = dtype_size(DType(dtype)), total = 0, chunk_bytes = 0;
  if (!read_exactly(fd, dims.data(), 8 * rank) || !read_exactly(fd, &total, 8) ||
      !read_exactly(fd, &chunk_bytes, 8))
    return "connection lost inside the tensor descriptor";
  for (int64_t d : dims) {
    if (d < 0 || (d != 0 && expected > kMaxBulkTensorBytes / uint64_t(d)))
      return "bad tensor descriptor: dimension " + std::to_string(d) +
             " (negative, or the tensor exceeds " + std::to_string(kMaxBulkTensorBytes) + " bytes)";
    expected *= uint64_t(d);
  }
  if (total != expected)
    return "bad tensor descriptor: byte_count " + std::to_string(total) + ", shape needs " +
           std::to_string(expected);
  if (chunk_bytes == 0 || chunk_bytes > kMaxBulkChunkBytes)
    return "bad tensor descriptor: chunk_bytes " + std::to_string(chunk_bytes) + " (1 .. " +
           std::to_string(kMaxBulkChunkBytes) + ")";
  Tensor t = buffers && total > 0
                 ? Tensor(DType(dtype), Shape(std::move(dims)), buffers->take(total))
                 : Tensor(DType(dtype), Shape(std::move(dims)));
  char* data = static_cast<char*>(t.raw_data());
  for (uint64_t offset = 0; offset < total;) {
    uint64_t at = 0, length = 0;
    if (!read_exactly(fd, &at, 8) || !read_exactly(fd, &length, 8))
      return lost("before a chunk header", offset, total);
    if (at != offset)
      return "bad chunk: offset " + std::to_string(at) + ", expected " + std::to_string(offset);
    if (length == 0 || length > chunk_bytes || length > total - offset)
      return "bad chunk: length " + std::to_string(length) + " at offset " +
             std::to_string(offset) + " (chunk_bytes " + std::to_string(chunk_bytes) + ", total " +
             std::to_string(total) + ")";
    if (!read_exactly(fd, data + offset, length)) return lost("mid-chunk", offset, total);
    offset += length;
  }
  out = std::move(t);
  return {};
}

}  // namespace troupe::net
