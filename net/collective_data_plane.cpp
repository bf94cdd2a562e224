#include "net/collective_data_plane.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <iostream>
#include <random>

#include "core/hmac.hpp"
#include "core/status.hpp"
#include "net/gatekeeper.hpp"
#include "net/shm_ring.hpp"
#include "net/socket_io.hpp"

namespace troupe {
namespace {

constexpr size_t kNonceBytes = 32, kProofBytes = 32;
constexpr uint32_t kFrameMagic = 0x54524344;  // "TRCD"
constexpr uint64_t kMaxFrameBytes = uint64_t(16) << 30;
// A stranger must not be able to tie up a thread per connection for long: at most this many
// connections may be in the handshake at once, each for at most kHandshakeMs.
constexpr int kMaxPendingHandshakes = 16;
constexpr int kHandshakeMs = 5000;

struct FrameHeader {
  uint32_t magic;
  uint8_t phase;
  uint8_t dtype;
  uint16_t zero;
  int32_t from, to, step, chunk;
  int64_t instance, offset, count;
};
static_assert(sizeof(FrameHeader) == 48, "frame header layout is part of the wire format");

constexpr size_t kInlineWriteBytes = 64 << 10;

FrameHeader header_of(const CollectiveMessage& m) {
  return FrameHeader{kFrameMagic, uint8_t(m.phase), uint8_t(m.payload.dtype()),
                     0,           m.from,           m.to,
                     m.step,      m.chunk,          m.instance,
                     m.offset,    m.count};
}

std::string listener_proof(const std::string& secret, const std::string& nonce) {
  return challenge_proof(secret, "troupe-collective-data-v1 listener" + nonce);
}

std::string random_nonce() {
  static thread_local std::random_device entropy;
  std::string nonce(kNonceBytes, '\0');
  for (auto& ch : nonce) ch = char(entropy());
  return nonce;
}

/// How a blocking transfer ended.
enum class Io { ok, closed, stalled, idle };

/// Reads exactly `size` bytes. With `idle_ok`, a timeout before the first byte is `idle` (a quiet
/// connection between collectives is fine); a timeout after it is `stalled`.
Io read_exact(int fd, void* data, size_t size, bool idle_ok) {
  auto p = static_cast<char*>(data);
  bool any = false;
  while (size > 0) {
    ssize_t n = ::recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return idle_ok && !any ? Io::idle : Io::stalled;
    if (n <= 0) return Io::closed;
    any = true;
    p += n;
    size -= size_t(n);
  }
  return Io::ok;
}

/// Writes the header and the payload in as few system calls as the kernel allows.
Io write_frame(int fd, const FrameHeader& header, const void* payload, size_t bytes) {
  errno = 0;
  if (net::write_all(fd, &header, sizeof header, payload, bytes)) return Io::ok;
  return errno == EAGAIN || errno == EWOULDBLOCK ? Io::stalled : Io::closed;
}

Io from_ring(RingIo r) {
  switch (r) {
    case RingIo::ok: return Io::ok;
    case RingIo::idle: return Io::idle;
    case RingIo::stalled: return Io::stalled;
    default: return Io::closed;
  }
}

/// The stream beside a shared-memory ring carries nothing after the handshake: readable or hung
/// up means the other process closed it (or died, and the kernel closed it).
bool stream_open(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  return ::poll(&p, 1, 0) == 0;
}

std::string endpoint(const std::string& host, uint16_t port) {
  return host + ":" + std::to_string(port);
}

std::string peer_address(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "?";
  char text[INET_ADDRSTRLEN] = "?";
  ::inet_ntop(AF_INET, &addr.sin_addr, text, sizeof text);
  return endpoint(text, ntohs(addr.sin_port));
}

// net::listen_on, its errors naming the data plane.
int listen_on(const std::string& host, uint16_t& port_out) {
  try {
    return net::listen_on(host, port_out);
  } catch (const Error& e) {
    throw Error(e.code(), "collective data plane: " + std::string(e.what()));
  }
}

}  // namespace

std::string collective_data_dialer_proof(const std::string& secret, const std::string& nonce,
                                         int rank) {
  return challenge_proof(secret, "troupe-collective-data-v1 dialer" + nonce + std::to_string(rank));
}

int dial_collective_data(const std::string& host, uint16_t port, int rank,
                         const std::string& secret, int timeout_ms) {
  const std::string where = endpoint(host, port);
  int fd = net::connect_to(host, port);
  net::set_io_timeout(fd, timeout_ms);
  auto give_up = [&](Error e) -> Error {
    ::close(fd);
    return e;
  };
  std::string server_nonce(kNonceBytes, '\0'), client_nonce = random_nonce();
  if (read_exact(fd, server_nonce.data(), kNonceBytes, false) != Io::ok)
    throw give_up(unavailable("collective data listener " + where + " sent no challenge within " +
                              std::to_string(timeout_ms) + " ms"));
  uint32_t my_rank = uint32_t(rank);
  std::string proof = collective_data_dialer_proof(secret, server_nonce, rank);
  uint8_t accepted = 0;
  if (!net::write_all(fd, &my_rank, 4) || !net::write_all(fd, client_nonce.data(), kNonceBytes) ||
      !net::write_all(fd, proof.data(), kProofBytes) ||
      read_exact(fd, &accepted, 1, false) != Io::ok || accepted != 1)
    throw give_up(failed_precondition("authentication failed at collective data listener " + where +
                                      ": it refused rank " + std::to_string(rank) +
                                      "'s proof (wrong shared secret?)"));
  std::string listener(kProofBytes, '\0');
  if (read_exact(fd, listener.data(), kProofBytes, false) != Io::ok ||
      !constant_time_equal(listener, listener_proof(secret, client_nonce)))
    throw give_up(failed_precondition("collective data listener " + where +
                                      " did not prove the shared secret (not a cluster member)"));
  return fd;
}

struct CollectiveDataPlane::Outgoing {
  int rank = 0;
  int fd = -1;
  std::unique_ptr<ShmRing> ring;  // frames go here when set, else on fd
  std::string where;              // "data connection to H:P" / "shared-memory ring N to H:P"
  std::thread writer;
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<CollectiveMessage> queue;
  bool stop = false;
  bool busy = false;  // the writer thread is between taking a frame and having written it
  std::atomic<bool> failed{false};
};

struct CollectiveDataPlane::Incoming {
  int fd = -1;
  int rank = -1;                  // set once authenticated
  std::unique_ptr<ShmRing> ring;  // set (under the plane's mutex) when the dialer offered one
  std::thread reader;
};

CollectiveDataPlane::CollectiveDataPlane(int rank, CollectiveDataPlaneOptions options,
                                         DeliverFn deliver, FailFn fail)
    : rank_(rank),
      options_(std::move(options)),
      deliver_(std::move(deliver)),
      fail_(std::move(fail)) {
  listen_fd_ = listen_on(options_.host, port_);
  acceptor_ = std::thread([this] { accept_loop(); });
}

CollectiveDataPlane::~CollectiveDataPlane() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
  acceptor_.join();
  ::close(listen_fd_);
  // The acceptor is gone: incoming_ and outgoing_ change no more.
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& in : incoming_) {
      ::shutdown(in->fd, SHUT_RDWR);
      if (in->ring) in->ring->close();
    }
  }
  for (auto& [rank, out] : outgoing_) {
    {
      std::lock_guard<std::mutex> lock(out->mutex);
      out->stop = true;
    }
    out->wake.notify_all();
    ::shutdown(out->fd, SHUT_RDWR);
    if (out->ring) out->ring->close();
  }
  for (auto& in : incoming_) {
    in->reader.join();
    ::close(in->fd);
  }
  for (auto& [rank, out] : outgoing_) {
    out->writer.join();
    ::close(out->fd);
  }
}

