#include "coordinator/cluster/small_collective_rendezvous.hpp"

#include <cstring>
#include <iostream>
#include <string>
#include <thread>

#include <caf/all.hpp>

#include "core/status.hpp"
#include "kernels/host_accumulate.hpp"
#include "messages/atoms.hpp"
#include "messages/error_channel.hpp"

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

std::shared_ptr<ShmRendezvous> offer_rendezvous(int ranks, size_t slot_bytes) {
  try {
    return ShmRendezvous::create(ranks, slot_bytes);
  } catch (const std::exception& e) {
    std::cerr << "troupe: small all-reduces take the ring: " << e.what() << std::endl;
    return nullptr;
  }
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
  self->request(rank0_peer, attach_wait, rendezvous_atom::value)
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
                                 std::chrono::milliseconds timeout, const GroupFailure* failure) {
  auto stop = [failure] { return failure ? failure->why() : std::string(); };
  auto slots = rendezvous.exchange(rank, value.raw_data(), value.byte_size(), timeout, stop);
  Tensor sum(value.dtype(), value.shape());
  std::memcpy(sum.raw_data(), slots[0], value.byte_size());
  for (size_t r = 1; r < slots.size(); ++r)
    host_accumulate(sum.raw_data(), slots[r], value.dtype(), value.num_elements());
  return sum;
}

}  // namespace troupe
