// Dense values on the ps bulk connection (actors/ps_bulk_server.hpp, coordinator/ps/
// ps_bulk_client.hpp) between this test and a ps process (this binary started again as a child):
// exact contents of 16 MiB and 100 MiB (two chunks) pulls and pushes, shard errors and step-id
// deduplication through it, a ps process killed mid-push named at the client, a stopped one
// named at the timeout (a pull, a push stuck midway, a new connection without a challenge:
// deadline_exceeded, not unavailable, so no failover), and connections without the secret
// refused before anything they send is parsed.
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "actors/ps_bulk_server.hpp"
#include "coordinator/ps/connect_ps_shards.hpp"
#include "coordinator/ps/ps_bulk_client.hpp"
#include "coordinator/ps/ps_client.hpp"
#include "net/child_process.hpp"
#include "net/gatekeeper.hpp"
#include "net/ps_bulk_protocol.hpp"
#include "net/socket_io.hpp"
#include "net/tls_transport.hpp"
#include "net/wire_client.hpp"
#include "ps_bulk_test_support.hpp"
#include "ps_test_support.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

// Pull and push of `floats` float32 values: exact contents both ways, and the bytes went over
// the bulk connection (its counters), not through CAF.
void round_trip(int64_t floats) {
  PsProcess ps;
  ASSERT_NE(ps.bulk_port, 0) << ps.child.err();
  Client c(ps);
  const Tensor first = pattern(floats, 1), second = pattern(floats, 2);
  c.client->create(c.shard(), ps_create_msg{{"big", "", {}, {}}, first});
  Tensor pulled = c.client->read(c.shard(), "big");
  EXPECT_TRUE(same_bytes(pulled, first));
  auto ack = c.client->write(c.shard(),
                             ps_write_msg{"big", uint8_t(ShardWrite::assign), 0, Tensor(), second});
  EXPECT_TRUE(ack.applied);
  EXPECT_TRUE(same_bytes(c.client->read(c.shard(), "big"), second));
  // The creation went through CAF; both pulls and the push took the bulk connection.
  EXPECT_EQ(c.bulk->bytes_received(), 2 * first.byte_size());
  EXPECT_EQ(c.bulk->bytes_sent(), first.byte_size());
  ps.stop();
}

}  // namespace

