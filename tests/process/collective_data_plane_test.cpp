// The collective data plane between real processes: `troupe collective-peer` ranks move their
// chunks over direct authenticated TCP connections (CAF carries only the control). Results must
// equal the same collective computed in one process bit for bit, the connection must refuse a
// stranger's secret and say so on both sides, and a rank killed mid-transfer must be named fast.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include "cli/collective_peer_input.hpp"
#include "cli/command_line.hpp"
#include "core/collective/algorithm_choice.hpp"
#include "core/collective/local_driver.hpp"
#include "kernels/host_accumulate.hpp"
#include "net/collective_data_plane.hpp"
#include "net/shm_ring.hpp"
#include "net/socket_io.hpp"
#include "tests/process/child_process.hpp"

using namespace troupe;
using namespace troupe::testing;
using ::testing::HasSubstr;

namespace {

constexpr auto kTimeout = std::chrono::seconds(60);
constexpr int64_t kChunkBytes = 64 << 10;

struct Group {
  std::vector<std::unique_ptr<TroupeProcess>> ranks;
  std::vector<std::string> results;  // RESULT lines
};

/// Starts `n` ranks with `extra` options, wires them and (unless `read_results` is false) reads
/// every rank's RESULT line. The ranks stay alive until finish().
Group start_group(int n, std::vector<std::string> extra, bool read_results = true) {
  Group g;
  std::string peers = "PEERS";
  for (int r = 0; r < n; ++r) {
    std::vector<std::string> args{
        "collective-peer", "--rank",        std::to_string(r),          "--size",
        std::to_string(n), "--chunk-bytes", std::to_string(kChunkBytes)};
    args.insert(args.end(), extra.begin(), extra.end());
    g.ranks.push_back(std::make_unique<TroupeProcess>(
        args, std::vector<std::string>{"TROUPE_SECRET=data-plane-test"}));
    auto port = g.ranks.back()->read_line(kTimeout);
    EXPECT_TRUE(port && port->rfind("PORT ", 0) == 0)
        << "rank " << r << ": " << g.ranks.back()->err();
    peers += " " + (port ? port->substr(5) : std::string("0"));
  }
  for (auto& rank : g.ranks) rank->write_line(peers);
  if (read_results)
    for (auto& rank : g.ranks)
      g.results.push_back(rank->read_line(kTimeout).value_or("<no line> stderr: " + rank->err()));
  return g;
}

void finish(Group& g) {
  for (auto& rank : g.ranks) {
    rank->write_line("EXIT");
    rank->close_stdin();
    EXPECT_TRUE(rank->wait(kTimeout).has_value()) << "a rank did not exit";
  }
}

/// The digest field of "RESULT ok <seconds> <checksum> <digest>".
std::string digest_of(const std::string& line) {
  std::istringstream in(line);
  std::string tag, status, seconds, checksum, digest;
  in >> tag >> status >> seconds >> checksum >> digest;
  return digest;
}

/// The same collective in one process (core's local driver): rank 0's result digest.
std::string reference_digest(int n, const std::string& algo, int64_t count, DType dtype,
                             uint64_t seed) {
  std::vector<std::unique_ptr<CollectiveAlgorithm>> peers;
  std::vector<Tensor> inputs;
  for (int r = 0; r < n; ++r) {
    CollectiveSpec spec;
    spec.rank = r;
    spec.group_size = n;
    spec.dtype = dtype;
    spec.count = count;
    spec.chunk_bytes = kChunkBytes;
    spec.instance = 1;
    spec.reduce = host_accumulate;
    spec.reduce_into = host_add_into;
    peers.push_back(make_collective(parse_host_algo_option("--algo", algo), spec));
    inputs.push_back(collective_peer_input(r, count, dtype, seed));
  }
  auto results = run_locally(peers, inputs);
  for (int r = 1; r < n; ++r)
    EXPECT_EQ(result_digest(results[size_t(r)]), result_digest(results[0])) << "rank " << r;
  return result_digest(results[0]);
}

/// Payload bytes rank's stderr says its data plane received.
uint64_t received_bytes(const std::string& err) {
  std::smatch m;
  static const std::regex line("data plane carried [0-9]+ payload bytes out, ([0-9]+) in");
  return std::regex_search(err, m, line) ? std::stoull(m[1]) : 0;
}

void expect_reference(int n, const std::string& algo, int64_t count, const std::string& dtype,
                      uint64_t seed, const std::string& transport = "direct") {
  SCOPED_TRACE(algo + " over " + std::to_string(n) + " processes, " + std::to_string(count) + " " +
               dtype + ", transport " + transport);
  auto g = start_group(n, {"--algo", algo, "--count", std::to_string(count), "--dtype", dtype,
                           "--seed", std::to_string(seed), "--repeat", "2", "--timeout-ms", "20000",
                           "--transport", transport});
  const std::string expected = reference_digest(n, algo, count, parse_dtype(dtype), seed);
  finish(g);
  for (int r = 0; r < n; ++r) {
    const auto& line = g.results[size_t(r)];
    ASSERT_EQ(line.rfind("RESULT ok", 0), 0u) << "rank " << r << ": " << line;
    EXPECT_EQ(digest_of(line), expected) << "rank " << r << ": " << line;
    // The chunks really took the data plane: every rank received payload bytes over it.
    EXPECT_GT(received_bytes(g.ranks[size_t(r)]->err()), 0u) << g.ranks[size_t(r)]->err();
    // On one host `direct` means the shared-memory rings; nothing fell back to TCP.
    EXPECT_FALSE(contains(g.ranks[size_t(r)]->err(), "TCP instead")) << g.ranks[size_t(r)]->err();
  }
}

}  // namespace

