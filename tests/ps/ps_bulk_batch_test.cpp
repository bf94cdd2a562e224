// One PsClient batch across two ps processes (coordinator/ps/ps_client.cpp, ask_routed): the
// requests that stay on CAF, the bulk ones sent one after another and read in turn, and those
// large enough for a thread of their own, all in the same call, with exact results and the bytes
// on the right connections; more requests of one ps task than it serves connections, in waves; a
// shard error in a batch keeps every connection in step; a ps process killed while its reply is
// read in turn is named at the client.
#include <gtest/gtest.h>

#include <csignal>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/ps/shard_write.hpp"
#include "messages/ps_messages.hpp"
#include "ps_bulk_test_support.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

constexpr int64_t kRowFloats = 64;
constexpr uint64_t kRowBytes = kRowFloats * sizeof(float);

// A rows x 64 table whose element (r, c) is r * 64 + c + seed, all exactly representable.
Tensor table(int64_t rows, int seed) {
  Tensor t(DType::float32, Shape{rows, kRowFloats});
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = float(i + seed);
  return t;
}

Tensor ids(int64_t n, int64_t rows, int64_t stride) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[size_t(k)] = (k * stride) % rows;
  return Tensor::from_vector<int64_t>(Shape{n}, v);
}

void expect_gathered(const Tensor& got, const Tensor& rows, int seed) {
  ASSERT_EQ(got.shape(), Shape({rows.num_elements(), kRowFloats}));
  for (int64_t k = 0; k < rows.num_elements(); ++k)
    for (int64_t c = 0; c < kRowFloats; c += 21)
      ASSERT_EQ(got.data<float>()[k * kRowFloats + c],
                float(rows.data<int64_t>()[k] * kRowFloats + c + seed))
          << "row " << k << " column " << c;
}

ps_write_msg assign(const std::string& name, const Tensor& value) {
  return ps_write_msg{name, uint8_t(ShardWrite::assign), 0, Tensor(), value};
}

// Two ps processes and a client of both, whose gathers, pushes and applies below 64 KiB stay CAF
// messages (none do by default), so that one batch can hold all three kinds of request.
class PsBulkBatch : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(ps0.bulk_port, 0) << ps0.child.err();
    ASSERT_NE(ps1.bulk_port, 0) << ps1.child.err();
    c = std::make_unique<Client>(std::vector<const PsProcess*>{&ps0, &ps1}, uint64_t(64) << 10);
  }
  // Tables "emb0" (seed 0) on ps:0 and "emb1" (seed `seed1`) on ps:1, `rows` rows each.
  void create_tables(int64_t rows, int seed1) {
    c->client->create(c->shard(0), ps_create_msg{{"emb0", "", {}, {}}, table(rows, 0)});
    c->client->create(c->shard(1), ps_create_msg{{"emb1", "", {}, {}}, table(rows, seed1)});
  }
  std::vector<Tensor> gather_both(const Tensor& rows0, const Tensor& rows1) {
    return c->client->gather_all(
        {{c->shard(0), ps_gather_msg{"emb0", rows0}}, {c->shard(1), ps_gather_msg{"emb1", rows1}}},
        kRowBytes);
  }
  PsProcess ps0, ps1;
  std::unique_ptr<Client> c;
};

}  // namespace

TEST_F(PsBulkBatch, CafInTurnAndOwnThreadRequestsOfOneBatchAcrossTwoPsProcessesAreExact) {
  const int64_t big = int64_t(kPsBulkOwnThreadBytes / sizeof(float)) * 2;  // 2 MiB: own thread
  const int64_t mid = 64 << 10;                                            // 256 KiB: in turn
  const int64_t tiny = 16;                                                 // 64 B: CAF
  c->client->create(c->shard(0), ps_create_msg{{"big", "", {}, {}}, pattern(big, 1)});
  c->client->create(c->shard(1), ps_create_msg{{"mid", "", {}, {}}, pattern(mid, 2)});
  c->client->create(c->shard(1), ps_create_msg{{"tiny", "", {}, {}}, pattern(tiny, 3)});
  const auto acks = c->client->write_all({{c->shard(0), assign("big", pattern(big, 4))},
                                          {c->shard(1), assign("mid", pattern(mid, 5))},
                                          {c->shard(1), assign("tiny", pattern(tiny, 6))}});
  ASSERT_EQ(acks.size(), 3u);
  for (auto& ack : acks) EXPECT_TRUE(ack.applied);
  EXPECT_EQ(c->bulks[0]->bytes_sent(), uint64_t(big) * sizeof(float));
  EXPECT_EQ(c->bulks[1]->bytes_sent(), uint64_t(mid) * sizeof(float));  // tiny went through CAF
  const auto values = c->client->read_all({{c->shard(1), ps_read_msg{"tiny"}},
                                           {c->shard(0), ps_read_msg{"big"}},
                                           {c->shard(1), ps_read_msg{"mid"}}});
  ASSERT_EQ(values.size(), 3u);
  EXPECT_TRUE(same_bytes(values[0], pattern(tiny, 6)));
  EXPECT_TRUE(same_bytes(values[1], pattern(big, 4)));
  EXPECT_TRUE(same_bytes(values[2], pattern(mid, 5)));
  // Pulls always take the bulk connection, the tiny one included.
  EXPECT_EQ(c->bulks[0]->bytes_received(), uint64_t(big) * sizeof(float));
  EXPECT_EQ(c->bulks[1]->bytes_received(), uint64_t(mid + tiny) * sizeof(float));

  // Gathers of 512 rows (128 KiB) from both, read in turn, with no CAF batch at all.
  create_tables(4096, 7);
  const Tensor rows0 = ids(512, 4096, 13), rows1 = ids(512, 4096, 29);
  for (int round = 0; round < 3; ++round) {
    const auto got = gather_both(rows0, rows1);
    ASSERT_EQ(got.size(), 2u);
    expect_gathered(got[0], rows0, 0);
    expect_gathered(got[1], rows1, 7);
  }
  ps0.stop();
  ps1.stop();
}

