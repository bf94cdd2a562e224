#include "actors/ps_bulk_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>

#include <caf/all.hpp>

#include "core/status.hpp"
#include "messages/caf_compat.hpp"
#include "messages/error_channel.hpp"
#include "messages/ps_messages.hpp"
#include "messages/timed_request.hpp"
#include "net/bulk_tensor_stream.hpp"
#include "net/ps_bulk_protocol.hpp"
#include "net/socket_io.hpp"

namespace troupe {
namespace {

// Connections that have not proved the secret yet, at once: all a stranger can hold (each for
// at most the handshake's 5 s); the next is closed. Proven ones come from the cluster's own
// clients, each of which keeps up to 8 per ps task: they are bounded only by kMaxConnections.
constexpr size_t kMaxUnproven = 64;
constexpr size_t kMaxConnections = 1024;
constexpr int kHandshakeTimeoutMs = 5000;

std::string peer_of(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "an unknown peer";
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &addr.sin_addr, text, sizeof text);
  return std::string(text) + ":" + std::to_string(ntohs(addr.sin_port));
}

// Reads the next request's first `size` bytes, however long the connection stays idle before it
// (the socket's timeout only bounds a request once it has started); 0 when the client closed the
// connection (or it was shut down) between requests, else the bytes read, all of them unless the
// connection broke midway.
ssize_t read_request_lead(int fd, char* lead, size_t size) {
  ssize_t got;
  do got = ::recv(fd, lead, size, MSG_WAITALL);
  while (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK));
  return std::max<ssize_t>(got, 0);
}

bool write_error(int fd, const Status& s) {
  uint8_t status = net::kPsBulkError;
  int32_t code = int32_t(s.code());
  std::string text = s.message().substr(0, net::kMaxPsBulkErrorBytes);
  uint32_t length = uint32_t(text.size());
  char head[9];  // status, code, length: one write with the text
  std::memcpy(head, &status, 1);
  std::memcpy(head + 1, &code, 4);
  std::memcpy(head + 5, &length, 4);
  return net::write_all(fd, head, sizeof head, text.data(), length);
}

// The shard's answer to `msg`, asked from this connection's own scoped actor.
template <class Reply, class Msg>
Status ask_shard(caf::scoped_actor& self, const caf::actor& shard,
                 std::chrono::milliseconds timeout, Msg msg, Reply& out) {
  Status failure;
  timed_request(self, shard, timeout, std::move(msg))
      .receive([&](Reply& r) { out = std::move(r); },
               [&](caf::error& e) { failure = to_status(e); });
  return failure;
}

}  // namespace

struct PsBulkServer::Connection {
  int fd = -1;
  std::string peer;
  std::thread worker;
  std::atomic<bool> finished{false};  ///< its thread is done; the acceptor may reclaim it
  std::atomic<bool> proven{false};    ///< its peer proved the secret
};

PsBulkServer::PsBulkServer(caf::actor_system& sys, PsBulkServerOptions options)
    : sys_(sys), options_(std::move(options)) {
  listen_fd_ = net::listen_on(options_.host, port_);
}

PsBulkServer::~PsBulkServer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
  if (acceptor_.joinable()) acceptor_.join();
  ::close(listen_fd_);
  for (auto& c : connections_) ::shutdown(c->fd, SHUT_RDWR);
  for (auto& c : connections_) {
    if (c->worker.joinable()) c->worker.join();
    ::close(c->fd);
  }
}

void PsBulkServer::serve(caf::actor shard) {
  shard_ = std::move(shard);
  acceptor_ = std::thread([this] { accept_loop(); });
}

void PsBulkServer::accept_loop() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    // Finished connections give their slot back here, on the accepting thread.
    connections_.erase(std::remove_if(connections_.begin(), connections_.end(),
                                      [](const std::unique_ptr<Connection>& c) {
                                        if (!c->finished) return false;
                                        c->worker.join();
                                        ::close(c->fd);
                                        return true;
                                      }),
                       connections_.end());
    const size_t unproven = size_t(std::count_if(
        connections_.begin(), connections_.end(),
        [](const std::unique_ptr<Connection>& c) { return !c->proven && !c->finished; }));
    if (stopping_ || unproven >= kMaxUnproven || connections_.size() >= kMaxConnections) {
      std::cerr << "troupe: " << options_.name << " closed a ps bulk connection from "
                << peer_of(fd) << ": "
                << (unproven >= kMaxUnproven
                        ? std::to_string(unproven) + " have not proved the secret yet"
                        : std::to_string(connections_.size()) + " are open already")
                << "\n";
      ::close(fd);
      continue;
    }
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->peer = peer_of(fd);
    Connection* raw = c.get();
    connections_.push_back(std::move(c));
    raw->worker = std::thread([this, raw] {
      serve_connection(*raw);
      raw->finished = true;
    });
  }
}

