#pragma once
// The client's end of one ps task's bulk connection (net/ps_bulk_protocol.hpp,
// actors/ps_bulk_server.hpp): pulls, and gathers, pushes and applies (dense or sparse) of at
// least `min_bytes`, of a shard in another process. The request is the same ps message the shard
// would get through CAF, minus its large tensor; the tensor travels in chunks on an authenticated
// TCP stream, and the shard's reply (value, acknowledgement or error) comes back the same way.
// Connections are dialed when first needed and kept in a small pool, one per request in flight.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "messages/ps_messages.hpp"

namespace troupe {

/// Gathers, pushes and applies that move fewer bytes stay CAF messages. None by default: a push
/// took the bulk connection a third of the middleman's time at every size measured, 1 KiB to
/// 4 MiB (`troupe bench ps`'s push_by_size, docs/parameter_servers.md), and a small model's
/// steps across processes ran 2x as fast once their requests all took it.
constexpr uint64_t kPsBulkMinBytes = 0;

/// Connections to one ps task kept open between requests (more are closed after use). A batch
/// has at most this many requests of one ps task in flight at once (PsClient): more would run
/// into the ps task's limit of 64 connections, and be dialled and authenticated again at every
/// step.
constexpr size_t kPsBulkConnectionsKept = 8;

/// A batch's bulk requests of at least this known payload each get a thread of their own, so
/// that their copies run on several cores; smaller ones (and pulls, whose size is not known
/// before the reply) are sent one after another by the caller, which then reads their replies
/// in turn (PsClient). 1 MiB: about 300 us of copying at the loopback rates measured, against
/// ~37 us to start and join a thread on the 2-vCPU VMs.
constexpr uint64_t kPsBulkOwnThreadBytes = uint64_t(1) << 20;

/// Where and how to reach one ps task's bulk port.
struct PsBulkClientOptions {
  std::string host;    ///< numeric IPv4 of the ps task
  uint16_t port = 0;   ///< what the shard answered to (bulk_atom)
  std::string secret;  ///< the cluster's shared secret
  /// How errors name the shard: "ps shard 'ps:0' (/job:ps/task:0 at 127.0.0.1:2222)".
  std::string label = "ps shard";
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};  ///< bounds every read/write
  uint64_t min_bytes = kPsBulkMinBytes;       ///< smaller gathers, pushes and applies stay on CAF
  uint64_t chunk_bytes = uint64_t(64) << 20;  ///< values above it travel in several chunks
};

/// Thread-safe; each call uses its own connection from the pool.
class PsBulkClient {
 private:
  struct Connection;

 public:
  explicit PsBulkClient(PsBulkClientOptions options);
  ~PsBulkClient();
  PsBulkClient(const PsBulkClient&) = delete;
  PsBulkClient& operator=(const PsBulkClient&) = delete;

  const PsBulkClientOptions& options() const { return options_; }
  /// True when `msg` should take this connection: a dense push, or an apply (dense or sparse),
  /// whose host value has at least min_bytes; a gather whose rows (`row_bytes` each) add up to
  /// at least min_bytes. Indices travel in the request header: more than kMaxPsBulkIndexBytes of
  /// them stay on CAF.
  bool carries(const ps_write_msg& msg) const;
  bool carries(const ps_apply_msg& msg) const;
  bool carries(const ps_gather_msg& msg, uint64_t row_bytes) const;

  /// The shard's reply to `msg`, through the bulk connection. A shard error is thrown as the
  /// shard's troupe::Error; a connection that breaks as unavailable naming the shard, the
  /// variable and how far the transfer got ("... went away during a bulk pull of variable 'w':
  /// connection lost mid-chunk after N of M payload bytes"); one that stalls, at any point, as
  /// deadline_exceeded ("... did not answer within T ms (bulk pull)...").
  ps_value_msg read(const ps_read_msg& msg) { return receive_value(send(msg)); }
  ps_value_msg gather(const ps_gather_msg& msg) { return receive_value(send(msg)); }
  ps_ack_msg write(const ps_write_msg& msg) { return receive_ack(send(msg)); }
  ps_ack_msg apply(const ps_apply_msg& msg) { return receive_ack(send(msg)); }

  /// A request written out (header, and a push's tensor) whose reply is not read yet. It holds
  /// its connection, which is closed if the Sent is dropped unread (the stream would be out of
  /// step). A failure while sending is kept and thrown by receive_*. Lets one thread send to
  /// several ps tasks before it waits for any of them.
  class Sent {
   public:
    Sent();
    Sent(Sent&&) noexcept;
    Sent& operator=(Sent&&) noexcept;
    ~Sent();
    /// No connection could be made or proved, so nothing was sent (the ps task took no new
    /// connection: at its limit, or gone): the request may still go another way.
    bool refused() const { return refused_; }

   private:
    friend class PsBulkClient;
    std::unique_ptr<Connection> connection_;
    std::string name_;
    const char* what_ = "";
    std::exception_ptr failure_;
    bool refused_ = false;
  };
  Sent send(const ps_read_msg& msg);
  Sent send(const ps_gather_msg& msg);
  Sent send(const ps_write_msg& msg);
  Sent send(const ps_apply_msg& msg);
  /// The reply to a sent pull or gather, and to a sent push or apply; errors as read() etc.
  ps_value_msg receive_value(Sent sent);
  ps_ack_msg receive_ack(Sent sent);

  /// True the first time a Sent of this client was refused (so that it is logged once).
  bool first_refusal() { return !refusal_seen_.exchange(true); }

  /// Payload bytes written so far (grows while a push is under way) and read (after each pull).
  uint64_t bytes_sent() const { return sent_; }
  uint64_t bytes_received() const { return received_; }

 private:
  std::unique_ptr<Connection> acquire();
  void release(std::unique_ptr<Connection> c);
  std::string silent(const std::string& name, const char* what) const;
  std::string lost(const Sent& sent) const;
  /// The error for a transfer that broke off (`problem` from net/bulk_tensor_stream).
  Error broken(const Sent& sent, const std::string& problem) const;
  /// The connection of `sent` once its reply's status says ok; the shard's error thrown.
  std::unique_ptr<Connection> await_reply(Sent& sent);
  Sent start(uint8_t op, const std::string& name, const std::vector<char>& header,
             const Tensor* stream, const char* what);

  const PsBulkClientOptions options_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Connection>> idle_;
  std::atomic<uint64_t> sent_{0}, received_{0};
  std::atomic<bool> refusal_seen_{false};
};

}  // namespace troupe
