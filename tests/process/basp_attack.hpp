#pragma once
// What the security tests attack a node with: a raw TCP socket, a forged CAF 0.17 BASP header,
// and the node's resident memory to see whether the attack made it allocate.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace troupe::testing {

/// Resident set of `pid` in KiB (/proc/<pid>/status VmRSS).
inline long rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

/// A plain TCP connection to 127.0.0.1:port (closed with the object).
struct RawSocket {
  int fd = -1;
  explicit RawSocket(uint16_t port) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ~RawSocket() {
    if (fd >= 0) ::close(fd);
  }
  bool send_all(const std::vector<uint8_t>& bytes) const {
    // MSG_NOSIGNAL: a node that already closed must fail the send, not kill the test.
    return ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == ssize_t(bytes.size());
  }
  /// Everything received until the peer closes (closed = true) or `timeout` passes.
  std::vector<uint8_t> read_until_closed(std::chrono::milliseconds timeout, bool& closed) const {
    std::vector<uint8_t> got;
    closed = false;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      uint8_t buf[4096];
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) {  // orderly close or reset
        closed = true;
        break;
      }
      got.insert(got.end(), buf, buf + n);
    }
    return got;
  }
};

/// A CAF 0.17 BASP header (32 bytes: operation, 2 padding, flags, payload_len, operation_data,
/// source_actor, dest_actor; network byte order) for `operation` claiming `payload_len` bytes.
inline std::vector<uint8_t> basp_header(uint8_t operation, uint32_t payload_len,
                                        uint64_t dest_actor) {
  std::vector<uint8_t> h(32, 0);
  h[0] = operation;
  for (int i = 0; i < 4; ++i) h[4 + size_t(i)] = uint8_t(payload_len >> (24 - 8 * i));
  for (int i = 0; i < 8; ++i) h[24 + size_t(i)] = uint8_t(dest_actor >> (56 - 8 * i));
  return h;
}

inline constexpr uint8_t kClientHandshake = 0x01;
inline constexpr uint8_t kDirectMessage = 0x02;

}  // namespace troupe::testing