void CollectiveDataPlane::accept_loop() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    if (pending_handshakes_ >= kMaxPendingHandshakes) {
      std::cerr << "troupe: refused a collective data connection from " << peer_address(fd) << ": "
                << kMaxPendingHandshakes << " handshakes already pending\n";
      ::close(fd);
      continue;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    net::set_io_timeout(fd, std::min(options_.io_timeout_ms, kHandshakeMs));
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    auto in = std::make_unique<Incoming>();
    in->fd = fd;
    auto* raw = in.get();
    ++pending_handshakes_;
    in->reader = std::thread([this, raw] { serve(*raw); });
    incoming_.push_back(std::move(in));
  }
}

void CollectiveDataPlane::serve(Incoming& in) {
  const int fd = in.fd;
  const std::string from = peer_address(fd);
  struct HandshakeDone {  // counts this connection out of the pending ones on every path
    std::atomic<int>& pending;
    bool done = false;
    void operator()() {
      if (!done) --pending;
      done = true;
    }
    ~HandshakeDone() { (*this)(); }
  } handshake_done{pending_handshakes_};
  // Handshake: nothing but the challenge is sent, nothing but the proof is read, before the
  // dialer has shown it holds the secret.
  std::string nonce = random_nonce(), client_nonce(kNonceBytes, '\0'), proof(kProofBytes, '\0');
  uint32_t claimed = 0;
  if (!net::write_all(fd, nonce.data(), kNonceBytes) ||
      read_exact(fd, &claimed, 4, false) != Io::ok ||
      read_exact(fd, client_nonce.data(), kNonceBytes, false) != Io::ok ||
      read_exact(fd, proof.data(), kProofBytes, false) != Io::ok) {
    std::cerr << "troupe: collective data connection from " << from
              << " dropped: incomplete handshake\n";
    ::shutdown(fd, SHUT_RDWR);
    return;
  }
  const int rank = int(claimed);
  if (claimed > uint32_t(1) << 20 ||
      !constant_time_equal(proof, collective_data_dialer_proof(options_.secret, nonce, rank))) {
    uint8_t refused = 0;
    net::write_all(fd, &refused, 1);
    std::cerr << "troupe: refused a collective data connection from " << from << " claiming rank "
              << claimed << ": wrong shared secret\n";
    ::shutdown(fd, SHUT_RDWR);
    return;
  }
  uint8_t accepted = 1;
  std::string answer = listener_proof(options_.secret, client_nonce);
  if (!net::write_all(fd, &accepted, 1) || !net::write_all(fd, answer.data(), kProofBytes)) {
    ::shutdown(fd, SHUT_RDWR);
    return;
  }
  in.rank = rank;
  handshake_done();
  net::set_io_timeout(fd, options_.io_timeout_ms);
  const std::string who = "rank " + std::to_string(rank);
  auto failed = [&](const std::string& why) {
    ::shutdown(fd, SHUT_RDWR);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stopping_) fail_(rank, why);
  };
  // Transport negotiation: the dialer may offer a shared-memory ring.
  uint8_t mode = 0;
  if (read_exact(fd, &mode, 1, false) != Io::ok)
    return failed(who + " is down: the connection to its process was lost (data connection from " +
                  from + " closed before choosing a transport)");
  std::string via = "data connection from " + from;
  if (mode == 1) {
    uint16_t length = 0;
    std::string name;
    bool got_name = read_exact(fd, &length, 2, false) == Io::ok && length <= 255;
    if (got_name) {
      name.resize(length);
      got_name = read_exact(fd, name.data(), length, false) == Io::ok;
    }
    if (!got_name) return failed(who + " sent no usable shared-memory ring name on its " + via);
    uint8_t mapped = 0;
    try {
      auto ring = std::make_unique<ShmRing>(ShmRing::open(name));
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      in.ring = std::move(ring);
      mapped = 1;
      via = "shared-memory ring " + name + " from " + from;
    } catch (const std::exception& e) {
      std::cerr << "troupe: " << who << "'s shared-memory ring not used, TCP instead: " << e.what()
                << "\n";
    }
    if (!net::write_all(fd, &mapped, 1))
      return failed(who + " is down: the connection to its process was lost (" + via +
                    " closed while choosing a transport)");
  }
  ShmRing* ring = in.ring.get();
  const ShmRing::AliveFn alive = [&] { return !stopping_ && stream_open(fd); };
  const int timeout = options_.io_timeout_ms;
  auto read = [&](void* data, size_t size, bool idle_ok) {
    return ring ? from_ring(ring->read(data, size, timeout, idle_ok, alive))
                : read_exact(fd, data, size, idle_ok);
  };
  for (;;) {
    FrameHeader h{};
    Io got = read(&h, sizeof h, true);
    if (got == Io::idle) {
      if (stopping_) return;
      continue;
    }
    if (got == Io::closed)
      return failed(who + " is down: the connection to its process was lost (" + via + " closed)");
    if (got == Io::stalled)
      return failed(who + " stalled: its " + via +
                    " sent part of a frame header and then nothing for " + std::to_string(timeout) +
                    " ms");
    std::string problem;
    if (h.magic != kFrameMagic)
      problem = "bad frame magic " + std::to_string(h.magic);
    else if (h.from != rank)
      problem = "frame claims to come from rank " + std::to_string(h.from);
    else if (h.to != rank_)
      problem = "frame addressed to rank " + std::to_string(h.to) + ", this is rank " +
                std::to_string(rank_);
    else if (!is_valid_dtype(h.dtype))
      problem = "bad dtype " + std::to_string(h.dtype);
    else if (h.phase > uint8_t(CollectivePhase::broadcast))
      problem = "bad collective phase " + std::to_string(h.phase);
    else if (h.count < 0 || uint64_t(h.count) > kMaxFrameBytes / dtype_size(DType(h.dtype)))
      problem = "bad element count " + std::to_string(h.count);
    if (!problem.empty())
      return failed(who + " sent a malformed data frame on its " + via + ": " + problem);
    CollectiveMessage m;
    m.instance = h.instance;
    m.from = h.from;
    m.to = h.to;
    m.phase = CollectivePhase(h.phase);
    m.step = h.step;
    m.chunk = h.chunk;
    m.offset = h.offset;
    m.count = h.count;
    void* into = nullptr;
    if (m.phase == CollectivePhase::all_gather) {
      std::lock_guard<std::mutex> lock(landing_mutex_);
      auto it = landing_.find(m.instance);
      if (it != landing_.end() && it->second.dtype() == DType(h.dtype) && h.offset >= 0 &&
          h.offset <= it->second.num_elements() - h.count) {
        const Tensor& dest = it->second;
        m.payload = Tensor(dest.dtype(), Shape{h.count}, dest.buffer(),
                           dest.offset() + size_t(h.offset) * dtype_size(dest.dtype()));
        into = m.payload.raw_data_in_place();
      }
    }
    if (!into) {
      m.payload = Tensor(DType(h.dtype), Shape{h.count});
      into = m.payload.raw_data();
    }
    got = read(into, m.payload.byte_size(), false);
    if (got == Io::closed)
      return failed(who + " is down: the connection to its process was lost (" + via +
                    " closed mid-chunk: " + m.describe() + ")");
    if (got == Io::stalled)
      return failed(who + " stalled: its " + via + " made no progress for " +
                    std::to_string(timeout) + " ms in " + m.describe());
    received_ += m.payload.byte_size();
    deliver_(std::move(m));
  }
}