void PsBulkServer::serve_connection(Connection& c) {
  const int fd = c.fd;
  // Replies are small writes followed by a wait for the next request: without this, Nagle's
  // algorithm holds the second write back for the client's delayed ACK (40 ms per push).
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  net::set_io_timeout(fd, std::min<int>(kHandshakeTimeoutMs, int(options_.timeout.count())));
  // Nothing the peer sends is parsed before it has proved the secret.
  if (!net::ps_bulk_accept(fd, options_.secret)) {
    std::cerr << "troupe: " << options_.name << " refused a ps bulk connection from " << c.peer
              << ": wrong shared secret\n";
    ::shutdown(fd, SHUT_RDWR);
    return;
  }
  c.proven = true;
  net::set_io_timeout(fd, int(options_.timeout.count()));
  caf::scoped_actor self{sys_};
  net::ReceiveBuffers buffers;  // pushed values' buffers, reused once the shard let go of them
  std::string problem;
  while (problem.empty()) {
    char lead[5];  // op, header length: one read
    const ssize_t got = read_request_lead(fd, lead, sizeof lead);
    if (got == 0) break;  // the client closed the connection
    if (!net::read_all(fd, lead + got, sizeof lead - size_t(got))) {
      problem = "connection lost before the request header";
      break;
    }
    const uint8_t op = uint8_t(lead[0]);
    uint32_t header_bytes = 0;
    std::memcpy(&header_bytes, lead + 1, 4);
    if (header_bytes > net::kMaxPsBulkHeaderBytes) {
      problem = "request header of " + std::to_string(header_bytes) + " bytes (at most " +
                std::to_string(net::kMaxPsBulkHeaderBytes) + ")";
      break;
    }
    std::vector<char> header(header_bytes);
    if (!net::read_all(fd, header.data(), header.size())) {
      problem = "connection lost inside the request header";
      break;
    }
    auto decode = [&](auto& msg) {
      if (auto err = wire::from_bytes(header.data(), header.size(), msg))
        problem = "malformed request header: " + to_status(err).message();
      return problem.empty();
    };
    bool sent = false;
    // A read or a gather: the shard's value goes back as a stream.
    auto reply_value = [&](auto msg) {
      ps_value_msg value;
      Status s = ask_shard(self, shard_, options_.timeout, std::move(msg), value);
      if (!s.ok()) return write_error(fd, s);
      const char ok = char(net::kPsBulkOk);  // leaves with the value's first bytes
      return (problem = net::write_tensor_chunked(fd, value.value, net::kMaxBulkChunkBytes, nullptr,
                                                  std::string_view(&ok, 1)))
          .empty();
    };
    if (op == uint8_t(net::PsBulkOp::read)) {
      ps_read_msg msg;
      if (!decode(msg)) break;
      sent = reply_value(std::move(msg));
    } else if (op == uint8_t(net::PsBulkOp::gather)) {
      ps_gather_msg msg;
      if (!decode(msg)) break;
      sent = reply_value(std::move(msg));
    } else if (op == uint8_t(net::PsBulkOp::write) || op == uint8_t(net::PsBulkOp::apply)) {
      ps_ack_msg ack;
      Status s;
      if (op == uint8_t(net::PsBulkOp::write)) {
        ps_write_msg msg;
        if (!decode(msg) || !(problem = net::read_tensor_chunked(fd, msg.value, &buffers)).empty())
          break;
        s = ask_shard(self, shard_, options_.timeout, std::move(msg), ack);
      } else {
        ps_apply_msg msg;
        if (!decode(msg) || !(problem = net::read_tensor_chunked(fd, msg.grad, &buffers)).empty())
          break;
        s = ask_shard(self, shard_, options_.timeout, std::move(msg), ack);
      }
      if (!s.ok()) {
        sent = write_error(fd, s);
      } else {
        std::vector<char> bytes;
        wire::to_bytes(ack, bytes);
        // One write: status, length, acknowledgement.
        const uint32_t length = uint32_t(bytes.size());
        std::vector<char> reply(5 + bytes.size());
        reply[0] = char(net::kPsBulkOk);
        std::memcpy(reply.data() + 1, &length, 4);
        std::memcpy(reply.data() + 5, bytes.data(), bytes.size());
        sent = net::write_all(fd, reply.data(), reply.size());
      }
    } else {
      problem = "unknown request op " + std::to_string(op);
      break;
    }
    if (!sent && problem.empty()) problem = "connection lost while replying";
  }
  if (!problem.empty())
    std::cerr << "troupe: " << options_.name << " dropped the ps bulk connection from " << c.peer
              << ": " << problem << "\n";
  ::shutdown(fd, SHUT_RDWR);
}

}  // namespace troupe
