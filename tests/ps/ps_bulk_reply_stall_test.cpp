// A ps task that stops partway through a reply is alive, not gone: the bulk client names it as
// silent (deadline_exceeded, which does not fail its shard over) however far the reply had come,
// and as gone (unavailable) only when the connection breaks. The ps task here is a scripted
// server that proves the handshake, takes one request, writes the first bytes of a reply and
// then sends nothing more until the test ends.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <thread>

#include "coordinator/ps/ps_bulk_client.hpp"
#include "core/status.hpp"
#include "net/ps_bulk_protocol.hpp"
#include "net/socket_io.hpp"

using namespace troupe;

namespace {

constexpr const char* kSecret = "stall-secret";

// Serves one connection: the handshake, one request (whatever its bytes), then `reply`; then
// it either closes the connection (`close_after`) or holds it silent until destroyed.
class ScriptedPsTask {
 public:
  ScriptedPsTask(std::string reply, bool close_after) : listen_fd_(net::listen_loopback(port_)) {
    thread_ = std::thread([this, reply = std::move(reply), close_after] {
      fd_ = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd_ < 0) return;
      net::set_io_timeout(fd_, 10000);
      if (!net::ps_bulk_accept(fd_, kSecret)) return;
      char request[4096];
      if (::recv(fd_, request, sizeof request, 0) <= 0) return;
      net::write_all(fd_, reply.data(), reply.size());
      if (close_after) ::shutdown(fd_, SHUT_RDWR);
      done_.get_future().wait();
    });
  }
  ~ScriptedPsTask() {
    ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept() if no client came
    done_.set_value();
    thread_.join();
    if (fd_ >= 0) ::close(fd_);
    ::close(listen_fd_);
  }

  PsBulkClientOptions client_options() const {
    PsBulkClientOptions options;
    options.host = "127.0.0.1";
    options.port = port_;
    options.secret = kSecret;
    options.label = "ps shard 'ps:0'";
    options.timeout = std::chrono::milliseconds(300);
    return options;
  }

 private:
  uint16_t port_ = 0;
  int listen_fd_ = -1;
  int fd_ = -1;
  std::promise<void> done_;
  std::thread thread_;
};

std::string bytes_of(uint8_t status, const void* rest = nullptr, size_t rest_bytes = 0) {
  std::string out(1, char(status));
  out.append(static_cast<const char*>(rest), rest_bytes);
  return out;
}

// The error a push of 4 floats to `task` ends with, and its code.
Error push_error(const ScriptedPsTask& task) {
  PsBulkClient bulk(task.client_options());
  try {
    bulk.write(ps_write_msg{"w", 0, 0, Tensor(), Tensor::zeros(DType::float32, Shape{4})});
  } catch (const Error& e) {
    return e;
  }
  return Error(Code::ok, "the push succeeded");
}

}  // namespace

TEST(PsBulkReplyStall, AStallAfterTheAcknowledgementsStatusIsADeadlineNamingTheShard) {
  ScriptedPsTask task(bytes_of(net::kPsBulkOk), /*close_after=*/false);
  const Error e = push_error(task);
  EXPECT_EQ(e.code(), Code::deadline_exceeded) << e.what();
  EXPECT_EQ(std::string(e.what()),
            "ps shard 'ps:0' serving variable 'w' did not answer within 300 ms (bulk push): no "
            "progress within the timeout before the acknowledgement");
}

TEST(PsBulkReplyStall, AStallInsideTheAcknowledgementIsADeadline) {
  const uint32_t length = 40;  // of which nothing comes
  ScriptedPsTask task(bytes_of(net::kPsBulkOk, &length, 4), /*close_after=*/false);
  const Error e = push_error(task);
  EXPECT_EQ(e.code(), Code::deadline_exceeded) << e.what();
  EXPECT_NE(std::string(e.what()).find("inside the acknowledgement"), std::string::npos)
      << e.what();
}

TEST(PsBulkReplyStall, AStallInsideAnErrorReplyIsADeadline) {
  const int32_t code = int32_t(Code::not_found);  // and then neither length nor text
  ScriptedPsTask task(bytes_of(net::kPsBulkError, &code, 4), /*close_after=*/false);
  const Error e = push_error(task);
  EXPECT_EQ(e.code(), Code::deadline_exceeded) << e.what();
  EXPECT_NE(std::string(e.what()).find("no progress within the timeout inside an error reply"),
            std::string::npos)
      << e.what();
}

TEST(PsBulkReplyStall, AConnectionClosedAfterTheStatusIsUnavailableNamingTheShard) {
  ScriptedPsTask task(bytes_of(net::kPsBulkOk), /*close_after=*/true);
  const Error e = push_error(task);
  EXPECT_EQ(e.code(), Code::unavailable) << e.what();
  EXPECT_EQ(std::string(e.what()),
            "ps shard 'ps:0' serving variable 'w' went away during a bulk push: connection lost "
            "before the acknowledgement");
}

TEST(PsBulkReplyStall, AnOversizedErrorTextIsRefusedAsMalformed) {
  std::string reply = bytes_of(net::kPsBulkError);
  const int32_t code = int32_t(Code::internal);
  const uint32_t length = net::kMaxPsBulkErrorBytes + 1;
  reply.append(reinterpret_cast<const char*>(&code), 4);
  reply.append(reinterpret_cast<const char*>(&length), 4);
  ScriptedPsTask task(reply, /*close_after=*/false);
  const Error e = push_error(task);
  EXPECT_EQ(e.code(), Code::unavailable) << e.what();
  EXPECT_NE(std::string(e.what()).find("malformed reply (an error text of"), std::string::npos)
      << e.what();
}
