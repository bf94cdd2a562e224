#pragma once
// The data plane of cross-process collectives: chunk bytes travel over direct, authenticated TCP
// connections instead of CAF's middleman (which moved them at ~0.08x raw TCP: every payload was
// serialised into a BASP buffer, copied through the broker and deserialised again). CAF still
// carries the control: who is in the group, where each rank's data listener is, starts, results
// and failures. Here only bytes move: each frame is one CollectiveMessage, header and payload,
// read straight into the payload tensor that is handed to the peer actor.
//
// Connections are one-way and owned by the sender: rank A dials rank B's listener to send A->B
// chunks (so there is no crossing-connection race to resolve). One writer thread per outgoing
// connection drains a queue, one reader thread per incoming connection delivers frames in order.
// Between processes of one host (a loopback listener) the frames go through a shared-memory ring
// (net/shm_ring.hpp) instead of the TCP stream, whose only job is then to authenticate, to hand
// over the segment's name and to tell each side when the other's process is gone.
//
// Handshake, mutual, before a single frame (all integers little-endian as on every host we
// build for; both ends are the same build):
//   listener -> dialer: 32-byte nonce Ns
//   dialer -> listener: u32 rank, 32-byte nonce Nc, HMAC-SHA256(secret, "troupe-collective-data-v1
//                       dialer" + Ns + decimal rank)
//   listener -> dialer: u8 accepted (0 = refused, then close), and when accepted
//                       HMAC-SHA256(secret, "troupe-collective-data-v1 listener" + Nc)
//   dialer -> listener: u8 mode: 0 = frames follow on this stream; 1 = u16 length + the name of a
//                       shared-memory ring the dialer created; listener -> dialer: u8 1 when
//                       it mapped the ring (frames then go there), 0 when not (TCP it is)
// Frame: kFrameMagic u32, u8 phase, u8 dtype, u16 zero, i32 from, i32 to, i32 step, i32 chunk,
//        i64 instance, i64 offset, i64 count, then count * dtype_size payload bytes.
// The listener checks every frame's `from` against the authenticated rank and `to` against its
// own, so a connection can only ever speak for the rank that proved itself.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/collective/collective_message.hpp"

namespace troupe {

/// How a collective peer's data plane behaves.
struct CollectiveDataPlaneOptions {
  std::string secret;              ///< the cluster's shared secret (HMAC key of the handshake)
  std::string host = "127.0.0.1";  ///< address to listen on and to advertise
  int io_timeout_ms = 30000;       ///< a connection without progress this long mid-frame fails
  /// Peers on this host (a 127.x listener) get a shared-memory ring instead of the TCP stream.
  bool shared_memory = true;
  size_t ring_bytes = size_t(8) << 20;  ///< data bytes per shared-memory ring (one per direction)
};

/// One rank's listener plus its outgoing connections. Thread-safe for the calls below; the
/// callbacks run on the plane's own threads.
class CollectiveDataPlane {
 public:
  /// A complete chunk from rank `message.from` (payload already filled).
  using DeliverFn = std::function<void(CollectiveMessage&&)>;
  /// A connection to or from `rank` broke, stalled or misbehaved; `why` is the whole error text
  /// and names the rank ("rank 1 is down: ...", "rank 1 stalled: ...").
  using FailFn = std::function<void(int rank, const std::string& why)>;

  /// Listens on options.host (port chosen by the OS). Throws unavailable when it cannot.
  CollectiveDataPlane(int rank, CollectiveDataPlaneOptions options, DeliverFn deliver, FailFn fail);
  /// Closes every connection and joins every thread; callbacks do not run afterwards.
  ~CollectiveDataPlane();
  CollectiveDataPlane(const CollectiveDataPlane&) = delete;
  CollectiveDataPlane& operator=(const CollectiveDataPlane&) = delete;

  uint16_t port() const { return port_; }
  const std::string& host() const { return options_.host; }

  /// Dials `rank`'s listener and authenticates (blocking, bounded by io_timeout_ms). Throws
  /// unavailable (unreachable) or failed_precondition (authentication refused), naming the rank.
  void connect(int rank, const std::string& host, uint16_t port);
  /// True once connect(rank, ...) succeeded and the connection has not failed.
  bool can_send(int rank) const;
  /// "shared_memory" or "tcp" for the connection to `rank`; empty when there is none.
  std::string path_to(int rank) const;
  /// Queues `message` (header and payload) for its `to` rank; the payload tensor is kept alive
  /// until written. Requires can_send(message.to).
  void send(CollectiveMessage message);

  /// From now on, all_gather frames of `instance` are read straight into their place in
  /// `destination` (the collective's 1-D result buffer, which must stay allocated until
  /// unland()): the delivered payload is then a view of it, and the algorithm's copy of the
  /// segment finds source == destination and moves nothing.
  void land(int64_t instance, const Tensor& destination);
  void unland(int64_t instance);

  /// Payload bytes written to / read from other ranks so far (what the plane really carried).
  uint64_t payload_bytes_sent() const { return sent_; }
  uint64_t payload_bytes_received() const { return received_; }

 private:
  struct Outgoing;
  struct Incoming;
  void accept_loop();
  void serve(Incoming& in);

  const int rank_;
  const CollectiveDataPlaneOptions options_;
  DeliverFn deliver_;
  FailFn fail_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::thread acceptor_;
  mutable std::mutex mutex_;
  std::map<int, std::unique_ptr<Outgoing>> outgoing_;
  std::vector<std::unique_ptr<Incoming>> incoming_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> sent_{0}, received_{0};
  std::atomic<int> pending_handshakes_{0};
  std::mutex landing_mutex_;
  std::map<int64_t, Tensor> landing_;
};

/// The proofs of the handshake above, exposed so that tests can play a stranger.
std::string collective_data_dialer_proof(const std::string& secret, const std::string& nonce,
                                         int rank);

/// Dials a data listener as `rank` with `secret` and performs the handshake only; returns the
/// connected socket (caller closes). Throws like CollectiveDataPlane::connect. For tests and
/// diagnostics: "is this secret accepted there?".
int dial_collective_data(const std::string& host, uint16_t port, int rank,
                         const std::string& secret, int timeout_ms);

}  // namespace troupe
