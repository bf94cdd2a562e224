// Bulk-channel frames (net/bulk_channel) as a BulkListener reads them from an authenticated
// peer. Each input gets a fresh listener on 127.0.0.1: the harness answers the challenge with
// the right proof (or, when byte 0 is odd, with the next 32 input bytes as a forged proof), then
// sends the rest as frames, closes its write side and drains the replies. The listener must
// reject malformed frames and close, never crash, hang or allocate what a frame only claims.
#include <sys/socket.h>
#include <unistd.h>

#include <iostream>

#include "core/status.hpp"
#include "net/bulk_channel.hpp"
#include "net/gatekeeper.hpp"
#include "net/socket_io.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace troupe;

namespace {
const std::string kSecret = "fuzz-bulk-secret";
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::cerr.rdbuf(nullptr);  // the listener logs every rejected frame; sanitizers write to fd 2
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view rest = fuzz::as_text(data + 1, size - 1);
  BulkListener listener(kSecret);
  int fd = net::connect_to("127.0.0.1", listener.port());
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
