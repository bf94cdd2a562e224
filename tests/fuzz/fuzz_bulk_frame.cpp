// Bulk-channel frames (net/bulk_channel) as a BulkListener reads them from an authenticated
// peer. Each input is a fresh connection to a listener on 127.0.0.1: the harness answers the
// challenge with the right proof (or, when byte 0 is odd, with the next 32 input bytes as a forged
// proof), then sends the rest as frames, closes its write side and drains the replies. The listener
// must reject malformed frames and close, never crash, hang or allocate what a frame only claims.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "core/status.hpp"
#include "net/bulk_channel.hpp"
#include "net/gatekeeper.hpp"
#include "net/socket_io.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace troupe;

namespace {

const std::string kSecret = "fuzz-bulk-secret";

// The client side binds 127.0.0.2: its connections end in TIME_WAIT (it closes first), and on
// 127.0.0.1 those would soon leave no port free for the next listener's bind.
int connect_client(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_addr.s_addr = htonl(0x7f000002);
  sockaddr_in server{};
  server.sin_family = AF_INET;
  server.sin_port = htons(port);
  server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // The port is chosen at connect, where only the 4-tuple must be unused: a bind to port 0
  // needs a port free of every TIME_WAIT, and a long campaign leaves tens of thousands of them,
  // until this bind fails and the harness aborts — the likeliest cause of the one unexplained
  // abort of an earlier campaign (tests/fuzz/README.md).
  const int yes = 1;
  if (fd >= 0) ::setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &yes, sizeof yes);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&server), sizeof server) != 0) {
    std::perror("fuzz_bulk_frame: harness cannot connect");
    std::abort();
  }
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::cerr.rdbuf(nullptr);  // the listener logs every rejected frame; sanitizers write to fd 2
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view rest = fuzz::as_text(data + 1, size - 1);
  BulkListener listener(kSecret);
  int fd = connect_client(listener.port());
  net::set_io_timeout(fd, 5000);
  std::string nonce(32, '\0');
  fuzz::require(net::read_all(fd, nonce.data(), nonce.size()), "the listener sends a challenge");
  std::string proof;
  if (data[0] & 1) {
    proof = std::string(rest.substr(0, 32));
    proof.resize(32, '\0');
    rest.remove_prefix(std::min<size_t>(32, rest.size()));
  } else {
    proof = challenge_proof(kSecret, "troupe-bulk-v1" + nonce);
  }
  uint8_t accepted = 0;
  if (net::write_all(fd, proof.data(), proof.size()) && net::read_all(fd, &accepted, 1) &&
      accepted == 1) {
    net::write_all(fd, rest.data(), rest.size());
    ::shutdown(fd, SHUT_WR);
    char sink[4096];
    while (::read(fd, sink, sizeof sink) > 0) {
    }
  }
  ::close(fd);
  return 0;
}
