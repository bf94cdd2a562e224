#pragma once
// The parameter-server shard actor (spec cluster-and-ps.md §6, §7.1): it owns whole variables
// and row ranges of sharded ones, and serves the messages of messages/ps_messages.hpp — create,
// read (pull), gather rows, assign* / scatter*, optimizer steps (dense, or rows with per-row
// slots), save / restore, and stop_atom (the job is over: it quits) — applying them in arrival
// order (the asynchronous semantics). Updates are deduplicated by step id, so a retried step is
// applied exactly once. The logic lives in actors/ps_shard_store.hpp; this actor is the message
// face of it, the same in this process or behind a gatekeeper in another one.
//
// Primary-backup (replication 2): `(replicate_atom, backup, backup_name, primary,
// primary_name)` tells a shard where to copy its own variables' changes and whose copies it
// holds. A primary applies a create / write / optimizer step / restore, sends the same message
// to its backup, and acknowledges only once the backup has applied it; copies from its primary
// are applied without copying further. When the primary goes away the backup serves those
// variables as their primary (clients fail over, coordinator/ps/ps_client.hpp), without a
// backup; a backup that goes away leaves its primary without one. Both say so on stderr.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "kernels/registry.hpp"
#include "kernels/update_rule.hpp"

namespace troupe {

struct ps_rule_msg;

/// How a ps_shard is set up.
struct PsShardOptions {
  std::string name = "ps:0";                      ///< named in every error it returns
  std::shared_ptr<const KernelRegistry> kernels;  ///< CPU kernels; required
  /// The port of this process's ps bulk connection (actors/ps_bulk_server.hpp), answered to
  /// (bulk_atom); 0 = none: large values then travel as CAF messages.
  uint16_t bulk_port = 0;
  /// How long a primary waits for its backup to take a copy (replication 2).
  std::chrono::milliseconds replica_timeout{std::chrono::seconds(60)};
};

/// Spawns a ps_shard. Throws invalid_argument when options.kernels is missing.
caf::actor spawn_ps_shard(caf::actor_system& sys, PsShardOptions options);

/// The wire form of an optimizer rule, and back (invalid_argument naming an unknown kind).
ps_rule_msg to_rule_msg(const UpdateRule& rule);
UpdateRule from_rule_msg(const ps_rule_msg& msg);

}  // namespace troupe
