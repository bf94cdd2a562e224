#include "net/bulk_tensor_stream.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "net/socket_io.hpp"

namespace troupe::net {
namespace {

constexpr uint32_t kMaxRank = 32;
// Progress is published per slice so that a watcher sees a transfer move (and a stalled one not).
constexpr uint64_t kSliceBytes = uint64_t(1) << 20;

// A read or write that failed: the peer went away, or the socket's timeout passed without
// progress (a stopped or overloaded peer), which errno tells apart (the helpers below clear it).
constexpr const char* kStalled = "no progress within the timeout ";

std::string lost(const char* what, uint64_t done, uint64_t total) {
  const bool stalled = errno == EAGAIN || errno == EWOULDBLOCK;
  return std::string(stalled ? kStalled : "connection lost ") + what + " after " +
         std::to_string(done) + " of " + std::to_string(total) + " payload bytes";
}

bool read_exactly(int fd, void* data, size_t size) {
  errno = 0;
  return read_all(fd, data, size);
}

bool write_exactly(int fd, const void* a, size_t a_size, const void* b, size_t b_size) {
  errno = 0;
  return write_all(fd, a, a_size, b, b_size);
}

void append(std::vector<char>& out, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  out.insert(out.end(), p, p + size);
}

}  // namespace

bool is_stall(const std::string& problem) { return problem.rfind(kStalled, 0) == 0; }

std::string write_tensor_chunked(int fd, const Tensor& t, uint64_t chunk_bytes,
                                 std::atomic<uint64_t>* progress, std::string_view prefix) {
  chunk_bytes = std::clamp<uint64_t>(chunk_bytes, 1, kMaxBulkChunkBytes);
  const uint8_t dtype = static_cast<uint8_t>(t.dtype());
  const uint32_t rank = uint32_t(t.shape().rank());
  const uint64_t total = t.byte_size();
  // What goes out ahead of the next payload slice, in the same system call: the prefix and the
  // descriptor before the first, a chunk header before each chunk's first slice.
  std::vector<char> head(prefix.begin(), prefix.end());
  append(head, &dtype, 1);
  append(head, &rank, 4);
  append(head, t.shape().dims().data(), 8 * rank);
  append(head, &total, 8);
  append(head, &chunk_bytes, 8);
  if (total == 0)
    return write_exactly(fd, head.data(), head.size(), nullptr, 0)
               ? std::string()
               : lost("while sending the descriptor", 0, total);
  bool descriptor_sent = false;
  const char* data = static_cast<const char*>(t.raw_data());
  for (uint64_t offset = 0; offset < total;) {
    const uint64_t length = std::min(chunk_bytes, total - offset);
    append(head, &offset, 8);
    append(head, &length, 8);
    for (uint64_t done = 0; done < length;) {
      const uint64_t slice = std::min(kSliceBytes, length - done);
      if (!write_exactly(fd, head.data(), head.size(), data + offset + done, slice))
        return lost(!descriptor_sent ? "while sending the descriptor"
                    : !head.empty()  ? "while sending a chunk header"
                                     : "mid-chunk",
                    offset + done, total);
      descriptor_sent = true;
      head.clear();
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
  // Each fixed-size run of fields is one read: a system call per field cost more than the
  // copying of a 128 KiB gather.
  char lead[5];
  if (!read_exactly(fd, lead, sizeof lead)) return "connection lost before the tensor descriptor";
  const uint8_t dtype = uint8_t(lead[0]);
  uint32_t rank = 0;
  std::memcpy(&rank, lead + 1, 4);
  if (!is_valid_dtype(dtype)) return "bad tensor descriptor: dtype " + std::to_string(dtype);
  if (rank > kMaxRank)
    return "bad tensor descriptor: rank " + std::to_string(rank) + " (at most " +
           std::to_string(kMaxRank) + ")";
  std::vector<int64_t> dims(rank + 2);  // the dimensions, byte_count, chunk_bytes
  if (!read_exactly(fd, dims.data(), 8 * (rank + 2)))
    return "connection lost inside the tensor descriptor";
  uint64_t expected = dtype_size(DType(dtype)), total = 0, chunk_bytes = 0;
  std::memcpy(&total, &dims[rank], 8);
  std::memcpy(&chunk_bytes, &dims[rank + 1], 8);
  dims.resize(rank);
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
    uint64_t chunk[2] = {0, 0};  // offset, length
    if (!read_exactly(fd, chunk, sizeof chunk)) return lost("before a chunk header", offset, total);
    const uint64_t at = chunk[0], length = chunk[1];
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
