#include "net/wire_client.hpp"

#include <deque>
#include <optional>
#include <random>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include "messages/atoms.hpp"
#include "messages/auth_msg.hpp"
#include "messages/error_channel.hpp"
#include "messages/timed_request.hpp"
#include "net/gatekeeper.hpp"
#include "net/tls_transport.hpp"

namespace troupe {
namespace {

std::string where(const WireClientOptions& o) { return o.host + ":" + std::to_string(o.port); }

// Sends every chunk as request(atom, chunk) with at most `window` in flight; on_reply(message)
// consumes each reply in order. Errors (including timeouts from a dead peer) are thrown.
template <class Atom, class OnReply>
void pipeline_chunks(caf::actor_system& sys, const caf::actor& service,
                     const std::vector<tensor_chunk_msg>& chunks, const WireClientOptions& o,
                     const char* what, OnReply on_reply) {
  caf::scoped_actor self{sys};
  using handle = decltype(timed_request(self, service, o.timeout, Atom::value, chunks[0]));
  std::deque<handle> in_flight;
  size_t next = 0;
  std::optional<std::string> failure;
  auto await_oldest = [&] {
    size_t index = next - in_flight.size();
    in_flight.front().receive(on_reply, [&](caf::error& e) {
      failure = std::string(what) + " chunk " + std::to_string(index) + " to " + where(o) +
                " failed: " + to_status(e).message();
    });
    in_flight.pop_front();
  };
  while (next < chunks.size() || !in_flight.empty()) {
    while (!failure && next < chunks.size() && in_flight.size() < std::max<size_t>(1, o.window)) {
      in_flight.push_back(timed_request(self, service, o.timeout, Atom::value, chunks[next]));
      ++next;
    }
    if (in_flight.empty()) break;
    await_oldest();
    if (failure) {
      while (!in_flight.empty()) await_oldest();  // drain so no reply outlives self
      throw unavailable(*failure);
    }
  }
}

uint64_t random_transfer_id() {
  std::random_device entropy;
  return (uint64_t(entropy()) << 32) | entropy();
}

}  // namespace

caf::actor connect_to_service(caf::actor_system& sys, const WireClientOptions& o) {
  auto gate = remote_actor_at(sys, o.host, o.port, o.tls);
  if (!gate)
    throw unavailable("cannot connect to " + where(o) + (o.tls ? " over TLS" : "") + ": " +
                      to_status(gate.error()).message());
  caf::scoped_actor self{sys};
  std::optional<std::string> failure;
  bool refused = false;
  challenge_msg challenge;
  timed_request(self, *gate, o.timeout, hello_atom::value)
      .receive([&](const challenge_msg& c) { challenge = c; },
               [&](caf::error& e) {
                 failure = "no challenge from " + where(o) + ": " + to_status(e).message();
               });
  if (failure) throw unavailable(*failure);
  caf::actor service;
  timed_request(self, *gate, o.timeout, prove_atom::value,
                proof_msg{challenge.nonce, challenge_proof(o.secret, challenge.nonce)})
      .receive([&](const caf::actor& s) { service = s; },
               [&](caf::error& e) {
                 Status s = to_status(e);
                 refused = s.code() == Code::unauthenticated;
                 failure = s.message();
               });
  if (failure) {
    if (refused)
      throw failed_precondition("authentication failed at " + where(o) +
                                " (wrong shared secret?): " + *failure);
    throw unavailable("handshake with " + where(o) + " failed: " + *failure);
  }
  if (!service) throw unavailable("node at " + where(o) + " returned no service");
  return service;
}

Tensor echo_tensor(caf::actor_system& sys, const caf::actor& service, const Tensor& t,
                   const WireClientOptions& o) {
  auto chunks = split_into_chunks(t, random_transfer_id(), o.chunk_bytes);
  ChunkAssembler assembler;
  std::optional<std::string> bad_reply;
  pipeline_chunks<echo_atom>(sys, service, chunks, o, "echo", [&](const tensor_chunk_msg& back) {
    try {  // never let an exception cross CAF's receive machinery
      if (!bad_reply) assembler.add(back);
    } catch (const Error& e) {
      bad_reply = e.what();
    }
  });
  if (bad_reply) throw data_loss("echo reply from " + where(o) + " is inconsistent: " + *bad_reply);
  return assembler.take();
}

uint64_t sink_tensor(caf::actor_system& sys, const caf::actor& service, const Tensor& t,
                     const WireClientOptions& o) {
  auto chunks = split_into_chunks(t, random_transfer_id(), o.chunk_bytes);
  uint64_t acknowledged = 0;
  pipeline_chunks<sink_atom>(sys, service, chunks, o, "sink",
                             [&](uint64_t bytes) { acknowledged += bytes; });
  return acknowledged;
}

uint16_t request_bulk_port(caf::actor_system& sys, const caf::actor& service,
                           const WireClientOptions& o) {
  caf::scoped_actor self{sys};
  uint16_t port = 0;
  std::optional<std::string> failure;
  timed_request(self, service, o.timeout, bulk_atom::value)
      .receive([&](uint16_t p) { port = p; },
               [&](caf::error& e) { failure = to_status(e).message(); });
  if (failure) throw unavailable("bulk port request to " + where(o) + " failed: " + *failure);
  if (port == 0) throw unavailable("node at " + where(o) + " has no bulk-data channel");
  return port;
}

}  // namespace troupe
