#include "net/ps_bulk_protocol.hpp"

#include <cerrno>
#include <random>

#include "core/hmac.hpp"
#include "core/status.hpp"
#include "net/gatekeeper.hpp"
#include "net/socket_io.hpp"

namespace troupe::net {
namespace {
constexpr size_t kNonceBytes = 32;
}

std::string ps_bulk_proof(const std::string& secret, const std::string& nonce) {
  return challenge_proof(secret, "troupe-ps-bulk-v1" + nonce);
}

bool ps_bulk_accept(int fd, const std::string& secret) {
  std::random_device entropy;
  std::string nonce(kNonceBytes, '\0');
  for (auto& ch : nonce) ch = char(entropy());
  std::string proof(32, '\0');
  if (!write_all(fd, nonce.data(), nonce.size()) || !read_all(fd, proof.data(), proof.size()))
    return false;
  uint8_t accepted = constant_time_equal(proof, ps_bulk_proof(secret, nonce)) ? 1 : 0;
  return write_all(fd, &accepted, 1) && accepted == 1;
}

void ps_bulk_authenticate(int fd, const std::string& secret, const std::string& peer) {
  std::string nonce(kNonceBytes, '\0');
  errno = 0;
  if (!read_all(fd, nonce.data(), nonce.size())) {
    // The socket's timeout passed: the ps task's kernel took the connection, the task did not
    // answer it (stopped, overloaded). Closed instead: it refused or went away.
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      throw Error(Code::deadline_exceeded,
                  "ps bulk port " + peer + " sent no challenge within the timeout");
    throw unavailable("ps bulk port " + peer + " sent no challenge");
  }
  const std::string proof = ps_bulk_proof(secret, nonce);
  uint8_t accepted = 0;
  if (!write_all(fd, proof.data(), proof.size()) || !read_all(fd, &accepted, 1) || accepted != 1)
    throw failed_precondition("authentication failed at ps bulk port " + peer +
                              " (wrong shared secret?)");
}

}  // namespace troupe::net
