#include "coordinator/cluster/small_collective_rendezvous.hpp"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include "coordinator/cluster/cross_memory_all_reduce.hpp"
#include "core/status.hpp"
#include "kernels/host_accumulate.hpp"
#include "messages/atoms.hpp"
#include "messages/error_channel.hpp"
#include "messages/timed_request.hpp"

namespace troupe {
namespace {

using Clock = std::chrono::steady_clock;

/// Polls `done` every millisecond until it holds or `deadline`; false at the deadline. A broken
/// group ends the wait with its reason.
template <class Done>
bool wait_until(Done done, Clock::time_point deadline, const GroupFailure& failure) {
  while (!done()) {
    if (failure.failed()) throw unavailable(failure.why());
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace

std::shared_ptr<ShmRendezvous> offer_rendezvous(int ranks, size_t slot_bytes, int depth) {
  try {
    return ShmRendezvous::create(ranks, slot_bytes, depth);
  } catch (const std::exception& e) {
    std::cerr << "troupe: small all-reduces take the ring: " << e.what() << std::endl;
    return nullptr;
  }
}

std::shared_ptr<ShmRendezvous> offer_group_rendezvous(int ranks, size_t small_bytes,
                                                      size_t piece_bytes) {
  const size_t slot = whole_lines(std::max(small_bytes, piece_bytes));
  try {
    return ShmRendezvous::create(ranks, slot, kLargeAllReduceDepth);
  } catch (const std::exception& e) {
    std::cerr << "troupe: large all-reduces go in pieces of " << whole_lines(small_bytes)
              << " bytes: " << e.what() << std::endl;
  }
  return offer_rendezvous(ranks, whole_lines(small_bytes));
}

std::shared_ptr<ShmRendezvous> agree_on_rendezvous(caf::actor_system& system,
                                                   const caf::actor& rank0_peer, int rank,
                                                   int ranks,
                                                   std::shared_ptr<ShmRendezvous> offered,
                                                   const GroupFailure& failure,
                                                   std::chrono::milliseconds attach_wait) {
  using Decision = ShmRendezvous::Decision;
  if (rank == 0) {
    if (!offered) return nullptr;
    offered->attach(0);
    const bool all = wait_until([&] { return offered->attached() == ranks; },
                                Clock::now() + attach_wait, failure);
    offered->decide(all ? Decision::on : Decision::off);
    offered->unlink();
    if (!all)
      std::cerr << "troupe: small all-reduces take the ring: only " << offered->attached() << " of "
                << ranks << " workers opened the shared-memory rendezvous" << std::endl;
    return all ? offered : nullptr;
  }
  std::string name;
  std::string asked;
  caf::scoped_actor self{system};
  timed_request(self, rank0_peer, attach_wait, rendezvous_atom::value)
      .receive([&](std::string& answer) { name = std::move(answer); },
               [&](caf::error& e) { asked = to_status(e).message(); });
  if (!asked.empty())
    throw unavailable("collective group: rank 0 did not name its shared-memory rendezvous: " +
                      asked);
  if (name.empty()) return nullptr;  // rank 0 offered none
  std::shared_ptr<ShmRendezvous> opened;
  try {
    opened = ShmRendezvous::open(name, ranks);
  } catch (const std::exception& e) {
    // Not attaching makes rank 0 decide against it for everyone.
    std::cerr << "troupe: small all-reduces take the ring: " << e.what() << std::endl;
    return nullptr;
  }
  opened->attach(rank);
  // Rank 0 decides within attach_wait of its own readiness; the margin covers the skew.
  const bool decided = wait_until([&] { return opened->decision() != Decision::pending; },
                                  Clock::now() + attach_wait * 3, failure);
  if (!decided)
    throw unavailable("collective group: rank 0 did not decide on the shared-memory rendezvous " +
                      name + " within " + std::to_string((attach_wait * 3).count()) + " ms");
  return opened->decision() == Decision::on ? opened : nullptr;
}

Tensor rendezvous_all_reduce_sum(ShmRendezvous& rendezvous, int rank, const Tensor& value,
                                 std::chrono::milliseconds timeout, const GroupFailure* failure,
                                 bool cross_memory, CrossMemoryVotes* votes) {
  ShmRendezvous::StopFn stop = [failure] { return failure ? failure->why() : std::string(); };
  // Every rank holds the same size, so every rank takes the same branch.
  if (rendezvous.ranks() >= 2 && value.byte_size() >= kCrossMemoryMinBytes)
    if (auto sum = cross_memory_all_reduce_sum(rendezvous, rank, value, cross_memory, timeout, stop,
                                               votes))
      return *std::move(sum);
  return rendezvous_pieces_sum(rendezvous, rank, value, timeout, failure);
}

Tensor rendezvous_pieces_sum(ShmRendezvous& rendezvous, int rank, const Tensor& value,
                             std::chrono::milliseconds timeout, const GroupFailure* failure) {
  ShmRendezvous::StopFn stop = [failure] { return failure ? failure->why() : std::string(); };
  const size_t element = dtype_size(value.dtype());
  // Whole elements per piece; a slot always holds at least one (slots are multiples of 64).
  const size_t piece = rendezvous.slot_bytes() / element * element;
  const size_t total = value.byte_size();
  // Zero bytes still make one call, so that every rank makes the same calls whatever it holds.
  const size_t pieces = std::max<size_t>(1, (total + piece - 1) / piece);
  auto bytes_of = [&](size_t i) { return std::min(piece, total - i * piece); };
  const auto* mine = static_cast<const char*>(value.raw_data());
  Tensor sum(value.dtype(), value.shape());
  auto* out = static_cast<char*>(sum.raw_data());
  // Up to depth - 1 pieces are posted ahead of the one being summed: a rank that has a core
  // copies on while its partner waits for one, instead of meeting it at every piece.
  const size_t ahead = size_t(rendezvous.depth() - 1);
  std::vector<uint64_t> calls(pieces);
  auto post = [&](size_t i) {
    calls[i] = rendezvous.post(rank, mine + i * piece, bytes_of(i), timeout, stop);
  };
  for (size_t i = 0; i < std::min(ahead, pieces); ++i) post(i);
  for (size_t i = 0; i < pieces; ++i) {
    if (i + ahead < pieces) post(i + ahead);
    const size_t at = i * piece, bytes = bytes_of(i);
    auto slots = rendezvous.collect(rank, calls[i], bytes, timeout, stop);
    // Rank order, every rank: the same bits everywhere. This rank's own input stands in for its
    // slot (the same bytes, one read of shared memory less).
    slots[size_t(rank)] = mine + at;
    const auto count = int64_t(bytes / element);
    if (slots.size() == 1) {
      if (bytes > 0) std::memcpy(out + at, slots[0], bytes);
    } else {
      host_add_into(out + at, slots[0], slots[1], value.dtype(), count);
    }
    for (size_t r = 2; r < slots.size(); ++r)
      host_accumulate(out + at, slots[r], value.dtype(), count);
    rendezvous.release(rank, calls[i]);
  }
  return sum;
}

}  // namespace troupe