TEST(CollectiveDataPlane, RingResultsEqualTheInProcessReferenceBitForBit) {
  // Sizes below, at and above one 64 KiB chunk, and ones that are no multiple of it.
  for (int64_t count : {int64_t(1), int64_t(16384), int64_t(16384 * 3 + 7), int64_t(1000003)})
    expect_reference(2, "ring", count, "float32", 11);
  expect_reference(3, "ring", 100003, "float32", 12);
  expect_reference(3, "ring", 2, "float64", 13);
  expect_reference(3, "ring", 65537, "int64", 14);
}

TEST(CollectiveDataPlane, RingOverTcpDataConnectionsEqualsTheReference) {
  // --transport tcp: the same data plane without shared memory (the path between hosts).
  expect_reference(2, "ring", 16384 * 3 + 7, "float32", 31, "tcp");
  expect_reference(3, "ring", 1000003, "float32", 32, "tcp");
}

TEST(CollectiveDataPlane, ConcurrentCollectivesNeverMixTheirBytes) {
  // Four all-reduces with different instance ids and inputs started together, three rounds:
  // their chunks interleave on the same connections and each must still equal its reference.
  for (std::string transport : {"direct", "tcp"}) {
    SCOPED_TRACE(transport);
    const int n = 3;
    const int64_t count = 100003;
    auto g = start_group(n, {"--count", std::to_string(count), "--seed", "40", "--concurrent", "4",
                             "--repeat", "3", "--transport", transport});
    finish(g);
    std::string expected;
    for (int j = 0; j < 4; ++j)
      expected += (j ? "," : "") + reference_digest(n, "ring", count, DType::float32, 40 + j);
    for (int r = 0; r < n; ++r) {
      ASSERT_EQ(g.results[size_t(r)].rfind("RESULT ok", 0), 0u) << g.results[size_t(r)];
      EXPECT_EQ(digest_of(g.results[size_t(r)]), expected) << "rank " << r;
    }
  }
}

TEST(CollectiveDataPlane, HierarchicalAndReduceToOneEqualTheReference) {
  expect_reference(3, "hierarchical", 40009, "float32", 21);
  expect_reference(3, "one_device", 40009, "float64", 22);
}

