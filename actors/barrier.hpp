#pragma once
// The merge_call barrier actor of one replica group: it times the rounds that the replica threads
// decide in shared memory (actors/merge_rounds), failing a round that waits longer than the
// group's merge timeout with the names of the replicas that did not arrive. Event-based; it never
// blocks. The group's worker monitors it: when it goes away, parked replicas fail at once.

#include <memory>

#include <caf/fwd.hpp>

#include "actors/replica_group_shared.hpp"

namespace troupe {

/// Spawns the barrier of one replica group.
caf::actor spawn_barrier(caf::actor_system& system, std::shared_ptr<ReplicaGroupShared> shared);

}  // namespace troupe
