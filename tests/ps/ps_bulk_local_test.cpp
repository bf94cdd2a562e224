// The ps bulk connection where it must not be used, and its settings' errors: a client in the
// shard's own actor system gets the shard's tensor handle through CAF (no copy, no bytes on the
// bulk connection) even with a bulk client registered; bad options are refused by name; an idle
// connection outlives the server's timeout; strangers hold at most 64 connections, the cluster's
// clients more; a cut-off request and an oversized header are dropped, and the log says why.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "actors/ps_bulk_server.hpp"
#include "coordinator/ps/ps_bulk_client.hpp"
#include "coordinator/ps/ps_client.hpp"
#include "messages/atoms.hpp"
#include "net/ps_bulk_protocol.hpp"
#include "net/socket_io.hpp"
#include "ps_test_support.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

// An in-process shard with a bulk server whose reads (and handshakes, up to 5 s) are bounded by
// `timeout`, and the options of a bulk client of it.
struct LocalBulkShard {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<PsBulkServer> server;
  caf::actor shard;
  std::string secret;

  explicit LocalBulkShard(std::string shared_secret,
                          std::chrono::milliseconds timeout = std::chrono::milliseconds(3000))
      : secret(std::move(shared_secret)) {
    configure_actor_system(cfg, ActorSystemOptions::in_process(2));
    sys = std::make_unique<caf::actor_system>(cfg);
    PsBulkServerOptions options;
    options.secret = secret;
    options.timeout = timeout;
    server = std::make_unique<PsBulkServer>(*sys, options);
    PsShardOptions shard_options{"ps:0", cpu_kernels()};
    shard_options.bulk_port = server->port();
    shard = spawn_ps_shard(*sys, shard_options);
    server->serve(shard);
  }
  ~LocalBulkShard() { caf::anon_send_exit(shard, caf::exit_reason::user_shutdown); }

  PsBulkClientOptions client_options() const {
    PsBulkClientOptions options;
    options.host = "127.0.0.1";
    options.port = server->port();
    options.secret = secret;
    return options;
  }

  // A raw connection to the bulk port, its reads and writes bounded by 10 s.
  int dial() const {
    const int fd = net::connect_to("127.0.0.1", server->port());
    net::set_io_timeout(fd, 10000);
    return fd;
  }
};

}  // namespace

TEST(PsBulkLocal, AShardOfThisProcessIsReachedThroughCafWithoutACopy) {
  LocalBulkShard local("local-secret");
  EXPECT_EQ(ask<uint16_t>(*local.sys, local.shard, bulk_atom::value), local.server->port());
  PsBulkClientOptions options = local.client_options();
  options.min_bytes = 0;
  auto bulk = std::make_shared<PsBulkClient>(options);
  PsClient client(*local.sys);
  client.use_bulk(local.shard, bulk);
  const int64_t n = int64_t(1) << 20;  // 4 MiB
  client.create(local.shard,
                ps_create_msg{{"v", "", {}, {}}, Tensor::zeros(DType::float32, Shape{n})});
  Tensor a = client.read(local.shard, "v"), b = client.read(local.shard, "v");
  EXPECT_EQ(a.raw_data(), b.raw_data());  // both are the shard's own bytes
  client.write(local.shard, ps_write_msg{"v", uint8_t(ShardWrite::assign), 0, Tensor(),
                                         Tensor::zeros(DType::float32, Shape{n})});
  EXPECT_EQ(bulk->bytes_sent(), 0u);
  EXPECT_EQ(bulk->bytes_received(), 0u);
}

TEST(PsBulkLocal, BadOptionsAreRefusedByName) {
  PsBulkClientOptions o;
  o.host = "127.0.0.1";
  o.label = "ps shard 'ps:3'";
  auto message = [](const PsBulkClientOptions& options) {
    try {
      PsBulkClient client(options);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::invalid_argument) << e.what();
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message(o), "ps bulk client: port 0 for ps shard 'ps:3'");
  o.port = 9;
  o.timeout = std::chrono::milliseconds(0);
  EXPECT_EQ(message(o), "ps bulk client: timeout must be >= 1 ms, got 0");
  o.timeout = std::chrono::seconds(1);
  o.chunk_bytes = 0;
  EXPECT_EQ(message(o), "ps bulk client: chunk_bytes must be in 1 .. 67108864, got 0");
  o.chunk_bytes = (uint64_t(64) << 20) + 1;
  EXPECT_EQ(message(o), "ps bulk client: chunk_bytes must be in 1 .. 67108864, got 67108865");

  caf::actor_system_config cfg;
  configure_actor_system(cfg, ActorSystemOptions::in_process(1));
  caf::actor_system sys{cfg};
  PsClient client(sys);
  try {
    client.use_bulk(caf::actor(), nullptr);
    FAIL() << "an empty shard handle was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "ps client: use_bulk needs a shard and a bulk client");
  }
}

