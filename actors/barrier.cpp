#include "actors/barrier.hpp"

#include <caf/all.hpp>

#include "messages/replica_messages.hpp"

namespace troupe {
namespace {

struct barrier_state {
  static inline const char* name = "troupe.barrier";
  std::shared_ptr<ReplicaGroupShared> shared;
};

using barrier_actor = caf::stateful_actor<barrier_state>;

// The rounds themselves are decided by the replica threads (actors/merge_rounds): this actor
// times them. A replica that opens a round while no timer runs sends merge_timeout_msg; so does
// the timer, which re-arms itself while rounds keep opening (CAF 0.17's delayed_send cannot be
// cancelled: at most one is pending, and MergeRounds ignores a firing for a round done).
caf::behavior barrier(barrier_actor* self, std::shared_ptr<ReplicaGroupShared> shared) {
  self->state.shared = std::move(shared);
  return {
      [=](const merge_timeout_msg&) {
        if (auto next = self->state.shared->rounds.timer_fired())
          self->delayed_send(self, *next, merge_timeout_msg{});
      },
  };
}

}  // namespace

caf::actor spawn_barrier(caf::actor_system& system, std::shared_ptr<ReplicaGroupShared> shared) {
  return system.spawn(barrier, std::move(shared));
}

}  // namespace troupe
