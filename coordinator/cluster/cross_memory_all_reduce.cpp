#include "coordinator/cluster/cross_memory_all_reduce.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/status.hpp"
#include "kernels/host_accumulate.hpp"

namespace troupe {
namespace {

// What each rank tells the others first: where to read.
struct Addresses {
  int64_t pid;
  uint64_t input;
  uint64_t output;
  uint64_t bytes;
};

// How long a failed read waits for the group's account of the rank's death.
constexpr std::chrono::milliseconds kDeathNoticeWait{1000};

// Chunks of a rank's share read from each other rank at a time: small enough that the buffers
// stay in L2 between the read and the sum.
constexpr size_t kChunkBytes = size_t(128) << 10;

// Reads `bytes` at `remote` in process `pid` into `local`; false with errno on failure.
bool read_remote(int64_t pid, uint64_t remote, void* local, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    iovec mine{static_cast<char*>(local) + done, bytes - done};
    iovec theirs{reinterpret_cast<void*>(remote + done), bytes - done};
    const ssize_t n = ::process_vm_readv(pid_t(pid), &mine, 1, &theirs, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;  // nothing read and no error: say so rather than a stale errno
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

// [begin, end) elements of rank r's share: n near-equal parts, boundaries on 16 elements so
// every share but the last starts cache-line aligned.
std::pair<size_t, size_t> share_of(int r, int n, size_t elements) {
  const size_t per = (elements / size_t(n) + 15) / 16 * 16;
  const size_t begin = std::min(elements, per * size_t(r));
  const size_t end = r == n - 1 ? elements : std::min(elements, begin + per);
  return {begin, end};
}

// One meeting: publishes `bytes` at `data`, waits for every rank's, and returns them all (rank
// order) with the call already released, so that pieces posted ahead after it never wait on it.
std::vector<char> meet(ShmRendezvous& rendezvous, int rank, const void* data, size_t bytes,
                       std::chrono::milliseconds timeout, const ShmRendezvous::StopFn& stop) {
  const uint64_t call = rendezvous.post(rank, data, bytes, timeout, stop);
  auto slots = rendezvous.collect(rank, call, bytes, timeout, stop);
  std::vector<char> all(slots.size() * bytes);
  for (size_t r = 0; r < slots.size(); ++r) std::memcpy(all.data() + r * bytes, slots[r], bytes);
  rendezvous.release(rank, call);
  return all;
}

}  // namespace

std::optional<Tensor> cross_memory_all_reduce_sum(ShmRendezvous& rendezvous, int rank,
                                                  const Tensor& value, bool allowed,
                                                  std::chrono::milliseconds timeout,
                                                  const ShmRendezvous::StopFn& stop,
                                                  CrossMemoryVotes* votes) {
  const int n = rendezvous.ranks();
  if (n < 2) return std::nullopt;  // nothing to read from anyone
  if (votes && votes->refused) return std::nullopt;
  Tensor sum(value.dtype(), value.shape());
  const auto* input = static_cast<const char*>(value.raw_data());
  auto* output = static_cast<char*>(sum.raw_data());
  const Addresses mine{int64_t(::getpid()), reinterpret_cast<uint64_t>(input),
                       reinterpret_cast<uint64_t>(output), uint64_t(value.byte_size())};
  std::vector<Addresses> peers(static_cast<size_t>(n));
  const auto addresses = meet(rendezvous, rank, &mine, sizeof mine, timeout, stop);
  std::memcpy(peers.data(), addresses.data(), addresses.size());
  for (int r = 0; r < n; ++r)
    if (peers[size_t(r)].bytes != mine.bytes)
      throw invalid_argument("all-reduce: rank " + std::to_string(r) + " contributed " +
                             std::to_string(peers[size_t(r)].bytes) + " bytes, rank " +
                             std::to_string(rank) + " " + std::to_string(mine.bytes));
  // Can this rank read every other rank? One byte each; every rank must say yes.
  char probe = 0;
  uint8_t readable = allowed ? 1 : 0;
  for (int r = 0; r < n && readable; ++r)
    if (r != rank && mine.bytes > 0 &&
        (peers[size_t(r)].pid <= 0 ||
         !read_remote(peers[size_t(r)].pid, peers[size_t(r)].input, &probe, 1)))
      readable = 0;
  for (char yes : meet(rendezvous, rank, &readable, 1, timeout, stop))
    if (yes == 0) {
      if (votes) votes->refused = true;
      return std::nullopt;
    }
  auto fail = [&](int r, const char* what) {
    const int error = errno;
    // A process that is gone fails the read at once, a moment before the group learns why (its
    // connections drop): wait up to kDeathNoticeWait for that reason, which names the cause.
    const auto deadline = std::chrono::steady_clock::now() + kDeathNoticeWait;
    std::string why = stop ? stop() : std::string();
    while (why.empty() && stop && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      why = stop();
    }
    if (!why.empty()) throw unavailable(why);
    throw unavailable("rank " + std::to_string(r) + " is down: reading its " + what + " (process " +
                      std::to_string(peers[size_t(r)].pid) + ") failed: " + std::strerror(error));
  };
  // This rank's share: the rank-order sum of every rank's elements there, chunk by chunk.
  const size_t element = dtype_size(value.dtype());
  const auto [begin, end] = share_of(rank, n, value.byte_size() / element);
  const size_t chunk = kChunkBytes / element;
  std::vector<std::vector<char>> buffers(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r)
    if (r != rank) buffers[size_t(r)].resize(std::min(chunk, end - begin) * element);
  std::vector<const char*> sources(static_cast<size_t>(n));
  for (size_t at = begin; at < end; at += chunk) {
    const size_t count = std::min(chunk, end - at), offset = at * element, bytes = count * element;
    for (int r = 0; r < n; ++r) {
      if (r == rank) {
        sources[size_t(r)] = input + offset;
        continue;
      }
      if (!read_remote(peers[size_t(r)].pid, peers[size_t(r)].input + offset,
                       buffers[size_t(r)].data(), bytes))
        fail(r, "input");
      sources[size_t(r)] = buffers[size_t(r)].data();
    }
    host_add_into(output + offset, sources[0], sources[1], value.dtype(), int64_t(count));
    for (int r = 2; r < n; ++r)
      host_accumulate(output + offset, sources[size_t(r)], value.dtype(), int64_t(count));
  }
  const uint8_t done = 1;
  meet(rendezvous, rank, &done, 1, timeout, stop);  // every share is summed
  for (int r = 0; r < n; ++r) {
    if (r == rank) continue;
    const auto [b, e] = share_of(r, n, value.byte_size() / element);
    if (e > b && !read_remote(peers[size_t(r)].pid, peers[size_t(r)].output + b * element,
                              output + b * element, (e - b) * element))
      fail(r, "sum");
  }
  meet(rendezvous, rank, &done, 1, timeout, stop);  // nobody reads this rank's memory now
  return sum;
}

}  // namespace troupe
