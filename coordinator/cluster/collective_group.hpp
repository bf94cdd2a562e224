#pragma once
// A worker's membership in the collective group of its cluster: the collective peer actor of
// this process, published behind the shared-secret gatekeeper (and mutual TLS when the actor
// system carries certificates) at this task's address, and connected to every other worker's
// peer. The higher rank of each pair dials the lower one, retrying until the group's deadline
// (workers start in any order), and announces its own peer. Every peer monitors the others, so
// a worker that dies fails the collectives waiting on it within milliseconds, naming its rank.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "coordinator/collectives/worker_collective.hpp"
#include "core/host_port.hpp"

namespace troupe {

struct CollectiveGroupOptions {
  std::string secret;  ///< the cluster's shared secret (every connection proves it)
  bool tls = false;    ///< publish and dial through CAF's openssl module
  /// Chunks of all-reduces travel over the collective data plane (net/collective_data_plane:
  /// shared memory between processes of one host, authenticated TCP otherwise — not encrypted,
  /// also under TLS) instead of the middleman, which CAF control messages keep using.
  bool data_plane = true;
  /// Heartbeats between the workers' peers: every `heartbeat_ms`, and a worker silent for
  /// `heartbeat_timeout_ms` fails every collective naming it (0: no heartbeats).
  int heartbeat_ms = 250;
  int heartbeat_timeout_ms = 1500;
  /// When every worker listens on a loopback address (one host) and the data plane is on,
  /// all-reduce packs of at most this many bytes meet in a shared-memory rendezvous instead of
  /// the ring (coordinator/cluster/small_collective_rendezvous.hpp); 0: never.
  size_t small_collective_bytes = size_t(64) << 10;
  /// Larger packs, on one host: read from the other workers' memory where the strategy's
  /// CommunicationOptions::cross_memory offers it and every worker can, else summed through the
  /// same rendezvous in pieces of this many bytes.
  size_t large_piece_bytes = size_t(1) << 20;
  /// The whole group must have assembled by then, or the constructor fails naming who is missing.
  std::chrono::milliseconds assemble_timeout{std::chrono::seconds(60)};
};

class CollectiveGroup {
 public:
  /// Joins the group of `members` (every worker's address, in rank order) as `rank`, listening
  /// on members[rank]. Throws unavailable naming the address that cannot be listened on, the
  /// member that could not be reached in time, or failed_precondition for a refused secret.
  CollectiveGroup(caf::actor_system& system, std::vector<HostPort> members,
                  std::vector<std::string> names, int rank, CollectiveGroupOptions options);
  /// Stops this worker's peer and gatekeeper (the other workers see it go).
  ~CollectiveGroup();
  CollectiveGroup(const CollectiveGroup&) = delete;
  CollectiveGroup& operator=(const CollectiveGroup&) = delete;

  const caf::actor& peer() const { return peer_; }
  int rank() const { return rank_; }
  const std::vector<std::string>& names() const { return names_; }
  /// What peer_worker_collective needs to take small all-reduces around the actors (an empty
  /// rendezvous when the group has none).
  OneHostCollectivePath one_host_path() const { return one_host_; }

 private:
  caf::actor peer_, gatekeeper_;
  int rank_;
  std::vector<std::string> names_;
  OneHostCollectivePath one_host_;
};

}  // namespace troupe
