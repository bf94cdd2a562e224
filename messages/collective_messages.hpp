#pragma once
// Messages of the collective peer actors. CollectiveMessage (core/collective) is the algorithms'
// own chunk message; here it gets its wire form so the same ring runs between processes.

#include <cstdint>
#include <vector>

#include <caf/actor.hpp>
#include <caf/atom.hpp>

#include "core/collective/collective_message.hpp"
#include "messages/tensor_wire.hpp"

namespace troupe {

/// CAF 0.17 inspect for the algorithms' chunk message; the phase is validated on load.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, CollectiveMessage& x) {
  uint8_t phase = static_cast<uint8_t>(x.phase);
  int32_t from = x.from, to = x.to;
  if constexpr (wire::is_loading<Inspector>) {
    auto store = caf::meta::load_callback([&]() -> caf::error {
      if (phase > static_cast<uint8_t>(CollectivePhase::broadcast))
        return wire::malformed("collective phase " + std::to_string(phase));
      x.phase = static_cast<CollectivePhase>(phase);
      x.from = from;
      x.to = to;
      return caf::none;
    });
    return f(caf::meta::type_name("collective_message"), x.instance, from, to, phase, x.step,
             x.chunk, x.offset, x.count, x.payload, store);
  } else {
    return f(caf::meta::type_name("collective_message"), x.instance, from, to, phase, x.step,
             x.chunk, x.offset, x.count, x.payload);
  }
}

/// Launcher -> peer: join collective `instance` with this input (kind is a CrossDeviceOpKind).
struct collective_start_msg {
  int64_t instance = 0;
  int32_t kind = 0;
  int32_t group_size = 1;
  int64_t chunk_bytes = 1 << 20;
  int32_t root = 0;
  int64_t tensor_index = 0;
  Tensor input;
  /// Optional: the result buffer all ranks of this process share (CollectiveSpec::shared_output).
  Tensor shared_output;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, collective_start_msg& x) {
  return f(caf::meta::type_name("collective_start_msg"), x.instance, x.kind, x.group_size,
           x.chunk_bytes, x.root, x.tensor_index, x.input, x.shared_output);
}

/// Launcher -> peer: the group, peers[r] being rank r's peer actor (possibly remote).
struct collective_peers_msg {
  int32_t rank = 0;
  std::vector<caf::actor> peers;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, collective_peers_msg& x) {
  return f(caf::meta::type_name("collective_peers_msg"), x.rank, x.peers);
}

/// Rank `rank` -> another rank's peer: "my peer actor is `peer`". Lets only one side of each
/// pair of processes open a connection (two crossing middleman connections per node pair were
/// seen to lose messages when CAF dropped the duplicate).
struct collective_join_msg {
  int32_t rank = 0;
  caf::actor peer;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, collective_join_msg& x) {
  return f(caf::meta::type_name("collective_join_msg"), x.rank, x.peer);
}

/// Peer -> peer of another process, after the group is known: "my data listener is at
/// (std::string host, uint16_t port); dial it to send me chunks". Sent as
/// (collective_data_atom, int32_t rank, std::string host, uint16_t port): builtin types only, so
/// no new registered message type. A peer without a data plane never sends it and ignores it.
/// (collective_data_atom) alone asks a local peer for its data plane: (std::string host,
/// uint16_t port, uint64_t payload bytes sent, uint64_t received); an error without a plane.
using collective_data_atom = caf::atom_constant<caf::atom("cdata")>;
/// Data plane thread -> its own peer (local only): (collective_data_failed_atom, int32_t rank,
/// std::string why) — a data connection to or from `rank` broke or stalled.
using collective_data_failed_atom = caf::atom_constant<caf::atom("cdatafail")>;

}  // namespace troupe
