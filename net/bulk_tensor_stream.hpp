#pragma once
// A tensor on a plain TCP stream, in chunks: the framing of the ps bulk connection
// (actors/ps_bulk_server.hpp). A descriptor — u8 dtype, u32 rank, i64 dims[rank], u64 byte_count,
// u64 chunk_bytes — then the payload as chunks, each u64 offset, u64 length, bytes (host byte
// order: both ends are the same build). Chunks keep every read and write bounded (a value of
// hundreds of MiB is never one unbroken write) and let the receiver check its progress; the
// reader validates everything before allocating and reads straight into the destination tensor.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.hpp"

namespace troupe::net {

/// Largest chunk a sender may declare, and the default chunk size (64 MiB).
constexpr uint64_t kMaxBulkChunkBytes = uint64_t(64) << 20;
/// Largest tensor a bulk stream carries (refused before allocating).
constexpr uint64_t kMaxBulkTensorBytes = uint64_t(16) << 30;

/// Receive buffers kept for reuse: one is handed out again once nobody else holds it (the
/// shard let go of a pushed value, the caller of a pull dropped it). Fresh 16 MiB allocations
/// cost a page fault per 4 KiB, which halved push throughput; several are kept because the
/// holder of the last one may release it a moment after the next transfer starts.
class ReceiveBuffers {
 public:
  /// A free kept buffer of about `bytes` (>= bytes, <= 2 x bytes + 4 KiB), or a fresh one that
  /// is kept from now on (replacing the oldest when `capacity` are kept).
  std::shared_ptr<Buffer> take(uint64_t bytes);

 private:
  static constexpr size_t capacity = 3;
  std::vector<std::shared_ptr<Buffer>> kept_;
};

/// Writes `t` (a defined host tensor) in chunks of `chunk_bytes` (1 .. kMaxBulkChunkBytes).
/// `progress`, when given, grows by the payload bytes written so far (every MiB). `prefix` (a
/// request or status byte the tensor follows) leaves with the descriptor and the first payload
/// bytes in one system call, as does each chunk header with its first bytes. Returns an
/// empty string on success, otherwise what went wrong ("connection lost after N of M bytes").
std::string write_tensor_chunked(int fd, const Tensor& t, uint64_t chunk_bytes,
                                 std::atomic<uint64_t>* progress = nullptr,
                                 std::string_view prefix = {});

/// True when a problem the two functions here returned is the socket's timeout passing without
/// progress (a peer that is alive but stopped or overloaded), not a lost connection.
bool is_stall(const std::string& problem);

/// Reads one chunked tensor into `out`, into a buffer of `buffers` when given (else a fresh
/// one). Returns an empty string on success, otherwise the problem: a malformed
/// descriptor or chunk (naming the field and value) or a connection lost midway.
std::string read_tensor_chunked(int fd, Tensor& out, ReceiveBuffers* buffers);

}  // namespace troupe::net