// The child's entry point: runs only in the process the tests below start.
TEST(PsBulkProcess, ChildServesAShardWithABulkPort) {
  if (!std::getenv(kServeVariable)) GTEST_SKIP() << "entry point of the ps child process";
  caf::actor_system_config cfg;
  configure_actor_system(cfg, networked());
  caf::actor_system sys{cfg};
  PsBulkServerOptions bulk_options;
  bulk_options.secret = kSecret;
  PsBulkServer bulk(sys, bulk_options);
  PsShardOptions options{"ps:0", cpu_kernels()};
  options.bulk_port = bulk.port();
  caf::actor shard = spawn_ps_shard(sys, options);
  bulk.serve(shard);
  caf::actor gate = spawn_gatekeeper(sys, kSecret, shard);
  auto port = publish_actor(sys, gate, 0, "127.0.0.1", false);
  ASSERT_TRUE(port);
  std::cout << "PS_SHARD_PORT " << *port << std::endl;
  std::cout << "PS_BULK_PORT " << bulk.port() << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  caf::anon_send_exit(gate, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
}

TEST(PsBulkProcess, SixteenMiBPulledAndPushedWithExactContents) { round_trip(int64_t(4) << 20); }

// 100 MiB is above the 64 MiB chunk: the stream carries it as two chunks each way.
TEST(PsBulkProcess, HundredMiBPulledAndPushedInChunksWithExactContents) {
  round_trip(int64_t(25) << 20);
}

TEST(PsBulkProcess, DenseAppliesAreDeduplicatedByStepIdAndShardErrorsComeBackAsIs) {
  PsProcess ps;
  ASSERT_NE(ps.bulk_port, 0) << ps.child.err();
  Client c(ps);
  const int64_t n = int64_t(1) << 19;  // 2 MiB: above the 1 MiB threshold
  c.client->create(c.shard(), ps_create_msg{{"w", "", {}, {}}, pattern(n, 3)});
  const Tensor grad = pattern(n, 4);
  ps_apply_msg step{"w", 7, to_rule_msg(sgd_lr1()), Tensor(), grad, {}};
  EXPECT_TRUE(c.client->apply(c.shard(), step).applied);
  auto retry = c.client->apply(c.shard(), step);  // a rescheduled step sends it again
  EXPECT_FALSE(retry.applied);
  EXPECT_EQ(retry.updates, 1u);
  EXPECT_EQ(c.bulk->bytes_sent(), 2 * grad.byte_size());
  Tensor w = c.client->read(c.shard(), "w");
  const Tensor start = pattern(n, 3);
  for (int64_t i = 0; i < n; i += 4099)
    ASSERT_EQ(w.data<float>()[i], start.data<float>()[i] - grad.data<float>()[i]) << i;
  // The shard's own errors cross the bulk connection with their code and text, and the
  // connection stays usable afterwards.
  try {
    c.client->write(c.shard(),
                    ps_write_msg{"nope", uint8_t(ShardWrite::assign), 0, Tensor(), grad});
    FAIL() << "a push to an unknown variable succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos) << e.what();
  }
  try {
    c.client->write(c.shard(),
                    ps_write_msg{"w", uint8_t(ShardWrite::assign), 0, Tensor(), pattern(n + 1, 0)});
    FAIL() << "a push of the wrong shape succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument) << e.what();
    EXPECT_NE(std::string(e.what()).find("'w'"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(same_bytes(c.client->read(c.shard(), "w"), w));
  ps.stop();
}

namespace {

// A [rows, 64] float32 table whose row r holds r * 64 + column (exact in float32 below 2^24).
constexpr int64_t kTableRows = 100000, kRowFloats = 64;
constexpr uint64_t kRowBytes = kRowFloats * sizeof(float);
Tensor table() {
  Tensor t(DType::float32, Shape{kTableRows, kRowFloats});
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = float(i);
  return t;
}

// `count` distinct rows spread over the table, in no particular order.
Tensor some_rows(int64_t count) {
  std::vector<int64_t> ids;
  for (int64_t k = 0; k < count; ++k) ids.push_back((k * 7919) % kTableRows);
  return Tensor::from_vector<int64_t>(Shape{count}, ids);
}

// Row r of the table as gathered: r * 64 + column.
void expect_rows(const Tensor& got, const Tensor& ids, float minus = 0) {
  ASSERT_EQ(got.shape(), Shape({ids.num_elements(), kRowFloats}));
  const float* g = got.data<float>();
  for (int64_t k = 0; k < ids.num_elements(); ++k)
    for (int64_t c = 0; c < kRowFloats; ++c)
      ASSERT_EQ(g[k * kRowFloats + c], float(ids.data<int64_t>()[k] * kRowFloats + c) - minus)
          << "row " << ids.data<int64_t>()[k] << " column " << c;
}

}  // namespace

// An embedding lookup's gather and its sparse gradient apply (512 rows of 256 bytes: 128 KiB,
// above the 64 KiB threshold) take the bulk connection, the indices in the request header and
// the rows on the stream: exact rows both ways, step ids deduplicated, the shard's errors back
// with their code, the connection usable afterwards.
TEST(PsBulkProcess, GathersAndSparseAppliesOfEnoughBytesTakeTheBulkConnection) {
  PsProcess ps;
  ASSERT_NE(ps.bulk_port, 0) << ps.child.err();
  Client c(ps);
  c.client->create(c.shard(), ps_create_msg{{"emb", "", {}, {}}, table()});
  const Tensor ids = some_rows(512);
  auto got = c.client->gather_all({{c.shard(), ps_gather_msg{"emb", ids}}}, kRowBytes);
  ASSERT_EQ(got.size(), 1u);
  expect_rows(got[0], ids);
  EXPECT_EQ(c.bulk->bytes_received(), 512 * kRowBytes);

  Tensor grad(DType::float32, Shape{512, kRowFloats});
  for (int64_t i = 0; i < grad.num_elements(); ++i) grad.data<float>()[i] = 2;
  ps_apply_msg step{"emb", 11, to_rule_msg(sgd_lr1()), ids, grad, {}};
  EXPECT_TRUE(c.client->apply(c.shard(), step).applied);
  EXPECT_FALSE(c.client->apply(c.shard(), step).applied);  // the same step id: applied once
  EXPECT_EQ(c.bulk->bytes_sent(), 2 * grad.byte_size());
  got = c.client->gather_all({{c.shard(), ps_gather_msg{"emb", ids}}}, kRowBytes);
  expect_rows(got[0], ids, /*minus=*/2);
  // A row the shard does not have: its own error, through the stream, and the next gather works.
  std::vector<int64_t> bad(512, 5);
  bad[300] = kTableRows;
  try {
    c.client->gather_all(
        {{c.shard(), ps_gather_msg{"emb", Tensor::from_vector<int64_t>(Shape{512}, bad)}}},
        kRowBytes);
    FAIL() << "a gather of a row past the table succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::out_of_range) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(kTableRows)), std::string::npos)
        << e.what();
  }
  expect_rows(c.client->gather_all({{c.shard(), ps_gather_msg{"emb", ids}}}, kRowBytes)[0], ids, 2);
  EXPECT_EQ(c.bulk->bytes_received(), 3 * 512 * kRowBytes);
  ps.stop();
}

// Below a client's threshold (64 KiB here; none by default), without a row size, or with more
// indices than a request header takes (kMaxPsBulkIndexBytes), gathers and sparse applies stay
// CAF messages, with the same results.
TEST(PsBulkProcess, SmallGathersAndOnesWithTooManyIndicesStayOnCaf) {
  PsProcess ps;
  ASSERT_NE(ps.bulk_port, 0) << ps.child.err();
  Client c(ps, uint64_t(64) << 10);
  c.client->create(c.shard(), ps_create_msg{{"emb", "", {}, {}}, table()});
  const Tensor few = some_rows(16);  // 4 KiB of rows
  expect_rows(c.client->gather_all({{c.shard(), ps_gather_msg{"emb", few}}}, kRowBytes)[0], few);
  const Tensor enough = some_rows(512);
  expect_rows(c.client->gather_all({{c.shard(), ps_gather_msg{"emb", enough}}})[0], enough);
  Tensor grad(DType::float32, Shape{16, kRowFloats});
  for (int64_t i = 0; i < grad.num_elements(); ++i) grad.data<float>()[i] = 1;
  EXPECT_TRUE(
      c.client->apply(c.shard(), ps_apply_msg{"emb", 3, to_rule_msg(sgd_lr1()), few, grad, {}})
          .applied);
  const int64_t many = int64_t(net::kMaxPsBulkIndexBytes / sizeof(int64_t)) + 1;
  std::vector<int64_t> all(static_cast<size_t>(many));
  for (int64_t k = 0; k < many; ++k) all[size_t(k)] = k % kTableRows;
  const Tensor wide = Tensor::from_vector<int64_t>(Shape{many}, all);
  const Tensor rows = c.client->gather_all({{c.shard(), ps_gather_msg{"emb", wide}}}, kRowBytes)[0];
  ASSERT_EQ(rows.shape(), Shape({many, kRowFloats}));
  EXPECT_EQ(rows.data<float>()[(many - 1) * kRowFloats + 3], float((many - 1) * kRowFloats + 3));
  EXPECT_EQ(c.bulk->bytes_received(), 0u);
  EXPECT_EQ(c.bulk->bytes_sent(), 0u);
  ps.stop();
}

// A ps task whose bulk port takes no new connection (here its 64 places for connections that
// have not proved the secret are held by raw dials) still serves the request: it goes to the
// shard through CAF, with the same result, nothing moves on the bulk connection, and the client
// says so once.
TEST(PsBulkProcess, ARequestWhoseBulkConnectionIsRefusedGoesThroughCafOnce) {
  PsProcess ps;
  ASSERT_NE(ps.bulk_port, 0) << ps.child.err();
  Client c(ps);
  const Tensor value = pattern(1000, 7);
  c.client->create(c.shard(), ps_create_msg{{"w", "", {}, {}}, value});
  std::vector<int> strangers;
  for (int k = 0; k < 64; ++k) strangers.push_back(net::connect_to("127.0.0.1", ps.bulk_port));
  ::testing::internal::CaptureStderr();
  const Tensor first = c.client->read(c.shard(), "w");
  const ps_ack_msg ack = c.client->write(
      c.shard(), ps_write_msg{"w", uint8_t(ShardWrite::assign), 0, Tensor(), pattern(1000, 8)});
  const Tensor second = c.client->read(c.shard(), "w");
  const std::string log = ::testing::internal::GetCapturedStderr();
  for (int fd : strangers) ::close(fd);
  EXPECT_TRUE(same_bytes(first, value));
  EXPECT_TRUE(ack.applied);
  EXPECT_TRUE(same_bytes(second, pattern(1000, 8)));
  EXPECT_EQ(c.bulk->bytes_sent(), 0u);
  EXPECT_EQ(c.bulk->bytes_received(), 0u);
  const std::string said = "its bulk port took no new connection; such requests go through CAF";
  EXPECT_NE(log.find(said), std::string::npos) << log;
  EXPECT_EQ(log.find(said), log.rfind(said)) << "said more than once: " << log;
  EXPECT_TRUE(ps.logged("64 have not proved the secret yet"));
  ps.stop();
}

TEST(PsBulkProcess, UsePsBulkAsksTheShardForItsPort) {
  PsProcess ps;
  ASSERT_NE(ps.bulk_port, 0) << ps.child.err();
  caf::actor_system_config cfg;
  configure_actor_system(cfg, networked());
  caf::actor_system sys{cfg};
  WireClientOptions o;
  o.port = ps.port;
  o.secret = kSecret;
  PsShards shards;
  shards.handles.push_back(connect_to_service(sys, o));
  shards.tasks.push_back("/job:ps/task:0");
  shards.addresses.push_back("127.0.0.1:" + std::to_string(ps.port));
  PsClient client(sys, std::chrono::seconds(120));
  PsConnectOptions connect;
  connect.secret = kSecret;
  ASSERT_EQ(use_ps_bulk(sys, shards, connect, client), 1u);
  const Tensor value = pattern(int64_t(1) << 20, 5);
  client.create(shards.handles[0], ps_create_msg{{"v", "", {}, {}}, value});
  EXPECT_TRUE(same_bytes(client.read(shards.handles[0], "v"), value));
  ps.stop();
}

TEST(PsBulkProcess, APsProcessKilledDuringABulkPushIsNamedAtTheClient) {
  PsProcess ps;
  ASSERT_NE(ps.bulk_port, 0) << ps.child.err();
  Client c(ps);
  const Tensor value = pattern(int64_t(25) << 20, 6);  // 100 MiB: far more than socket buffers
  c.client->create(c.shard(), ps_create_msg{{"big", "", {}, {}}, pattern(4, 0)});
  c.client->read(c.shard(), "big");  // a bulk connection is open and idle in the pool
  // Stopped, the ps process takes what the socket buffers hold and no more: the push is stuck
  // mid-transfer until the kill.
  ps.child.signal(SIGSTOP);
  ASSERT_TRUE(all_threads_stopped(ps.child.pid()));
  std::string failure;
  std::thread pusher([&] {
    try {
      c.client->write(c.shard(),
                      ps_write_msg{"big", uint8_t(ShardWrite::assign), 0, Tensor(), value});
      failure = "the push succeeded";
    } catch (const Error& e) {
      failure = e.what();
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (c.bulk->bytes_sent() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  EXPECT_GT(c.bulk->bytes_sent(), 0u);
  EXPECT_LT(c.bulk->bytes_sent(), value.byte_size());
  ps.child.signal(SIGKILL);
  pusher.join();
  EXPECT_NE(failure.find("ps shard 'ps:0' (/job:ps/task:0 at 127.0.0.1:"), std::string::npos)
      << failure;
  EXPECT_NE(failure.find("serving variable 'big' went away during a bulk push: connection lost"),
            std::string::npos)
      << failure;
  EXPECT_NE(failure.find("of 104857600 payload bytes"), std::string::npos) << failure;
}

TEST(PsBulkProcess, AConnectionWithoutTheSecretIsRefusedBeforeAnythingIsParsed) {
  PsProcess ps;
  ASSERT_NE(ps.bulk_port, 0) << ps.child.err();
  // A stranger skips the proof and sends a request right away: its first 32 bytes are taken as
  // the proof, refused, and the connection is closed without a frame being read.
  int fd = net::connect_to("127.0.0.1", ps.bulk_port);
  net::set_io_timeout(fd, 60000);
  std::string nonce(32, '\0');
  ASSERT_TRUE(net::read_all(fd, nonce.data(), nonce.size()));
  std::string request(64, '\xff');  // op 255, a header "length" of 4 GiB, ...
  ASSERT_TRUE(net::write_all(fd, request.data(), request.size()));
  uint8_t accepted = 7;
  ASSERT_TRUE(net::read_all(fd, &accepted, 1));
  EXPECT_EQ(accepted, 0);
  char more = 0;
  EXPECT_FALSE(net::read_all(fd, &more, 1));  // closed
  ::close(fd);
  EXPECT_TRUE(ps.logged("ps:0 refused a ps bulk connection from 127.0.0.1:")) << ps.child.err();
  EXPECT_TRUE(ps.logged(": wrong shared secret")) << ps.child.err();
  EXPECT_EQ(ps.child.err().find("dropped the ps bulk connection"), std::string::npos)
      << ps.child.err();

  // A client with the wrong secret gets a named error, not a silent fallback.
  PsBulkClientOptions wrong;
  wrong.host = "127.0.0.1";
  wrong.port = ps.bulk_port;
  wrong.secret = "not-the-secret";
  wrong.label = "ps shard 'ps:0'";
  PsBulkClient client(wrong);
  try {
    client.read(ps_read_msg{"w"});
    FAIL() << "a wrong secret was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::failed_precondition) << e.what();
    EXPECT_NE(std::string(e.what()).find("ps shard 'ps:0': authentication failed at ps bulk "
                                         "port 127.0.0.1:" +
                                         std::to_string(ps.bulk_port) + " (wrong shared secret?)"),
              std::string::npos)
        << e.what();
  }
  ps.stop();
}

// An authenticated connection whose request does not parse is dropped, and the ps task says
// what was wrong: a gather header that is not a ps_gather_msg, an op no client sends. The task
// keeps serving the other connections.
TEST(PsBulkProcess, AMalformedGatherAndAnUnknownOpAreDroppedNamingTheProblem) {
  PsProcess ps;
  ASSERT_NE(ps.bulk_port, 0) << ps.child.err();
  auto send_raw = [&](uint8_t op, const std::string& header) {
    int fd = net::connect_to("127.0.0.1", ps.bulk_port);
    net::set_io_timeout(fd, 60000);
    net::ps_bulk_authenticate(fd, kSecret, "127.0.0.1:" + std::to_string(ps.bulk_port));
    const uint32_t length = uint32_t(header.size());
    std::string request(1, char(op));
    request.append(reinterpret_cast<const char*>(&length), 4);
    request += header;
    EXPECT_TRUE(net::write_all(fd, request.data(), request.size()));
    char reply = 0;
    EXPECT_FALSE(net::read_all(fd, &reply, 1));  // closed, nothing answered
    ::close(fd);
  };
  send_raw(uint8_t(net::PsBulkOp::gather), std::string(12, '\x7f'));
  EXPECT_TRUE(ps.logged("ps:0 dropped the ps bulk connection from 127.0.0.1:")) << ps.child.err();
  EXPECT_TRUE(ps.logged(": malformed request header: ")) << ps.child.err();
  send_raw(9, "");
  EXPECT_TRUE(ps.logged(": unknown request op 9")) << ps.child.err();
  Client c(ps);
  c.client->create(c.shard(), ps_create_msg{{"emb", "", {}, {}}, table()});
  const Tensor ids = some_rows(512);
  expect_rows(c.client->gather_all({{c.shard(), ps_gather_msg{"emb", ids}}}, kRowBytes)[0], ids);
  EXPECT_EQ(c.bulk->bytes_received(), 512 * kRowBytes);
  ps.stop();
}

TEST(PsBulkProcess, AStoppedPsProcessIsNamedAtTheTimeout) {
  PsProcess ps;
  ASSERT_NE(ps.bulk_port, 0) << ps.child.err();
  caf::actor_system_config cfg;
  configure_actor_system(cfg, networked());
  caf::actor_system sys{cfg};
  WireClientOptions o;
  o.port = ps.port;
  o.secret = kSecret;
  caf::actor shard = connect_to_service(sys, o);
  PsClient client(sys, std::chrono::seconds(60));
  PsBulkClientOptions options;
  options.host = "127.0.0.1";
  options.port = ps.bulk_port;
  options.secret = kSecret;
  options.label = "ps shard 'ps:0'";
  options.timeout = std::chrono::milliseconds(1500);
  client.use_bulk(shard, std::make_shared<PsBulkClient>(options));
  client.create(shard, ps_create_msg{{"w", "", {}, {}}, pattern(4, 0)});
  const int64_t big = int64_t(8) << 20;  // 32 MiB: more than the sockets' buffers take
  client.create(shard, ps_create_msg{{"big", "", {}, {}}, pattern(big, 1)});
  // Two bulk connections open and idle in the pool: one for the pull below, one for the push.
  client.read_all({{shard, ps_read_msg{"w"}}, {shard, ps_read_msg{"w"}}});
  ps.child.signal(SIGSTOP);
  ASSERT_TRUE(all_threads_stopped(ps.child.pid()));
  try {
    client.read(shard, "w");
    FAIL() << "a pull from a stopped ps process succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::deadline_exceeded) << e.what();
    EXPECT_EQ(std::string(e.what()),
              "ps shard 'ps:0' serving variable 'w' did not answer within 1500 ms (bulk pull)");
  }
  // A push that stops moving midway is named the same way, not as a ps task that went away
  // (which would fail its shard over to a backup while it is still alive).
  try {
    client.write(shard,
                 ps_write_msg{"big", uint8_t(ShardWrite::assign), 0, Tensor(), pattern(big, 2)});
    FAIL() << "a push to a stopped ps process succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::deadline_exceeded) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("ps shard 'ps:0' serving variable 'big' did not answer "
                                          "within 1500 ms (bulk push): no progress within the "
                                          "timeout mid-chunk after ",
                                          0),
              0u)
        << e.what();
  }
  // No idle connection is left: a new one is taken by the kernel, but no challenge comes.
  try {
    client.read(shard, "w");
    FAIL() << "a pull from a stopped ps process succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::deadline_exceeded) << e.what();
    EXPECT_EQ(std::string(e.what()),
              "ps shard 'ps:0': ps bulk port 127.0.0.1:" + std::to_string(ps.bulk_port) +
                  " sent no challenge within the timeout");
  }
  ps.child.signal(SIGKILL);
}

TEST(PsBulkProcess, APsProcessKilledBeforeItAnswersABulkPullIsNamedAtTheClient) {
  PsProcess ps;
  ASSERT_NE(ps.bulk_port, 0) << ps.child.err();
  Client c(ps);
  c.client->create(c.shard(), ps_create_msg{{"big", "", {}, {}}, pattern(int64_t(1) << 20, 7)});
  c.client->read(c.shard(), "big");  // a bulk connection is open and idle in the pool
  ps.child.signal(SIGSTOP);
  ASSERT_TRUE(all_threads_stopped(ps.child.pid()));
  std::string failure;
  std::thread puller([&] {
    try {
      c.client->read(c.shard(), "big");
      failure = "the pull succeeded";
    } catch (const Error& e) {
      failure = e.what();
    }
  });
  // Whether the request is still being written or already waits for the reply, the kill
  // closes the connection under it.
  ps.child.signal(SIGKILL);
  puller.join();
  EXPECT_NE(failure.find("ps shard 'ps:0' (/job:ps/task:0 at 127.0.0.1:"), std::string::npos)
      << failure;
  EXPECT_NE(failure.find("serving variable 'big' went away"), std::string::npos) << failure;
}
