#include "coordinator/ps/ps_bulk_client.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/ps/shard_write.hpp"
#include "core/status.hpp"
#include "messages/caf_compat.hpp"
#include "net/bulk_tensor_stream.hpp"
#include "net/ps_bulk_protocol.hpp"
#include "net/socket_io.hpp"

namespace troupe {
namespace {

bool dense_host(const Tensor& t, uint64_t min_bytes) {
  return t.defined() && t.memory() == MemoryKind::host && t.byte_size() >= min_bytes;
}

// Indices that fit in a request header (none at all fit too).
bool header_indices(const Tensor& indices) {
  return !indices.defined() ||
         (indices.memory() == MemoryKind::host && indices.byte_size() <= net::kMaxPsBulkIndexBytes);
}

}  // namespace

struct PsBulkClient::Connection {
  int fd = -1;
  net::ReceiveBuffers buffers;  // pulled values' buffers, reused once the caller drops them
  ~Connection() {
    if (fd >= 0) ::close(fd);
  }
};

PsBulkClient::PsBulkClient(PsBulkClientOptions options) : options_(std::move(options)) {
  if (options_.port == 0) throw invalid_argument("ps bulk client: port 0 for " + options_.label);
  if (options_.timeout.count() < 1)
    throw invalid_argument("ps bulk client: timeout must be >= 1 ms, got " +
                           std::to_string(options_.timeout.count()));
  if (options_.chunk_bytes == 0 || options_.chunk_bytes > net::kMaxBulkChunkBytes)
    throw invalid_argument("ps bulk client: chunk_bytes must be in 1 .. " +
                           std::to_string(net::kMaxBulkChunkBytes) + ", got " +
                           std::to_string(options_.chunk_bytes));
}

PsBulkClient::~PsBulkClient() = default;

bool PsBulkClient::carries(const ps_write_msg& msg) const {
  const auto kind = ShardWrite(msg.kind);
  return !msg.indices.defined() &&
         (kind == ShardWrite::assign || kind == ShardWrite::assign_add ||
          kind == ShardWrite::assign_sub) &&
         dense_host(msg.value, options_.min_bytes);
}

bool PsBulkClient::carries(const ps_apply_msg& msg) const {
  return header_indices(msg.indices) && dense_host(msg.grad, options_.min_bytes);
}

bool PsBulkClient::carries(const ps_gather_msg& msg, uint64_t row_bytes) const {
  return msg.rows.defined() && header_indices(msg.rows) &&
         uint64_t(msg.rows.num_elements()) * row_bytes >= options_.min_bytes;
}

std::unique_ptr<PsBulkClient::Connection> PsBulkClient::acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  const std::string peer = options_.host + ":" + std::to_string(options_.port);
  auto c = std::make_unique<Connection>();
  try {
    c->fd = net::connect_to(options_.host, options_.port);
    net::set_io_timeout(c->fd, int(options_.timeout.count()));
    net::ps_bulk_authenticate(c->fd, options_.secret, peer);
  } catch (const Error& e) {
    throw Error(e.code(), options_.label + ": " + e.what());
  }
  return c;
}

void PsBulkClient::release(std::unique_ptr<Connection> c) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (idle_.size() < kPsBulkConnectionsKept) idle_.push_back(std::move(c));
}

namespace {

// op, header length, header: sent as one write, alone or ahead of a pushed tensor (small
// segments each cost a round of the TCP stack and a wake-up of the ps task's reader).
std::vector<char> request_bytes(uint8_t op, const std::vector<char>& header) {
  const uint32_t length = uint32_t(header.size());
  std::vector<char> request(5 + header.size());
  request[0] = char(op);
  std::memcpy(request.data() + 1, &length, 4);
  std::memcpy(request.data() + 5, header.data(), header.size());
  return request;
}

// Reads `size` bytes of a reply, or throws: deadline_exceeded (`silent`) when the socket's
// timeout passed, for the ps task is alive but stopped sending (stopped, overloaded), unavailable
// (`lost`) when the connection broke. `where` says how far the reply had come.
void read_reply(int fd, void* data, size_t size, const std::string& lost, const std::string& silent,
                const char* where) {
  errno = 0;
  if (net::read_all(fd, data, size)) return;
  if (errno == EAGAIN || errno == EWOULDBLOCK)
    throw Error(Code::deadline_exceeded, silent + ": no progress within the timeout " + where);
  throw unavailable(lost + ": connection lost " + where);
}

// Reads the status byte: the shard's error for an error reply, ok otherwise.
Status read_status(int fd, const std::string& lost, const std::string& silent) {
  uint8_t status = 0;
  errno = 0;
  if (!net::read_all(fd, &status, 1)) {
    // Nothing of the reply came: the ps task did not answer at all.
    if (errno == EAGAIN || errno == EWOULDBLOCK) throw Error(Code::deadline_exceeded, silent);
    throw unavailable(lost + ": connection lost before the reply");
  }
  if (status == net::kPsBulkOk) return Status::ok_status();
  if (status != net::kPsBulkError)
    throw unavailable(lost + ": malformed reply (status " + std::to_string(status) + ")");
  int32_t code = 0;
  uint32_t length = 0;
  read_reply(fd, &code, 4, lost, silent, "inside an error reply");
  read_reply(fd, &length, 4, lost, silent, "inside an error reply");
  if (length > net::kMaxPsBulkErrorBytes)
    throw unavailable(lost + ": malformed reply (an error text of " + std::to_string(length) +
                      " bytes)");
  std::string message(length, '\0');
  read_reply(fd, message.data(), length, lost, silent, "inside an error reply");
  return Status(Code(code), message);
}

template <class Msg>
std::vector<char> header_of(Msg& msg) {
  std::vector<char> bytes;
  if (auto err = wire::to_bytes(msg, bytes))
    throw internal_error("ps bulk client: cannot encode the request header");
  return bytes;
}

}  // namespace

