#include "actors/collective_peer.hpp"

#include <chrono>
#include <deque>
#include <map>
#include <set>

#include <caf/all.hpp>

#include "core/collective/algorithm_choice.hpp"
#include "kernels/host_accumulate.hpp"
#include "messages/atoms.hpp"
#include "messages/collective_messages.hpp"
#include "messages/error_channel.hpp"
#include "messages/tensor_msg.hpp"

namespace troupe {
namespace {

struct peer_state {
  static inline const char* name = "troupe.collective_peer";
  struct Running {
    std::unique_ptr<CollectiveAlgorithm> algorithm;
    caf::response_promise promise;
    bool direct = false;  // chunks to other processes go over the data plane
  };
  CollectivePeerTransport transport;
  std::unique_ptr<CollectiveDataPlane> data;  // once the rank is known, with transport.data_plane
  std::set<int32_t> announced;                // ranks told where our data listener is
  std::map<int32_t, std::pair<std::string, uint16_t>> listeners;  // heard before `data` existed
  int32_t rank = -1;
  std::vector<caf::actor> peers;
  std::map<int64_t, Running> running;
  std::map<int64_t, std::vector<CollectiveMessage>> early;  // chunks ahead of our start
  std::set<int64_t> failed_early;                           // early buffer overflowed
  std::vector<caf::response_promise> waiting_for_group;     // ready requests
  std::map<caf::actor_addr, int32_t> watched;               // monitored peers -> their rank
  std::string group_down;  // set once a peer went away: every collective after it fails
  bool heartbeat_started = false;
  std::map<int32_t, std::chrono::steady_clock::time_point> last_heard;  // remote rank -> heartbeat
  bool group_complete() const {
    if (rank < 0 || peers.empty()) return false;
    for (auto& p : peers)
      if (!p) return false;
    return true;
  }
  bool is_remote(size_t r, const caf::node_id& here) const {
    return r < peers.size() && peers[r] && peers[r].node() != here;
  }
  /// True when every rank of another process can be sent to over the data plane.
  bool direct_ready(const caf::node_id& here) const {
    if (!data) return false;
    for (size_t r = 0; r < peers.size(); ++r)
      if (is_remote(r, here) && !data->can_send(int(r))) return false;
    return true;
  }
  /// Ready for ready_atom: the group, and the data connections when there is a data plane.
  bool ready(const caf::node_id& here) const {
    return group_complete() && (!transport.data_plane || direct_ready(here));
  }
};

using peer_actor = caf::stateful_actor<peer_state>;

void fail(peer_state& st, int64_t instance, const Status& why) {
  auto it = st.running.find(instance);
  if (it == st.running.end()) return;
  if (st.data) st.data->unland(instance);
  it->second.promise.deliver(
      to_caf_error(Status(why.code(), "collective " + std::to_string(instance) + " on rank " +
                                          std::to_string(st.rank) + ": " + why.message())));
  st.running.erase(it);
}

/// Monitors the peers of other ranks (local actors or remote proxies alike), so that one that
/// goes away fails the collectives waiting on it at once instead of at their timeout.
void watch_peers(peer_actor* self) {
  auto& st = self->state;
  for (size_t r = 0; r < st.peers.size(); ++r) {
    const auto& peer = st.peers[r];
    if (!peer || peer == caf::actor{self} || st.watched.count(peer.address())) continue;
    self->monitor(peer);
    st.watched.emplace(peer.address(), int32_t(r));
  }
}

/// The group is broken (`what` names the rank): every running collective and every later one
/// fails with the first such reason.
void fail_group(peer_actor* self, const std::string& what) {
  auto& st = self->state;
  if (st.group_down.empty()) st.group_down = what;
  if (st.transport.failure) st.transport.failure->set(st.group_down);
  Status why(Code::unavailable, st.group_down);
  std::vector<int64_t> instances;
  for (auto& [instance, running] : st.running) instances.push_back(instance);
  for (auto instance : instances) fail(st, instance, why);
  for (auto& rp : st.waiting_for_group) rp.deliver(to_caf_error(why));
  st.waiting_for_group.clear();
}

/// A monitored peer went away: every running collective and every later one fails naming it.
void on_peer_down(peer_actor* self, const caf::down_msg& down) {
  auto& st = self->state;
  auto it = st.watched.find(down.source);
  if (it == st.watched.end()) return;
  fail_group(self,
             "rank " + std::to_string(it->second) + " is down: " + describe_exit(down.reason));
}

/// One heartbeat period: tell every peer of another process that this rank is alive, and fail
/// the group naming a peer of another process that has been silent too long.
void heartbeat(peer_actor* self) {
  auto& st = self->state;
  if (!st.group_down.empty()) return;
  const auto now = std::chrono::steady_clock::now();
  const auto limit = std::chrono::milliseconds(st.transport.heartbeat_timeout_ms);
  for (size_t r = 0; r < st.peers.size(); ++r) {
    if (!st.is_remote(r, self->node())) continue;
    self->send(st.peers[r], heartbeat_atom::value, st.rank);
    auto heard = st.last_heard.emplace(int32_t(r), now).first->second;
    if (now - heard > limit) {
      fail_group(self, "rank " + std::to_string(r) + " is down: no heartbeat for " +
                           std::to_string(st.transport.heartbeat_timeout_ms) +
                           " ms (its process is stopped or its host unreachable)");
      return;
    }
  }
  self->delayed_send(self, std::chrono::milliseconds(st.transport.heartbeat_ms),
                     heartbeat_tick_atom::value);
}

void start_heartbeat_once(peer_actor* self) {
  auto& st = self->state;
  if (st.heartbeat_started || st.transport.heartbeat_ms <= 0 || !st.group_complete()) return;
  st.heartbeat_started = true;
  heartbeat(self);
}

void notify_if_ready(peer_actor* self) {
  auto& st = self->state;
  start_heartbeat_once(self);
  if (!st.ready(self->node())) return;
  for (auto& rp : st.waiting_for_group) rp.deliver(int32_t(st.peers.size()));
  st.waiting_for_group.clear();
}

/// Dials rank `r`'s data listener (blocking for the handshake, which a live peer answers at once).
void dial(peer_actor* self, int32_t r, const std::string& host, uint16_t port) {
  auto& st = self->state;
  if (st.data->can_send(r)) return;
  try {
    st.data->connect(r, host, port);
  } catch (const std::exception& e) {
    fail_group(self, e.what());  // "data connection to rank R: ..." names the rank
    return;
  }
  notify_if_ready(self);
}

/// Starts the data plane once our rank is known, and tells every peer of another process where
/// it listens (each once).
void announce_data_plane(peer_actor* self) {
  auto& st = self->state;
  if (!st.transport.data_plane || st.rank < 0) return;
  if (!st.data) {
    caf::actor_addr me = self->address();  // weak: the plane's threads must not keep us alive
    auto deliver = [me](CollectiveMessage&& m) {
      if (auto peer = caf::actor_cast<caf::actor>(me)) caf::anon_send(peer, std::move(m));
    };
    auto failed = [me](int rank, const std::string& why) {
      if (auto peer = caf::actor_cast<caf::actor>(me))
        caf::anon_send(peer, collective_data_failed_atom::value, int32_t(rank), why);
    };
    try {
      st.data = std::make_unique<CollectiveDataPlane>(st.rank, st.transport.data, deliver, failed);
    } catch (const std::exception& e) {
      fail_group(self,
                 "rank " + std::to_string(st.rank) + " cannot start its data plane: " + e.what());
      return;
    }
    auto heard = std::move(st.listeners);
    for (auto& [r, where] : heard) dial(self, r, where.first, where.second);
  }
  for (size_t r = 0; r < st.peers.size(); ++r) {
    if (!st.is_remote(r, self->node()) || st.announced.count(int32_t(r))) continue;
    self->send(st.peers[r], collective_data_atom::value, st.rank, st.data->host(), st.data->port());
    st.announced.insert(int32_t(r));
  }
}

/// Sends what the algorithm emitted; messages to our own rank are consumed in place.
void route(peer_actor* self, int64_t instance, std::vector<CollectiveMessage> out) {
  auto& st = self->state;
  std::deque<CollectiveMessage> local;
  const bool direct = st.running.at(instance).direct;
  auto dispatch = [&](std::vector<CollectiveMessage>& msgs) {
    for (auto& m : msgs) {
      if (m.to == st.rank) {
        local.push_back(std::move(m));
      } else if (m.to >= 0 && size_t(m.to) < st.peers.size()) {
        if (direct && st.is_remote(size_t(m.to), self->node()))
          st.data->send(std::move(m));
        else
          self->send(st.peers[size_t(m.to)], std::move(m));
      } else {
        throw internal_error("collective message for rank " + std::to_string(m.to) +
                             " outside a group of " + std::to_string(st.peers.size()));
      }
    }
  };
  dispatch(out);
  auto& algorithm = *st.running.at(instance).algorithm;
  while (!local.empty()) {
    auto more = algorithm.on_message(local.front());
    local.pop_front();
    dispatch(more);
  }
  if (algorithm.done()) {
    if (st.data) st.data->unland(instance);
    auto it = st.running.find(instance);
    it->second.promise.deliver(tensor_msg{uint64_t(instance), algorithm.result()});
    st.running.erase(it);
  }
}

caf::behavior collective_peer(peer_actor* self, CollectivePeerTransport transport,
                              size_t max_early_messages) {
  self->state.transport = std::move(transport);
  self->set_down_handler([=](caf::down_msg& down) { on_peer_down(self, down); });
  return {
      [=](collective_peers_msg& m) {
        auto& st = self->state;
        // Entries may be empty: those ranks announce themselves with collective_join_msg.
        std::vector<caf::actor> known = std::move(st.peers);
        st.rank = m.rank;
        st.peers = std::move(m.peers);
        for (size_t r = 0; r < known.size() && r < st.peers.size(); ++r)
          if (!st.peers[r]) st.peers[r] = known[r];
        watch_peers(self);
        announce_data_plane(self);
        notify_if_ready(self);
      },
      [=](collective_join_msg& m) {
        auto& st = self->state;
        if (m.rank < 0) return;
        if (st.peers.size() <= size_t(m.rank)) st.peers.resize(size_t(m.rank) + 1);
        st.peers[size_t(m.rank)] = std::move(m.peer);
        watch_peers(self);
        announce_data_plane(self);
        notify_if_ready(self);
      },
      [=](collective_data_atom, int32_t rank, std::string& host, uint16_t port) {
        auto& st = self->state;
        if (!st.transport.data_plane || rank < 0 || rank == st.rank) return;
        if (!st.data) {
          st.listeners[rank] = {std::move(host), port};
          return;
        }
        dial(self, rank, host, port);
      },
      [=](collective_data_failed_atom, int32_t, std::string& why) { fail_group(self, why); },
      [=](heartbeat_atom, int32_t rank) {
        self->state.last_heard[rank] = std::chrono::steady_clock::now();
      },
      [=](heartbeat_tick_atom) { heartbeat(self); },
      [=](rendezvous_atom) { return self->state.transport.rendezvous; },
      [=](collective_data_atom) -> caf::result<std::string, uint16_t, uint64_t, uint64_t> {
        auto& st = self->state;
        if (!st.data)
          return to_caf_error(Status(Code::failed_precondition,
                                     st.transport.data_plane
                                         ? "the data plane starts once the group is known"
                                         : "this collective peer has no data plane"));
        return {st.data->host(), st.data->port(), st.data->payload_bytes_sent(),
                st.data->payload_bytes_received()};
      },
      [=](ready_atom) -> caf::response_promise {
        auto rp = self->make_response_promise();
        if (!self->state.group_down.empty()) {
          rp.deliver(to_caf_error(Status(Code::unavailable, self->state.group_down)));
        } else if (self->state.ready(self->node())) {
          rp.deliver(int32_t(self->state.peers.size()));
        } else {
          self->state.waiting_for_group.push_back(rp);
        }
        return rp;
      },
      [=](collective_start_msg& m) -> caf::response_promise {
        auto& st = self->state;
        auto rp = self->make_response_promise();
        auto reject = [&](const std::string& what, Code code = Code::invalid_argument) {
          rp.deliver(to_caf_error(Status(code, what)));
          return rp;
        };
        if (!st.group_down.empty())
          return reject("collective " + std::to_string(m.instance) + " on rank " +
                            std::to_string(st.rank) + ": " + st.group_down,
                        Code::unavailable);
        if (!st.group_complete())
          return reject(
              "collective peer has no complete group yet (collective_peers_msg / "
              "collective_join_msg missing)");
        if (int(st.peers.size()) != m.group_size)
          return reject("collective " + std::to_string(m.instance) + " wants a group of " +
                        std::to_string(m.group_size) + " but this peer knows " +
                        std::to_string(st.peers.size()));
        if (st.running.count(m.instance))
          return reject("collective " + std::to_string(m.instance) + " started twice");
        if (st.failed_early.erase(m.instance))
          return reject("collective " + std::to_string(m.instance) + ": more than " +
                        std::to_string(max_early_messages) +
                        " chunk messages arrived before this rank started it");
        try {
          CollectiveSpec spec;
          spec.rank = st.rank;
          spec.group_size = m.group_size;
          spec.dtype = m.input.dtype();
          spec.count = m.input.num_elements();
          spec.chunk_bytes = m.chunk_bytes;
          spec.instance = m.instance;
          spec.reduce = host_accumulate;
          spec.reduce_into = host_add_into;
          spec.shared_output = m.shared_output;
          spec.root = m.root;
          spec.tensor_index = m.tensor_index;
          const bool direct = m.input.byte_size() >=
                                  size_t(std::max<int64_t>(st.transport.inline_below_bytes, 0)) &&
                              st.direct_ready(self->node());
          // The ring writes its result into spec.shared_output when there is one; giving it one
          // that the data plane knows lets all-gather chunks land there straight off the wire.
          const bool land =
              direct && CrossDeviceOpKind(m.kind) == CrossDeviceOpKind::collective_all_reduce;
          if (land && !spec.shared_output.defined())
            spec.shared_output = Tensor(spec.dtype, Shape{spec.count});
          auto algorithm = make_collective(CrossDeviceOpKind(m.kind), spec);
          auto& running = st.running[m.instance];
          running.algorithm = std::move(algorithm);
          running.promise = rp;
          running.direct = direct;
          if (land) st.data->land(m.instance, spec.shared_output);
          auto out = running.algorithm->start(m.input.reshape({m.input.num_elements()}));
          for (auto& early : st.early[m.instance]) {
            auto more = running.algorithm->on_message(early);
            out.insert(out.end(), std::make_move_iterator(more.begin()),
                       std::make_move_iterator(more.end()));
          }
          st.early.erase(m.instance);
          route(self, m.instance, std::move(out));
        } catch (const std::exception& e) {
          if (st.running.count(m.instance)) {
            fail(st, m.instance, status_of(e));
          } else {
            return reject(e.what());
          }
        }
        return rp;
      },
      [=](CollectiveMessage& m) {
        auto& st = self->state;
        auto it = st.running.find(m.instance);
        if (it == st.running.end()) {
          // Bounded: a peer that races far ahead (or a foreign sender) cannot grow this forever.
          auto& early = st.early[m.instance];
          if (early.size() >= max_early_messages) {
            st.early.erase(m.instance);
            st.failed_early.insert(m.instance);
            return;
          }
          if (!st.failed_early.count(m.instance)) early.push_back(std::move(m));
          return;
        }
        int64_t instance = m.instance;
        try {
          route(self, instance, it->second.algorithm->on_message(m));
        } catch (const std::exception& e) {
          fail(st, instance, status_of(e));
        }
      },
  };
}

}  // namespace

caf::actor spawn_collective_peer(caf::actor_system& system, size_t max_early_messages) {
  return system.spawn(collective_peer, CollectivePeerTransport{}, max_early_messages);
}

caf::actor spawn_collective_peer(caf::actor_system& system, CollectivePeerTransport transport,
                                 size_t max_early_messages) {
  return system.spawn(collective_peer, std::move(transport), max_early_messages);
}

}  // namespace troupe
