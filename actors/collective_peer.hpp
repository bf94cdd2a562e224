#pragma once
// The collective peer actor: one per rank of a collective group. It runs the pure state machines
// of core/collective by routing the messages they emit to the peers that own the addressed ranks
// — local actors or remote proxies, the actor does not care, which is what lets the same ring run
// inside one process and between processes. Event-based: it never blocks; reductions run in its
// handlers, so the peers of one process reduce in parallel on the scheduler's threads.
//
// Protocol: (collective_peers_msg) once; then per collective a request with collective_start_msg,
// answered with tensor_msg{instance, result} when this rank is done, or an error naming the
// collective. Chunk messages (CollectiveMessage) that arrive before the local start are kept.

#include <caf/fwd.hpp>

namespace troupe {

/// Spawns an unconnected peer; send it a collective_peers_msg before the first start. At most
/// `max_early_messages` chunks of one collective are kept before this rank starts it; beyond
/// that the collective fails (its start is answered with an error naming the limit).
caf::actor spawn_collective_peer(caf::actor_system& system, size_t max_early_messages = 1 << 16);

}  // namespace troupe
