#include "net/loopback_port_reservation.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/status.hpp"

namespace troupe::net {

LoopbackPortReservation::LoopbackPortReservation(int count) {
  for (int i = 0; i < count; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      const int error = errno;
      release();
      throw unavailable(std::string("reserving ports on 127.0.0.1: socket: ") +
                        std::strerror(error));
    }
    fds_.push_back(fd);
    // SO_REUSEADDR on the holder too: a socket binds a held port only if both have it.
    const int one = 1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      const int error = errno;
      release();
      throw unavailable("reserving port " + std::to_string(i + 1) + " of " + std::to_string(count) +
                        " on 127.0.0.1: " + std::strerror(error));
    }
    ports_.push_back(ntohs(addr.sin_port));
  }
}

LoopbackPortReservation::~LoopbackPortReservation() { release(); }

void LoopbackPortReservation::release() {
  for (int fd : fds_) ::close(fd);
  fds_.clear();
}

}  // namespace troupe::net
