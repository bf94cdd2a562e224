#pragma once
// Every atom used by troupe actors, in one place (CAF 0.17 atoms: at most 10 characters).

#include <caf/atom.hpp>

namespace troupe {

using hello_atom = caf::atom_constant<caf::atom("hello")>;  ///< ask a gatekeeper for a challenge
using prove_atom = caf::atom_constant<caf::atom("prove")>;  ///< answer a challenge
using echo_atom = caf::atom_constant<caf::atom("echo")>;    ///< reply with the payload
using sink_atom = caf::atom_constant<caf::atom("sink")>;    ///< consume payload, reply bytes
using ping_atom = caf::atom_constant<caf::atom("ping")>;    ///< liveness probe
using stop_atom = caf::atom_constant<caf::atom("stop")>;    ///< ask a node to shut down
using ready_atom = caf::atom_constant<caf::atom("ready")>;  ///< wait until a group is complete
using bulk_atom = caf::atom_constant<caf::atom("bulk")>;    ///< ask for the bulk-data port
/// (heartbeat_atom, rank): a collective peer of another process is alive
using heartbeat_atom = caf::atom_constant<caf::atom("heartbeat")>;
/// ask a collective peer for its group's shared-memory rendezvous (a segment name, or empty)
using rendezvous_atom = caf::atom_constant<caf::atom("rendezvous")>;
using heartbeat_tick_atom = caf::atom_constant<caf::atom("hbtick")>;  ///< a peer's own timer
/// (replicate_atom, backup, backup name, primary, primary name): set up a ps shard's
/// primary-backup replication
using replicate_atom = caf::atom_constant<caf::atom("replicate")>;
/// (input_position_atom, dataset id, batches) -> bool: a resumed run's per-worker dataset of a
/// step host skips `batches` before its first element (coordinator/ps/step_host.hpp)
using input_position_atom = caf::atom_constant<caf::atom("inputpos")>;
/// (shard_gone_atom, shard): a ps client saw `shard` go away (its backup takes over)
using shard_gone_atom = caf::atom_constant<caf::atom("shardgone")>;

}  // namespace troupe