void CollectiveDataPlane::connect(int rank, const std::string& host, uint16_t port) {
  int fd = -1;
  try {
    fd = dial_collective_data(host, port, rank_, options_.secret, options_.io_timeout_ms);
  } catch (const Error& e) {
    throw Error(e.code(), "data connection to rank " + std::to_string(rank) + ": " + e.what());
  }
  auto out = std::make_unique<Outgoing>();
  out->rank = rank;
  out->fd = fd;
  out->where = "data connection to " + endpoint(host, port);
  // Same host: offer a shared-memory ring; the listener answers whether it could map it.
  uint8_t mode = options_.shared_memory && host.rfind("127.", 0) == 0 ? 1 : 0;
  std::unique_ptr<ShmRing> ring;
  if (mode == 1) {
    try {
      ring = std::make_unique<ShmRing>(ShmRing::create(options_.ring_bytes));
    } catch (const std::exception& e) {
      std::cerr << "troupe: no shared-memory ring to rank " << rank << ", TCP instead: " << e.what()
                << "\n";
      mode = 0;
    }
  }
  uint8_t mapped = 0;
  bool told = net::write_all(fd, &mode, 1);
  if (told && mode == 1) {
    uint16_t length = uint16_t(ring->name().size());
    told = net::write_all(fd, &length, 2) && net::write_all(fd, ring->name().data(), length) &&
           read_exact(fd, &mapped, 1, false) == Io::ok;
    ring->unlink();  // mapped by both now (or refused): the name is no longer needed
  }
  if (!told) {
    ::close(fd);
    throw unavailable("data connection to rank " + std::to_string(rank) + " at " +
                      endpoint(host, port) + " closed while choosing a transport");
  }
  if (mapped == 1) {
    out->where = "shared-memory ring " + ring->name() + " to " + endpoint(host, port);
    out->ring = std::move(ring);
  }
  auto* raw = out.get();
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_ || outgoing_.count(rank)) {
    ::close(fd);
    if (stopping_) return;
    throw failed_precondition("data connection to rank " + std::to_string(rank) + " opened twice");
  }
  out->writer = std::thread([this, raw] {
    auto& o = *raw;
    const std::string who = "rank " + std::to_string(o.rank);
    const int timeout = options_.io_timeout_ms;
    const ShmRing::AliveFn alive = [&] { return !stopping_ && stream_open(o.fd); };
    for (;;) {
      CollectiveMessage m;
      {
        std::unique_lock<std::mutex> lock(o.mutex);
        o.wake.wait(lock, [&] { return o.stop || !o.queue.empty(); });
        if (o.stop) return;
        m = std::move(o.queue.front());
        o.queue.pop_front();
        o.busy = true;
      }
      FrameHeader h = header_of(m);
      const size_t bytes = m.payload.byte_size();
      Io put;
      if (o.ring) {
        put = from_ring(o.ring->write(&h, sizeof h, timeout, alive));
        if (put == Io::ok)
          put = from_ring(o.ring->write(m.payload.raw_data(), bytes, timeout, alive));
      } else {
        put = write_frame(o.fd, h, m.payload.raw_data(), bytes);
      }
      if (put == Io::ok) {
        sent_ += bytes;
        std::lock_guard<std::mutex> lock(o.mutex);
        o.busy = false;
        continue;
      }
      o.failed = true;
      std::string why = put == Io::stalled
                            ? who + " stalled: its " + o.where + " accepted no bytes for " +
                                  std::to_string(timeout) + " ms while sending " + m.describe()
                            : who + " is down: the connection to its process was lost (" + o.where +
                                  " broke while sending " + m.describe() + ")";
      ::shutdown(o.fd, SHUT_RDWR);
      std::lock_guard<std::mutex> plane(mutex_);
      if (!stopping_) fail_(o.rank, why);
      return;
    }
  });
  outgoing_.emplace(rank, std::move(out));
}

