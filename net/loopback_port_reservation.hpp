#pragma once
// Ports on 127.0.0.1 that the OS chose, held for the tasks of a local cluster until the holder is
// destroyed. `troupe launch` writes them into every TF_CONFIG before the tasks start; without the
// hold, a port could be taken between being chosen and being listened on (on a loaded machine,
// typically as the source port of some other process's outgoing connection) and the task that
// owns it would fail with "address in use".

#include <vector>

namespace troupe::net {

/// `count` distinct ports on 127.0.0.1, each held by a socket bound with SO_REUSEADDR that never
/// listens. While it is held (measured on Linux 6.18):
///   - bind() of a socket without SO_REUSEADDR to the port fails with EADDRINUSE;
///   - connect() never picks it as its source port (an unbound socket whose ephemeral range
///     holds only that port fails with EADDRNOTAVAIL), nor does bind() to port 0;
///   - a socket with SO_REUSEADDR can bind it and listen: that is how a task takes its port
///     (publish_actor in net/tls_transport.hpp); once one listens, no second socket can bind it,
///     SO_REUSEADDR or not.
/// The sockets are close-on-exec: a child process inherits none of them.
class LoopbackPortReservation {
 public:
  /// Throws unavailable naming the failing call and errno when a socket cannot be made or bound.
  explicit LoopbackPortReservation(int count);
  ~LoopbackPortReservation();
  LoopbackPortReservation(const LoopbackPortReservation&) = delete;
  LoopbackPortReservation& operator=(const LoopbackPortReservation&) = delete;

  /// The held ports, in the order they were reserved.
  const std::vector<int>& ports() const { return ports_; }

 private:
  void release();

  std::vector<int> fds_;
  std::vector<int> ports_;
};

}  // namespace troupe::net
