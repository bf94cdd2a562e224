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
//
// Between processes a peer spawned with a data plane (net/collective_data_plane.hpp) moves the
// chunks of large collectives over direct authenticated TCP connections instead of the
// middleman: once the group is known it tells every peer of another process where its data
// listener is (collective_data_atom); each side dials the other to send. The protocol above is
// unchanged. A collective uses the data plane when its input has at least `inline_below_bytes`
// and every remote rank's data connection is up at its start; all of that collective's chunks
// then take the same path, so no rank ever mixes paths within one collective.

#include <cstdint>
#include <memory>
#include <string>

#include <caf/fwd.hpp>

#include "core/collective/group_failure.hpp"
#include "net/collective_data_plane.hpp"

namespace troupe {

/// Spawns an unconnected peer; send it a collective_peers_msg before the first start. At most
/// `max_early_messages` chunks of one collective are kept before this rank starts it; beyond
/// that the collective fails (its start is answered with an error naming the limit).
caf::actor spawn_collective_peer(caf::actor_system& system, size_t max_early_messages = 1 << 16);

/// Where a peer's chunks travel.
struct CollectivePeerTransport {
  /// Off: every chunk goes in CAF messages (peers of one process, where they are free views).
  bool data_plane = false;
  CollectiveDataPlaneOptions data;
  /// Collectives with smaller inputs stay inline in CAF messages even with a data plane.
  int64_t inline_below_bytes = 0;
  /// Heartbeats to peers of other processes every `heartbeat_ms` (0: none). A peer of another
  /// process that sends none for `heartbeat_timeout_ms` fails the group naming its rank: a host
  /// that vanished without closing its connections (power loss, a cut link, a stopped process)
  /// is named as fast as one whose connection dropped, not at a collective's timeout.
  int heartbeat_ms = 0;
  int heartbeat_timeout_ms = 2000;
  /// Told the first reason the group broke, for threads that wait outside this actor.
  std::shared_ptr<GroupFailure> failure;
  /// The name of the group's shared-memory rendezvous (rank 0 creates it), answered to
  /// rendezvous_atom so that the other ranks can open it; empty when there is none.
  std::string rendezvous;
};

/// As above, with `transport`; ready_atom is answered once the group is known and, with a data
/// plane, every rank of another process can be sent to directly.
caf::actor spawn_collective_peer(caf::actor_system& system, CollectivePeerTransport transport,
                                 size_t max_early_messages = 1 << 16);

}  // namespace troupe