void CollectiveDataPlane::land(int64_t instance, const Tensor& destination) {
  std::lock_guard<std::mutex> lock(landing_mutex_);
  landing_[instance] = destination;
}

void CollectiveDataPlane::unland(int64_t instance) {
  std::lock_guard<std::mutex> lock(landing_mutex_);
  landing_.erase(instance);
}

std::string CollectiveDataPlane::path_to(int rank) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = outgoing_.find(rank);
  if (it == outgoing_.end()) return "";
  return it->second->ring ? "shared_memory" : "tcp";
}

bool CollectiveDataPlane::can_send(int rank) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = outgoing_.find(rank);
  return it != outgoing_.end() && !it->second->failed;
}

void CollectiveDataPlane::send(CollectiveMessage message) {
  Outgoing* out = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = outgoing_.find(message.to);
    if (it == outgoing_.end())
      throw internal_error("no data connection to rank " + std::to_string(message.to) + " for " +
                           message.describe());
    out = it->second.get();
  }
  if (!message.payload.defined() || message.payload.memory() != MemoryKind::host)
    throw invalid_argument("collective data plane carries host tensors only: " +
                           message.describe());
  {
    std::lock_guard<std::mutex> lock(out->mutex);
    // A small frame into a ring with room, nothing queued before it: written here at once,
    // which saves waking the writer thread (most of a small collective's latency).
    if (out->ring && out->queue.empty() && !out->busy && !out->failed &&
        message.payload.byte_size() <= kInlineWriteBytes) {
      FrameHeader h = header_of(message);
      if (out->ring->try_write(&h, sizeof h, message.payload.raw_data(),
                               message.payload.byte_size())) {
        sent_ += message.payload.byte_size();
        return;
      }
    }
    out->queue.push_back(std::move(message));
  }
  out->wake.notify_one();
}

}  // namespace troupe
