#pragma once
// The ps task's end of the bulk connection (net/ps_bulk_protocol.hpp): the values of pulls
// (read), gathers (embedding lookups), pushes (assign*) and gradient applies (dense or sparse)
// travel on a plain, authenticated TCP stream between the client process and this one, while the
// request itself still reaches the ps_shard actor as the same CAF message (ps_read_msg /
// ps_gather_msg / ps_write_msg / ps_apply_msg) from this process: the shard's mailbox orders it
// among every other request, deduplicates it by step id and answers errors exactly as over the
// middleman. A 16 MiB message through CAF 0.17's middleman reached 0.29-0.88x raw TCP (0.19-0.34x
// with TLS); here the bytes go from the socket straight into the tensor the shard receives (no
// copy: same process), and out of the shard's value.

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

namespace troupe {

/// Options of a PsBulkServer.
struct PsBulkServerOptions {
  std::string secret;              ///< the cluster's shared secret (proved before any parsing)
  std::string host = "127.0.0.1";  ///< numeric IPv4 to listen on (port chosen by the OS)
  std::string name = "ps:0";       ///< named in the log lines
  /// Bounds the handshake, every read and write mid-request, and each request to the shard.
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

/// Listens from construction (so the port can be handed to the shard), serves once serve()
/// names the shard. One thread per connection; a client keeps its connections open.
class PsBulkServer {
 public:
  /// Throws invalid_argument for a host that is not numeric IPv4, unavailable when it cannot
  /// listen on options.host.
  PsBulkServer(caf::actor_system& sys, PsBulkServerOptions options);
  /// Closes the listener and every connection, joins every thread.
  ~PsBulkServer();
  PsBulkServer(const PsBulkServer&) = delete;
  PsBulkServer& operator=(const PsBulkServer&) = delete;

  uint16_t port() const { return port_; }
  /// Starts accepting connections for `shard` (an actor of this process). Call once.
  void serve(caf::actor shard);

 private:
  struct Connection;
  void accept_loop();
  void serve_connection(Connection& c);

  caf::actor_system& sys_;
  const PsBulkServerOptions options_;
  caf::actor shard_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::thread acceptor_;
  std::mutex mutex_;
  bool stopping_ = false;
  std::vector<std::unique_ptr<Connection>> connections_;
};

}  // namespace troupe