// ps:1 refuses its gather (a row past its table) while ps:0 answers: the batch throws ps:1's
// own error, and the next batch on the same pooled connections gets the right rows from both.
TEST_F(PsBulkBatch, AShardErrorInABatchThrowsItAndKeepsEveryConnectionInStep) {
  create_tables(1024, 5);
  const Tensor good = ids(512, 1024, 3);
  std::vector<int64_t> past(512, 1);
  past[100] = 1024;
  try {
    gather_both(good, Tensor::from_vector<int64_t>(Shape{512}, past));
    FAIL() << "a gather of a row past the table succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::out_of_range) << e.what();
    EXPECT_NE(std::string(e.what()).find("1024"), std::string::npos) << e.what();
  }
  const auto got = gather_both(good, good);
  expect_gathered(got[0], good, 0);
  expect_gathered(got[1], good, 5);
  ps0.stop();
  ps1.stop();
}

// ps:1 is stopped, so both gathers are sent and ps:0's reply is read while ps:1's never comes;
// the kill closes ps:1's connection under the read, and the error names ps:1, not ps:0.
TEST_F(PsBulkBatch, APsProcessKilledWhileItsReplyIsReadInTurnIsNamedAtTheClient) {
  create_tables(1024, 5);
  const Tensor rows = ids(512, 1024, 3);
  auto batch = [&] { return gather_both(rows, rows); };
  batch();  // both bulk connections open and idle in their pools
  ps1.child.signal(SIGSTOP);
  ASSERT_TRUE(all_threads_stopped(ps1.child.pid()));
  std::string failure;
  std::thread gatherer([&] {
    try {
      batch();
      failure = "the batch succeeded";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::unavailable) << e.what();
      failure = e.what();
    }
  });
  // ps:0's rows arrive whether or not the kill comes first; ps:1's never do.
  ps1.child.signal(SIGKILL);
  gatherer.join();
  EXPECT_NE(failure.find("ps shard 'ps:1' (/job:ps/task:1 at 127.0.0.1:"), std::string::npos)
      << failure;
  EXPECT_NE(failure.find("serving variable 'emb1' went away during a bulk gather"),
            std::string::npos)
      << failure;
  ps0.stop();
}

// A batch of more pulls of one ps task than it serves connections (64): they go in waves of at
// most kPsBulkConnectionsKept, so the ps task refuses no connection (until waves, every request
// took a connection at once, and the 65th found the ps task full: "sent no challenge").
TEST_F(PsBulkBatch, MorePullsOfOnePsTaskThanItServesConnectionsGoInWaves) {
  std::vector<std::pair<caf::actor, ps_read_msg>> reads;
  for (int k = 0; k < 70; ++k) {
    const std::string name = "v" + std::to_string(k);
    c->client->create(c->shard(0), ps_create_msg{{name, "", {}, {}}, pattern(4, k)});
    reads.push_back({c->shard(0), ps_read_msg{name}});
  }
  for (int round = 0; round < 2; ++round) {
    const auto values = c->client->read_all(reads);
    ASSERT_EQ(values.size(), 70u);
    for (int k = 0; k < 70; ++k) EXPECT_TRUE(same_bytes(values[size_t(k)], pattern(4, k))) << k;
  }
  EXPECT_EQ(c->bulks[0]->bytes_received(), 2 * 70 * 4 * sizeof(float));
  ps0.stop();
  ps1.stop();
  EXPECT_EQ(ps0.child.err().find("are open already"), std::string::npos) << ps0.child.err();
}
