// The ports `troupe launch` reserves for its tasks (net/loopback_port_reservation.hpp): while
// they are held, a stranger cannot take one — neither a plain bind() nor the kernel's choice of a
// source port for an outgoing connection — and a task's SO_REUSEADDR listener (publish_actor, as
// every launched task publishes) binds it and is reached through it from another actor system.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include "messages/system_config.hpp"
#include "net/loopback_port_reservation.hpp"
#include "net/socket_io.hpp"
#include "net/tls_transport.hpp"

#ifndef IP_LOCAL_PORT_RANGE
#define IP_LOCAL_PORT_RANGE 51  // Linux >= 6.3 (include/uapi/linux/in.h)
#endif

using namespace troupe;

namespace {

sockaddr_in loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(uint16_t(port));
  return addr;
}

/// A socket that closes itself.
struct Socket {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
};

/// 0 when a socket without SO_REUSEADDR binds 127.0.0.1:port, else the errno.
int plain_bind_error(int port) {
  Socket s;
  sockaddr_in addr = loopback(port);
  return ::bind(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 ? 0 : errno;
}

caf::actor_system_config& networked(caf::actor_system_config& cfg) {
  ActorSystemOptions o;
  o.scheduler_threads = 2;
  configure_actor_system(cfg, o);
  return cfg;
}

}  // namespace

TEST(LoopbackPortReservation, HoldsDistinctPortsThatAPlainBindCannotTake) {
  net::LoopbackPortReservation reserved(5);
  ASSERT_EQ(reserved.ports().size(), 5u);
  EXPECT_EQ(std::set<int>(reserved.ports().begin(), reserved.ports().end()).size(), 5u);
  for (int port : reserved.ports()) {
    EXPECT_GT(port, 0);
    EXPECT_EQ(plain_bind_error(port), EADDRINUSE) << "port " << port;
  }
}

TEST(LoopbackPortReservation, AnOutgoingConnectionNeverTakesAHeldPortAsItsSource) {
  uint16_t listen_port = 0;
  int listener = net::listen_loopback(listen_port);
  net::LoopbackPortReservation reserved(1);
  const int held = reserved.ports()[0];
  // Confine the kernel's choice of a source port to the held port alone: connect() must refuse
  // rather than take it.
  Socket client;
  const unsigned range = unsigned(held) | (unsigned(held) << 16);
  if (::setsockopt(client.fd, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &range, sizeof range) != 0) {
    ::close(listener);
    GTEST_SKIP() << "IP_LOCAL_PORT_RANGE is not supported here (Linux >= 6.3): "
                 << std::strerror(errno);
  }
  sockaddr_in to = loopback(listen_port);
  const int rc = ::connect(client.fd, reinterpret_cast<sockaddr*>(&to), sizeof to);
  const int error = errno;
  EXPECT_EQ(rc, -1) << "connect() took the held port " << held << " as its source port";
  EXPECT_EQ(error, EADDRNOTAVAIL) << std::strerror(error);
  // bind() to port 0 in the same range does not hand it out either.
  Socket wildcard;
  ::setsockopt(wildcard.fd, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &range, sizeof range);
  sockaddr_in any = loopback(0);
  EXPECT_NE(::bind(wildcard.fd, reinterpret_cast<sockaddr*>(&any), sizeof any), 0)
      << "bind() to port 0 took the held port " << held;
  ::close(listener);
}

TEST(LoopbackPortReservation, ATaskPublishesOnAHeldPortAndIsReachedThroughIt) {
  net::LoopbackPortReservation reserved(1);
  const uint16_t port = uint16_t(reserved.ports()[0]);
  caf::actor_system_config server_cfg;
  caf::actor_system server{networked(server_cfg)};
  // Actors are spawned with an argument: CAF 0.17 dereferences a null argument tuple for a
  // function actor spawned without any (UBSan stops the test there).
  caf::actor echo = server.spawn(
      [](caf::event_based_actor*, int32_t offset) -> caf::behavior {
        return {[offset](int32_t x) { return x + offset; }};
      },
      int32_t{1});
  auto published = publish_actor(server, echo, port, "127.0.0.1", false);
  ASSERT_TRUE(published) << server.render(published.error());
  EXPECT_EQ(*published, port);
  {
    caf::actor_system_config client_cfg;
    caf::actor_system client{networked(client_cfg)};
    auto remote = remote_actor_at(client, "127.0.0.1", port, false);
    ASSERT_TRUE(remote) << client.render(remote.error());
    caf::scoped_actor self{client};
    int32_t answer = 0;
    self->request(*remote, std::chrono::seconds(60), int32_t{41})
        .receive([&](int32_t x) { answer = x; },
                 [&](caf::error& e) { ADD_FAILURE() << client.render(e); });
    EXPECT_EQ(answer, 42);
    // The task listens now: a second listener, SO_REUSEADDR or not, cannot take its port.
    caf::actor other = server.spawn(
        [](caf::event_based_actor*, int32_t) -> caf::behavior { return {[](int32_t) {}}; },
        int32_t{0});
    EXPECT_FALSE(publish_actor(server, other, port, "127.0.0.1", false));
    EXPECT_EQ(plain_bind_error(port), EADDRINUSE);
    caf::anon_send_exit(other, caf::exit_reason::user_shutdown);
  }
  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
}
