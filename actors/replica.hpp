#pragma once
// The replica actor: one per device, on its own thread (detached), the one actor allowed to
// block — merge_call suspends the step function mid-way, exactly as TensorFlow parks a replica
// thread. It runs the steps its group's StepExchange hands it and parks at merge_call on a
// Handoff that the barrier fills (a CAF blocking receive costs 60-180 us; the handoff a few).
// It ends when the exchange closes (ReplicaGroup's destructor).

#include <memory>

#include <caf/fwd.hpp>

#include "actors/replica_group_shared.hpp"

namespace troupe {

/// Spawns replica `replica` of a group whose barrier is `barrier` and whose collectives go
/// through the collective peer actor `peer`.
caf::actor spawn_replica(caf::actor_system& system, int replica,
                         std::shared_ptr<ReplicaGroupShared> shared, caf::actor barrier,
                         caf::actor peer);

}  // namespace troupe