TEST(PsBulkLocal, AServerThatCannotListenSaysWhere) {
  caf::actor_system_config cfg;
  configure_actor_system(cfg, ActorSystemOptions::in_process(1));
  caf::actor_system sys{cfg};
  PsBulkServerOptions o;
  o.host = "not-an-address";
  try {
    PsBulkServer server(sys, o);
    FAIL() << "a bad host was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_EQ(std::string(e.what()), "'not-an-address' is not a numeric IPv4 address to listen on");
  }
}

// The server's timeout bounds a request once it has started, not the wait for the next one: a
// pooled connection left idle for three timeouts still serves a pull (were it dropped, the
// client's pooled connection would be dead and the pull would fail as unavailable).
TEST(PsBulkLocal, AnIdleConnectionOutlivesTheServersTimeoutAndServesTheNextRequest) {
  LocalBulkShard local("idle-secret", std::chrono::milliseconds(200));
  const Tensor value = Tensor::from_vector<float>(Shape{3}, {1.5f, -2.f, 4.f});
  ask<ps_ack_msg>(*local.sys, local.shard, ps_create_msg{{"v", "", {}, {}}, value});
  PsBulkClient bulk(local.client_options());
  EXPECT_EQ(bulk.read(ps_read_msg{"v"}).value.to_vector<float>(), value.to_vector<float>());
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_EQ(bulk.read(ps_read_msg{"v"}).value.to_vector<float>(), value.to_vector<float>());
  EXPECT_EQ(bulk.bytes_received(), 2 * value.byte_size());
}

// The cluster's own clients are not held to the 64 connections a stranger may hold: 70
// connections that proved the secret stay open, and a client's pull on a 71st is served.
TEST(PsBulkLocal, ConnectionsThatProvedTheSecretAreNotHeldToTheStrangersLimit) {
  LocalBulkShard local("many-secret");
  ask<ps_ack_msg>(*local.sys, local.shard,
                  ps_create_msg{{"v", "", {}, {}}, Tensor::from_vector<float>(Shape{2}, {1, 2})});
  std::vector<int> proven;
  for (int k = 0; k < 70; ++k) {
    proven.push_back(local.dial());
    ASSERT_NO_THROW(net::ps_bulk_authenticate(proven.back(), "many-secret", "bulk port")) << k;
  }
  PsBulkClient bulk(local.client_options());
  EXPECT_EQ(bulk.read(ps_read_msg{"v"}).value.to_vector<float>(), (std::vector<float>{1, 2}));
  for (int fd : proven) ::close(fd);
}

// Connections that have not answered the challenge: 64 are served a challenge, the 65th is
// closed before it gets one.
TEST(PsBulkLocal, AtMost64ConnectionsWaitForTheirHandshakeAndTheNextIsClosed) {
  LocalBulkShard local("strangers-secret");
  std::vector<int> strangers;
  char challenge[32];
  for (int k = 0; k < 64; ++k) {
    strangers.push_back(local.dial());
    ASSERT_TRUE(net::read_all(strangers.back(), challenge, sizeof challenge)) << k;
  }
  ::testing::internal::CaptureStderr();
  const int next = local.dial();
  EXPECT_EQ(::recv(next, challenge, sizeof challenge, 0), 0);  // closed, no challenge
  ::close(next);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("closed a ps bulk connection from 127.0.0.1:"), std::string::npos) << log;
  EXPECT_NE(log.find(": 64 have not proved the secret yet"), std::string::npos) << log;
  for (int fd : strangers) ::close(fd);
}

namespace {

// What the bulk server logs about a proven connection that sends `bytes` and then stops
// sending: read once the server has closed it (its log line comes before the close).
std::string log_of_proven_sending(LocalBulkShard& local, const std::string& bytes) {
  const int fd = local.dial();
  net::ps_bulk_authenticate(fd, local.secret, "bulk port");
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(net::write_all(fd, bytes.data(), bytes.size()));
  ::shutdown(fd, SHUT_WR);
  char byte;
  EXPECT_EQ(::recv(fd, &byte, 1, 0), 0);  // closed by the server
  ::close(fd);
  return ::testing::internal::GetCapturedStderr();
}

}  // namespace

// A request cut off inside its op and length, and one announcing a header past the limit: the
// server drops the connection and its log names what was wrong.
TEST(PsBulkLocal, ARequestCutOffOrWithAnOversizedHeaderIsDroppedNamingIt) {
  LocalBulkShard local("cut-secret");
  const std::string cut = log_of_proven_sending(local, std::string("\x01\x02\x00", 3));
  EXPECT_NE(cut.find("dropped the ps bulk connection from 127.0.0.1:"), std::string::npos) << cut;
  EXPECT_NE(cut.find(": connection lost before the request header"), std::string::npos) << cut;
  const uint32_t oversized = net::kMaxPsBulkHeaderBytes + 1;
  std::string request(5, '\0');
  request[0] = char(net::PsBulkOp::read);
  std::memcpy(&request[1], &oversized, 4);
  EXPECT_NE(log_of_proven_sending(local, request)
                .find(": request header of " + std::to_string(oversized) + " bytes (at most " +
                      std::to_string(net::kMaxPsBulkHeaderBytes) + ")"),
            std::string::npos);
}
