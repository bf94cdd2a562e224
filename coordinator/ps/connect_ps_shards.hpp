#pragma once
// The worker / coordinator side of a cluster's parameter servers: from the cluster (TF_CONFIG)
// and its credentials, reach the ps_shard actor every `troupe server --job ps` task publishes
// behind its gatekeeper, and hand back the handles in task order — what ParameterServerStrategy
// is constructed from. A ps task that has not started listening yet is retried until the
// deadline (tasks start in any order); one that never answers is named with its address.

#include <chrono>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "coordinator/ps/ps_bulk_client.hpp"
#include "core/cluster_spec.hpp"

namespace troupe {

class PsClient;

struct PsConnectOptions {
  std::string secret;  ///< the cluster's shared secret (the gatekeeper checks the proof)
  bool tls = false;    ///< dial through CAF's openssl module (the actor system must carry certs)
  /// Every ps task must have answered by then (all tasks together, not per task).
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

/// The cluster's ps tasks, connected: handles[k] is the shard of /job:ps/task:<indices[k]>.
struct PsShards {
  std::vector<caf::actor> handles;
  std::vector<std::string> tasks;  ///< "/job:ps/task:k", same order
  std::vector<std::string> addresses;

  /// How errors name each shard: "'ps:1' (/job:ps/task:1 at 10.0.0.3:2222)" — the shard's own
  /// name (as `troupe server` names it) and its task. For PsClient::name_shards.
  std::vector<std::string> labels() const;
};

/// Connects to every task of the cluster's "ps" job in index order. Throws invalid_argument
/// when the cluster has no ps job, unavailable naming the task and address that did not answer
/// within `options.timeout`, failed_precondition for a refused secret (naming the task).
PsShards connect_ps_shards(caf::actor_system& system, const ClusterSpec& cluster,
                           const PsConnectOptions& options);

/// Lets `client` move large values to and from every ps task of `shards` on the task's bulk
/// connection (coordinator/ps/ps_bulk_client.hpp): asks each shard for its bulk port and
/// registers a bulk client for it, naming it as labels() does. A task that offers none (a TLS
/// task on a non-loopback address keeps every byte in the encrypted middleman) is left on CAF.
/// Gathers, pushes and applies below `min_bytes` stay CAF messages. Returns how many tasks take
/// bulk values. Throws unavailable naming a task that does not answer.
size_t use_ps_bulk(caf::actor_system& system, const PsShards& shards,
                   const PsConnectOptions& options, PsClient& client,
                   uint64_t min_bytes = kPsBulkMinBytes);

/// Connects to the services tasks `indices` of `job` publish behind their gatekeepers (e.g.
/// the step hosts of a parameter_server run's workers), in that order, with the retries and
/// errors of connect_ps_shards ("worker task /job:worker/task:1 at ... did not answer ...").
std::vector<caf::actor> connect_cluster_tasks(caf::actor_system& system, const ClusterSpec& cluster,
                                              const std::string& job,
                                              const std::vector<int>& indices,
                                              const PsConnectOptions& options);

/// Tells every ps task that the job is over: each shard stops and its `troupe server` exits 0.
/// Fire and forget (a task that is already gone is not an error).
void stop_ps_shards(const PsShards& shards);

}  // namespace troupe