TEST(CollectiveDataPlane, SmallCollectivesStayInlineBelowTheThreshold) {
  // 1000 float32 = 4000 bytes < --inline-below 8KiB: no byte goes over the data plane, yet the
  // result is the reference's.
  auto g = start_group(2, {"--count", "1000", "--seed", "5", "--inline-below", "8KiB"});
  finish(g);
  const std::string expected = reference_digest(2, "ring", 1000, DType::float32, 5);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(digest_of(g.results[size_t(r)]), expected) << g.results[size_t(r)];
    EXPECT_THAT(g.ranks[size_t(r)]->err(),
                HasSubstr("data plane carried 0 payload bytes out, 0 in"));
  }
}

TEST(CollectiveDataPlane, WrongSecretOnTheDataConnectionIsRefusedAndNamed) {
  auto g = start_group(2, {"--count", "100000"});
  ASSERT_EQ(g.results[0].rfind("RESULT ok", 0), 0u) << g.results[0];
  std::smatch m;
  const std::string err = g.ranks[0]->err();
  ASSERT_TRUE(
      std::regex_search(err, m, std::regex("rank 0 data plane on 127\\.0\\.0\\.1:([0-9]+)")))
      << err;
  const uint16_t port = uint16_t(std::stoi(m[1]));
  try {
    ::close(dial_collective_data("127.0.0.1", port, 1, "not-the-cluster-secret", 5000));
    ADD_FAILURE() << "a wrong secret was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::failed_precondition);
    EXPECT_EQ(std::string(e.what()),
              "authentication failed at collective data listener 127.0.0.1:" +
                  std::to_string(port) + ": it refused rank 1's proof (wrong shared secret?)");
  }
  finish(g);
  // The listener logged the refusal, naming the claimed rank.
  EXPECT_THAT(g.ranks[0]->err(), HasSubstr("refused a collective data connection from 127.0.0.1:"));
  EXPECT_THAT(g.ranks[0]->err(), HasSubstr("claiming rank 1: wrong shared secret"));
}

void expect_killed_rank_named_fast(const std::string& transport) {
  SCOPED_TRACE("transport " + transport);
  // 64 MiB all-reduces back to back over the data plane; rank 1 dies while chunks are in flight.
  const int n = 3;
  auto g = start_group(
      n,
      {"--count", "16M", "--repeat", "1000000", "--timeout-ms", "60000", "--transport", transport},
      /*read_results=*/false);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  g.ranks[1]->signal(SIGKILL);
  const auto killed_at = std::chrono::steady_clock::now();
  for (int r : {0, 2}) {
    auto line = g.ranks[size_t(r)]->read_line(kTimeout);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
    ASSERT_TRUE(line) << "rank " << r << " printed nothing: " << g.ranks[size_t(r)]->err();
    EXPECT_EQ(line->rfind("RESULT error", 0), 0u) << *line;
    EXPECT_THAT(*line, HasSubstr("rank 1 is down")) << *line;
    EXPECT_THAT(*line, HasSubstr("connection to its process was lost")) << *line;
    // Not the 60 s timeout. The figure is printed rather than asserted tightly (shared machine).
    EXPECT_LT(seconds, 10.0) << *line;
    std::printf("%s: rank %d named the dead rank after %.3f s: %s\n", transport.c_str(), r, seconds,
                line->c_str());
  }
  g.ranks[1]->wait(kTimeout);
  for (int r : {0, 2}) {
    g.ranks[size_t(r)]->write_line("EXIT");
    EXPECT_EQ(g.ranks[size_t(r)]->wait(kTimeout), 1) << "rank " << r;
  }
}

TEST(CollectiveDataPlane, RankKilledMidTransferIsNamedFast) {
  expect_killed_rank_named_fast("direct");
  expect_killed_rank_named_fast("tcp");
}

