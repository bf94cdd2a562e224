#pragma once
// A replica: one per device, a plain thread owned by its ReplicaGroup (not an actor: nothing
// addresses it). It runs the steps its group's StepExchange hands it and parks at merge_call on
// a Handoff that the barrier fills (a CAF blocking receive costs 60-180 us; the handoff a few):
// merge_call suspends the step function mid-way, exactly as TensorFlow parks a replica thread.
// Facts other actors decide on go to them as messages (arrivals and finished steps to the
// barrier, collectives to this replica's peer), sent through a scoped actor the thread owns.
// The thread ends when the exchange closes; the group joins it.

#include <memory>
#include <thread>

#include <caf/fwd.hpp>

#include "actors/replica_group_shared.hpp"

namespace troupe {

/// Starts replica `replica` of a group whose barrier is `barrier` and whose collectives go
/// through the collective peer actor `peer`; join the thread after closing the group's steps.
/// `flush_denormals`: the thread flushes subnormal floats to zero (core/float_mode.hpp).
std::thread start_replica_thread(caf::actor_system& system, int replica,
                                 std::shared_ptr<ReplicaGroupShared> shared, caf::actor barrier,
                                 caf::actor peer, bool flush_denormals);

}  // namespace troupe
