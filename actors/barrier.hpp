#pragma once
// The merge_call barrier actor: gathers one arrival per replica, lets core/merge_barrier decide,
// runs the merge once (in cross-replica context, set up by the runner the coordinator provides)
// and hands each parked replica its slice. Event-based; it never blocks.

#include <memory>

#include <caf/fwd.hpp>

#include "actors/replica_group_shared.hpp"

namespace troupe {

/// Spawns the barrier of one replica group.
caf::actor spawn_barrier(caf::actor_system& system, std::shared_ptr<ReplicaGroupShared> shared);

}  // namespace troupe