TEST(CollectiveDataPlane, TransportOptionsAreCheckedAndNamed) {
  using namespace std::chrono_literals;
  TroupeProcess peer({"collective-peer", "--rank", "0", "--size", "2", "--transport", "carrier"});
  EXPECT_EQ(peer.wait(60s), 2) << peer.err();
  EXPECT_THAT(peer.err(), HasSubstr("--transport must be direct, tcp or middleman, got 'carrier'"));
  TroupeProcess bench({"bench", "allreduce", "--processes", "2", "--transport", "actors"});
  EXPECT_EQ(bench.wait(60s), 2) << bench.err();
  EXPECT_THAT(bench.err(), HasSubstr("--transport with --processes must be direct, tcp or "
                                     "middleman, got 'actors'"));
  TroupeProcess inline_alone({"bench", "allreduce", "--inline-below", "8KiB"});
  EXPECT_EQ(inline_alone.wait(60s), 2) << inline_alone.err();
  EXPECT_THAT(inline_alone.err(),
              HasSubstr("--inline-below applies only with --processes and the data plane"));
  TroupeProcess bad_size({"collective-peer", "--rank", "0", "--size", "2", "--inline-below", "x"});
  EXPECT_EQ(bad_size.wait(60s), 2) << bad_size.err();
  EXPECT_THAT(bad_size.err(), HasSubstr("--inline-below: 'x' is not a byte size"));
}

// The data plane's own failure paths, driven by a hand-made dialer that holds the right secret
// but misbehaves on the wire (what a hung or broken peer process looks like to the listener).
namespace {

struct Failures {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> seen;
  void add(const std::string& why) {
    std::lock_guard<std::mutex> lock(mutex);
    seen.push_back(why);
    changed.notify_all();
  }
  std::string first() {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait_for(lock, std::chrono::seconds(30), [&] { return !seen.empty(); });
    return seen.empty() ? "<no failure reported>" : seen.front();
  }
};

/// A listener of rank 0 whose failures land in `failures`; io timeout 300 ms.
std::unique_ptr<CollectiveDataPlane> listener_for(Failures& failures) {
  CollectiveDataPlaneOptions options;
  options.secret = "plane-secret";
  options.io_timeout_ms = 300;
  return std::make_unique<CollectiveDataPlane>(
      0, options, [](CollectiveMessage&&) {},
      [&failures](int, const std::string& why) { failures.add(why); });
}

/// Dials `plane` as rank 1 and chooses the TCP stream (mode 0).
int dial_tcp(const CollectiveDataPlane& plane) {
  int fd = dial_collective_data("127.0.0.1", plane.port(), 1, "plane-secret", 5000);
  uint8_t mode = 0;
  EXPECT_EQ(::write(fd, &mode, 1), 1);
  return fd;
}

}  // namespace

TEST(CollectiveDataPlaneConnection, PartialFrameThenSilenceIsAStallNamingTheRank) {
  Failures failures;
  auto plane = listener_for(failures);
  int fd = dial_tcp(*plane);
  const char half_header[20] = {};
  ASSERT_EQ(::write(fd, half_header, sizeof half_header), 20);
  const std::string why = failures.first();
  EXPECT_THAT(why, HasSubstr("rank 1 stalled: its data connection from 127.0.0.1:"));
  EXPECT_THAT(why, HasSubstr("sent part of a frame header and then nothing for 300 ms"));
  ::close(fd);
}

TEST(CollectiveDataPlaneConnection, StalledSharedMemoryRingIsNamedToo) {
  Failures failures;
  auto plane = listener_for(failures);
  int fd = dial_collective_data("127.0.0.1", plane->port(), 1, "plane-secret", 5000);
  ShmRing ring = ShmRing::create(1 << 16);
  uint8_t mode = 1, mapped = 0;
  uint16_t length = uint16_t(ring.name().size());
  ASSERT_EQ(::write(fd, &mode, 1), 1);
  ASSERT_EQ(::write(fd, &length, 2), 2);
  ASSERT_EQ(::write(fd, ring.name().data(), length), ssize_t(length));
  ASSERT_EQ(::read(fd, &mapped, 1), 1);
  ASSERT_EQ(mapped, 1) << "the listener did not map the ring";
  const char half_header[20] = {};
  ASSERT_EQ(ring.write(half_header, sizeof half_header, 1000, {}), RingIo::ok);
  const std::string why = failures.first();
  EXPECT_THAT(why, HasSubstr("rank 1 stalled: its shared-memory ring " + ring.name()));
  EXPECT_THAT(why, HasSubstr("sent part of a frame header and then nothing for 300 ms"));
  ::close(fd);
}