std::string PsBulkClient::silent(const std::string& name, const char* what) const {
  return options_.label + " serving variable '" + name + "' did not answer within " +
         std::to_string(options_.timeout.count()) + " ms (bulk " + what + ")";
}

PsBulkClient::Sent::Sent() = default;
PsBulkClient::Sent::Sent(Sent&&) noexcept = default;
PsBulkClient::Sent& PsBulkClient::Sent::operator=(Sent&&) noexcept = default;
PsBulkClient::Sent::~Sent() = default;

Error PsBulkClient::broken(const Sent& sent, const std::string& problem) const {
  // A ps task that stopped moving bytes is alive (stopped, overloaded): named as one that did
  // not answer, like a stalled reply, not as gone, which would fail its shard over.
  if (net::is_stall(problem))
    return Error(Code::deadline_exceeded, silent(sent.name_, sent.what_) + ": " + problem);
  return unavailable(lost(sent) + ": " + problem);
}

std::string PsBulkClient::lost(const Sent& sent) const {
  return options_.label + " serving variable '" + sent.name_ + "' went away during a bulk " +
         sent.what_;
}

PsBulkClient::Sent PsBulkClient::start(uint8_t op, const std::string& name,
                                       const std::vector<char>& header, const Tensor* stream,
                                       const char* what) {
  Sent sent;
  sent.name_ = name;
  sent.what_ = what;
  try {
    try {
      sent.connection_ = acquire();
    } catch (const Error& e) {
      sent.refused_ = e.code() == Code::unavailable;
      throw;
    }
    const int fd = sent.connection_->fd;
    const std::vector<char> request = request_bytes(op, header);
    if (!stream) {
      if (!net::write_all(fd, request.data(), request.size()))
        throw unavailable(lost(sent) + ": connection lost while sending the request");
    } else {
      const std::string problem =
          net::write_tensor_chunked(fd, *stream, options_.chunk_bytes, &sent_,
                                    std::string_view(request.data(), request.size()));
      if (!problem.empty()) throw broken(sent, problem);
    }
  } catch (...) {
    sent.connection_.reset();
    sent.failure_ = std::current_exception();
  }
  return sent;
}

PsBulkClient::Sent PsBulkClient::send(const ps_read_msg& msg) {
  ps_read_msg copy = msg;
  return start(uint8_t(net::PsBulkOp::read), msg.name, header_of(copy), nullptr, "pull");
}

PsBulkClient::Sent PsBulkClient::send(const ps_gather_msg& msg) {
  ps_gather_msg copy = msg;  // the row indices are the header's: a gather sends no stream
  return start(uint8_t(net::PsBulkOp::gather), msg.name, header_of(copy), nullptr, "gather");
}

PsBulkClient::Sent PsBulkClient::send(const ps_write_msg& msg) {
  ps_write_msg header = msg;
  header.value = Tensor();  // travels as the stream after the header
  return start(uint8_t(net::PsBulkOp::write), msg.name, header_of(header), &msg.value, "push");
}

PsBulkClient::Sent PsBulkClient::send(const ps_apply_msg& msg) {
  ps_apply_msg header = msg;
  header.grad = Tensor();
  return start(uint8_t(net::PsBulkOp::apply), msg.name, header_of(header), &msg.grad,
               "gradient apply");
}

std::unique_ptr<PsBulkClient::Connection> PsBulkClient::await_reply(Sent& sent) {
  if (sent.failure_) std::rethrow_exception(sent.failure_);
  auto c = std::move(sent.connection_);
  if (Status refused = read_status(c->fd, lost(sent), silent(sent.name_, sent.what_));
      !refused.ok()) {
    release(std::move(c));  // the shard answered an error: the connection is still in step
    refused.throw_if_error();
  }
  return c;
}

ps_value_msg PsBulkClient::receive_value(Sent sent) {
  auto c = await_reply(sent);
  ps_value_msg out{sent.name_, Tensor()};
  const std::string problem = net::read_tensor_chunked(c->fd, out.value, &c->buffers);
  if (!problem.empty()) throw broken(sent, problem);
  received_ += out.value.byte_size();
  release(std::move(c));
  return out;
}

ps_ack_msg PsBulkClient::receive_ack(Sent sent) {
  auto c = await_reply(sent);
  const std::string gone = lost(sent), quiet = silent(sent.name_, sent.what_);
  uint32_t length = 0;
  read_reply(c->fd, &length, 4, gone, quiet, "before the acknowledgement");
  if (length > net::kMaxPsBulkHeaderBytes)
    throw unavailable(gone + ": malformed acknowledgement (" + std::to_string(length) + " bytes)");
  std::vector<char> bytes(length);
  read_reply(c->fd, bytes.data(), length, gone, quiet, "inside the acknowledgement");
  ps_ack_msg ack;
  if (auto err = wire::from_bytes(bytes.data(), bytes.size(), ack))
    throw unavailable(gone + ": malformed acknowledgement");
  release(std::move(c));
  return ack;
}

}  // namespace troupe
