#pragma once
// Publishing and reaching a node's actor over the middleman, plain or through CAF's openssl
// module (mutual TLS). The CAF-version-sensitive calls live here and nowhere else.

#include <cstdint>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/expected.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/openssl/remote_actor.hpp>

namespace troupe {

/// Listens on `host` (port 0 = the OS picks) for `whom`; with `tls` a connection must complete
/// the TLS handshake with a certificate from the configured CA before CAF parses a byte of it.
/// A named port is bound with SO_REUSEADDR (CAF's `reuse` flag): `troupe launch` holds its
/// tasks' ports for the whole launch (net/loopback_port_reservation.hpp), and only a SO_REUSEADDR
/// socket can bind a port so held (measured with CAF 0.17.6: without the flag, publish on a held
/// port fails with cannot_open_port; with it, it listens and is reached). It still cannot bind a
/// port some socket listens on: two tasks given one address fail as before (cannot_open_port).
inline caf::expected<uint16_t> publish_actor(caf::actor_system& sys, const caf::actor& whom,
                                             uint16_t port, const std::string& host, bool tls) {
  const bool reuse = port != 0;
  if (tls) return caf::openssl::publish(whom, port, host.c_str(), reuse);
  return sys.middleman().publish(whom, port, host.c_str(), reuse);
}

/// Connects to the actor published at host:port (TLS when `tls`; both sides must agree).
inline caf::expected<caf::actor> remote_actor_at(caf::actor_system& sys, const std::string& host,
                                                 uint16_t port, bool tls) {
  if (tls) return caf::openssl::remote_actor(sys, host, port);
  return sys.middleman().remote_actor(host, port);
}

}  // namespace troupe