TEST(CollectiveDataPlaneConnection, FrameSpeakingForAnotherRankIsRefused) {
  Failures failures;
  auto plane = listener_for(failures);
  int fd = dial_tcp(*plane);
  // magic, phase 0, dtype float32, from 5 (not the authenticated rank 1), to 0, ...
  struct {
    uint32_t magic = 0x54524344;
    uint8_t phase = 0, dtype = uint8_t(DType::float32);
    uint16_t zero = 0;
    int32_t from = 5, to = 0, step = 0, chunk = 0;
    int64_t instance = 1, offset = 0, count = 1;
  } header;
  static_assert(sizeof header == 48, "the wire header");
  ASSERT_EQ(::write(fd, &header, sizeof header), 48);
  EXPECT_THAT(failures.first(), HasSubstr("rank 1 sent a malformed data frame on its data "
                                          "connection from 127.0.0.1:"));
  EXPECT_THAT(failures.first(), HasSubstr("frame claims to come from rank 5"));
  ::close(fd);
}

TEST(CollectiveDataPlaneConnection, PeerClosingMidChunkIsNamedAsDown) {
  Failures failures;
  auto plane = listener_for(failures);
  int fd = dial_tcp(*plane);
  struct {
    uint32_t magic = 0x54524344;
    uint8_t phase = 1, dtype = uint8_t(DType::float32);
    uint16_t zero = 0;
    int32_t from = 1, to = 0, step = 0, chunk = 3;
    int64_t instance = 9, offset = 12, count = 1000;
  } header;
  ASSERT_EQ(::write(fd, &header, sizeof header), 48);
  const char some[100] = {};
  ASSERT_EQ(::write(fd, some, sizeof some), 100);
  ::close(fd);
  EXPECT_THAT(failures.first(),
              HasSubstr("rank 1 is down: the connection to its process was lost (data connection "
                        "from 127.0.0.1:"));
  EXPECT_THAT(failures.first(),
              HasSubstr("closed mid-chunk: all_gather step 0 chunk 3 [offset 12, count 1000] from "
                        "rank 1 to rank 0)"));
}

TEST(CollectiveDataPlaneConnection, StrangersCannotHoldMoreThanSixteenHandshakes) {
  Failures failures;
  auto plane = listener_for(failures);
  std::vector<int> strangers;
  for (int i = 0; i < 16; ++i) {
    strangers.push_back(net::connect_to("127.0.0.1", plane->port()));
    char nonce[32];
    ASSERT_EQ(::recv(strangers.back(), nonce, sizeof nonce, MSG_WAITALL), 32) << "stranger " << i;
  }
  // The seventeenth is closed at once, before a nonce: no thread was started for it.
  int extra = net::connect_to("127.0.0.1", plane->port());
  char byte = 0;
  EXPECT_EQ(::recv(extra, &byte, 1, 0), 0);
  ::close(extra);
  for (int fd : strangers) ::close(fd);
  // Their slots come back as their handshakes end; then a member is served again.
  int member = -1;
  for (int attempt = 0; attempt < 100 && member < 0; ++attempt) {
    try {
      member = dial_collective_data("127.0.0.1", plane->port(), 1, "plane-secret", 5000);
    } catch (const Error&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  EXPECT_GE(member, 0) << "the listener did not serve a member after the strangers left";
  if (member >= 0) ::close(member);
}
