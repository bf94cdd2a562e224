#pragma once
// Blocking socket helpers for the plain-TCP paths (raw TCP benchmark, bulk-data channel).

#include <cstddef>
#include <cstdint>
#include <string>

namespace troupe::net {

/// Writes all `size` bytes; false when the peer is gone.
bool write_all(int fd, const void* data, size_t size);
/// Writes `a` then `b` with one system call where the socket takes both (sendmsg): a small
/// header and its payload leave as one segment instead of one each (TCP_NODELAY sends every
/// write at once, and each costs a pass through the TCP stack and a wake-up of the reader).
bool write_all(int fd, const void* a, size_t a_size, const void* b, size_t b_size);
/// Reads exactly `size` bytes; false on EOF or error.
bool read_all(int fd, void* data, size_t size);
/// A listening socket on 127.0.0.1 with an ephemeral port; throws unavailable naming errno.
int listen_loopback(uint16_t& port_out);
/// Connects to host:port (numeric IPv4); throws unavailable naming host, port and errno.
int connect_to(const std::string& host, uint16_t port);
/// Applies a receive/send timeout so a dead peer turns into an error, not a hang.
void set_io_timeout(int fd, int milliseconds);

}  // namespace troupe::net

namespace troupe::net {
/// A listening socket on `host` (numeric IPv4) with an ephemeral port; throws invalid_argument
/// for a host that is not numeric IPv4, unavailable naming the host and errno when it cannot
/// listen.
int listen_on(const std::string& host, uint16_t& port_out);
}  // namespace troupe::net
