#include "coordinator/cluster/collective_group.hpp"

#include <algorithm>
#include <optional>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include "actors/collective_peer.hpp"
#include "coordinator/cluster/small_collective_rendezvous.hpp"
#include "core/status.hpp"
#include "messages/atoms.hpp"
#include "messages/collective_messages.hpp"
#include "messages/error_channel.hpp"
#include "messages/timed_request.hpp"
#include "net/bind_address.hpp"
#include "net/gatekeeper.hpp"
#include "net/tls_transport.hpp"
#include "net/wire_client.hpp"

namespace troupe {
namespace {

using Clock = std::chrono::steady_clock;

// Dials a lower rank until it answers or the deadline passes: it may not be listening yet.
caf::actor dial(caf::actor_system& system, const HostPort& address, const std::string& name,
                const CollectiveGroupOptions& options, Clock::time_point deadline) {
  WireClientOptions connect;
  connect.host = address.socket_host();
  connect.port = uint16_t(address.port);
  connect.secret = options.secret;
  connect.tls = options.tls;
  connect.timeout = std::chrono::milliseconds(5000);
  std::string last;
  while (true) {
    try {
      return connect_to_service(system, connect);
    } catch (const Error& e) {
      if (e.code() != Code::unavailable) throw;  // a refused secret does not get better
      last = e.what();
    }
    if (Clock::now() >= deadline)
      throw unavailable("collective group: " + name + " at " + address.host + ":" +
                        std::to_string(address.port) + " did not answer within " +
                        std::to_string(options.assemble_timeout.count()) + " ms: " + last);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

CollectiveGroup::CollectiveGroup(caf::actor_system& system, std::vector<HostPort> members,
                                 std::vector<std::string> names, int rank,
                                 CollectiveGroupOptions options)
    : rank_(rank), names_(std::move(names)) {
  const int size = int(members.size());
  if (rank < 0 || rank >= size || names_.size() != members.size())
    throw invalid_argument("collective group: rank " + std::to_string(rank) + " of " +
                           std::to_string(size) + " members with " + std::to_string(names_.size()) +
                           " names");
  const auto deadline = Clock::now() + options.assemble_timeout;
  CollectivePeerTransport transport;
  transport.data_plane = options.data_plane;
  transport.data.secret = options.secret;
  transport.data.host = members[size_t(rank)].socket_host();
  transport.heartbeat_ms = options.heartbeat_ms;
  transport.heartbeat_timeout_ms = options.heartbeat_timeout_ms;
  auto failure = std::make_shared<GroupFailure>();
  transport.failure = failure;
  bool one_host = options.data_plane && options.small_collective_bytes > 0 && size > 1;
  for (auto& m : members) one_host = one_host && is_loopback_address(m.socket_host());
  std::shared_ptr<ShmRendezvous> offered;
  if (one_host && rank == 0) {
    offered =
        offer_group_rendezvous(size, options.small_collective_bytes, options.large_piece_bytes);
    if (offered) transport.rendezvous = offered->name();
  }
  peer_ = spawn_collective_peer(system, transport);
  gatekeeper_ = spawn_gatekeeper(system, options.secret, peer_);
  try {
    const HostPort& me = members[size_t(rank)];
    auto published =
        publish_actor(system, gatekeeper_, uint16_t(me.port), me.socket_host(), options.tls);
    if (!published)
      throw unavailable("collective group: " + names_[size_t(rank)] + " cannot listen on " +
                        me.host + ":" + std::to_string(me.port) + ": " +
                        system.render(published.error()));
    std::vector<caf::actor> peers(static_cast<size_t>(size));
    peers[size_t(rank)] = peer_;
    for (int r = 0; r < rank; ++r) {
      peers[size_t(r)] = dial(system, members[size_t(r)], names_[size_t(r)], options, deadline);
      caf::anon_send(peers[size_t(r)], collective_join_msg{rank, peer_});
    }
    caf::anon_send(peer_, collective_peers_msg{rank, peers});
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    caf::scoped_actor self{system};
    std::optional<Status> not_ready;
    timed_request(self, peer_, std::max(left, std::chrono::milliseconds(1)), ready_atom::value)
        .receive([](int32_t) {}, [&](caf::error& e) { not_ready = to_status(e); });
    if (not_ready) {
      std::string missing;
      for (int r = rank + 1; r < size; ++r)
        missing += (missing.empty() ? "" : ", ") + names_[size_t(r)];
      throw unavailable(
          "collective group: the workers did not all join within " +
          std::to_string(options.assemble_timeout.count()) + " ms (" +
          (missing.empty() ? std::string("waiting for the group") : "waiting for " + missing) +
          "): " + not_ready->message());
    }
    if (one_host)
      one_host_.rendezvous = agree_on_rendezvous(system, peers[0], rank, size, offered, *failure);
    one_host_.failure = failure;
    one_host_.small_bytes = whole_lines(options.small_collective_bytes);
  } catch (...) {
    caf::anon_send_exit(gatekeeper_, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(peer_, caf::exit_reason::user_shutdown);
    throw;
  }
}

CollectiveGroup::~CollectiveGroup() {
  caf::anon_send_exit(gatekeeper_, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(peer_, caf::exit_reason::user_shutdown);
}

}  // namespace troupe
