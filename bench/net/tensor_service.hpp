#pragma once
// The service a node exposes behind its gatekeeper: echoes or consumes tensor chunks.

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

namespace troupe {

/// Spawns the tensor service: (echo_atom, tensor_chunk_msg) -> the same chunk;
/// (sink_atom, tensor_chunk_msg) -> uint64_t bytes received; (ping_atom) -> ping_atom.
caf::actor spawn_tensor_service(caf::actor_system& sys);

}  // namespace troupe
