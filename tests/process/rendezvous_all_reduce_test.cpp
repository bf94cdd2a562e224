// Large all-reduces through the shared-memory rendezvous (rendezvous_all_reduce_sum of
// coordinator/cluster/small_collective_rendezvous.hpp): values many slots long travel in pieces
// over the two alternating slots, between forked processes. Sizes that end mid-piece and
// mid-cache-line, the bits against a plain rank-order sum, a peer that dies mid-transfer (named
// through the group's failure, or at the deadline when nobody knows), and a segment that is not
// a rendezvous.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <vector>

#include "coordinator/cluster/small_collective_rendezvous.hpp"
#include "core/status.hpp"
#include "net/shm_ring.hpp"

namespace troupe {
namespace {

using std::chrono::milliseconds;

// Rank r's input: fractions whose float sums round (so the order of the sum shows in the bits).
Tensor input_of(int rank, int64_t count, DType dtype) {
  Tensor t(dtype, Shape{count});
  dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    for (int64_t i = 0; i < count; ++i)
      t.data<T>()[i] = T(double((i * 7919 + rank * 104729) % 100003) / 977.0 - 51.3 * rank);
  });
  return t;
}

// The rank-order sum ((x0 + x1) + x2) ..., element by element, in the dtype.
Tensor expected_sum(int ranks, int64_t count, DType dtype) {
  Tensor sum = input_of(0, count, dtype);
  for (int r = 1; r < ranks; ++r) {
    Tensor x = input_of(r, count, dtype);
    dispatch_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      for (int64_t i = 0; i < count; ++i) sum.data<T>()[i] = T(sum.data<T>()[i] + x.data<T>()[i]);
    });
  }
  return sum;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.byte_size() == b.byte_size() &&
         (a.byte_size() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0);
}

// Runs `ranks` ranks (rank 0 here, the others forked) summing `count` elements through `depth`
// slots of `slot_bytes` per rank, `calls` times; every rank checks its result's bits. Returns
// rank 0's mismatches plus the children's failures.
int run_forked(int ranks, size_t slot_bytes, int64_t count, DType dtype, int calls, int depth = 2) {
  auto creator = ShmRendezvous::create(ranks, slot_bytes, depth);
  const Tensor expect = expected_sum(ranks, count, dtype);
  std::vector<pid_t> children;
  for (int r = 1; r < ranks; ++r) {
    const pid_t child = ::fork();
    if (child == 0) {
      int code = 1;
      try {
        auto mine = ShmRendezvous::open(creator->name(), ranks);
        mine->attach(r);
        code = 0;
        const Tensor x = input_of(r, count, dtype);
        for (int k = 0; k < calls; ++k)
          if (!same_bytes(rendezvous_all_reduce_sum(*mine, r, x, milliseconds(30000), nullptr),
                          expect))
            code = 2;
      } catch (...) {
        code = 3;
      }
      ::_exit(code);
    }
    children.push_back(child);
  }
  creator->attach(0);
  int bad = 0;
  const Tensor x = input_of(0, count, dtype);
  for (int k = 0; k < calls; ++k)
    if (!same_bytes(rendezvous_all_reduce_sum(*creator, 0, x, milliseconds(30000), nullptr),
                    expect))
      ++bad;
  for (pid_t child : children) {
    int status = 0;
    if (::waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      ++bad;
  }
  return bad;
}

TEST(RendezvousAllReduce, TwoProcessesSumManyPiecesEndingMidPieceToTheRankOrderBits) {
  // 100003 float32 in slots of 4 KiB: 98 pieces, the last one 2'700 bytes.
  EXPECT_EQ(run_forked(2, 4096, 100003, DType::float32, 5), 0);
}

TEST(RendezvousAllReduce, PiecesPostedAheadThroughDeeperSlotsGiveTheSameBits) {
  // kLargeAllReduceDepth slots: three pieces in flight ahead of the one being summed.
  EXPECT_EQ(run_forked(2, 4096, 100003, DType::float32, 5, kLargeAllReduceDepth), 0);
  EXPECT_EQ(run_forked(3, 192, 1001, DType::float64, 3, ShmRendezvous::kMaxDepth), 0);
  // Fewer pieces than slots, and a single one.
  EXPECT_EQ(run_forked(2, 4096, 2000, DType::float32, 7, kLargeAllReduceDepth), 0);
  EXPECT_EQ(run_forked(2, 4096, 3, DType::int64, 7, kLargeAllReduceDepth), 0);
}

TEST(RendezvousAllReduce, ThreeProcessesSumInRankOrderWithPiecesOfWholeElements) {
  // Slots of 192 bytes hold 24 float64; 1001 of them end mid-piece and mid-cache-line.
  EXPECT_EQ(run_forked(3, 192, 1001, DType::float64, 3), 0);
  EXPECT_EQ(run_forked(3, 4096, 7, DType::int32, 3), 0);
}

TEST(RendezvousAllReduce, AnEmptyValueStillMeetsEveryRank) {
  EXPECT_EQ(run_forked(2, 64, 0, DType::float32, 3), 0);
}

// Rank 1 (a forked process) takes part in the first pieces of a large all-reduce and then is
// killed; rank 0 waits in the rendezvous for the next piece.
struct KilledPeer {
  std::unique_ptr<ShmRendezvous> rendezvous = ShmRendezvous::create(2, 4096, kLargeAllReduceDepth);
  pid_t child = -1;
  int pieces_before_death = 3;

  void start() {
    child = ::fork();
    if (child == 0) {
      auto mine = ShmRendezvous::open(rendezvous->name(), 2);
      std::vector<char> piece(4096);
      for (int k = 0; k < pieces_before_death; ++k)
        mine->exchange(1, piece.data(), piece.size(), milliseconds(30000), {});
      ::kill(::getpid(), SIGKILL);
    }
  }
};

TEST(RendezvousAllReduce, APeerKilledMidTransferIsNamedThroughTheGroupsFailure) {
  KilledPeer peer;
  peer.start();
  // What the collective peer actor does when a rank's process goes: record why.
  GroupFailure failure;
  std::thread watcher([&] {
    int status = 0;
    ::waitpid(peer.child, &status, 0);
    failure.set("rank 1 is down: the connection to its process was lost (killed by signal " +
                std::to_string(WTERMSIG(status)) + ")");
  });
  const Tensor x = input_of(0, 1024 * 10, DType::float32);  // 10 pieces; rank 1 does 3
  try {
    rendezvous_all_reduce_sum(*peer.rendezvous, 0, x, milliseconds(600000), &failure);
    ADD_FAILURE() << "the all-reduce finished without rank 1";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::unavailable);
    EXPECT_EQ(std::string(e.what()),
              "rank 1 is down: the connection to its process was lost (killed by signal 9)");
  }
  watcher.join();
}

TEST(RendezvousAllReduce, APeerKilledMidTransferWithoutAFailureIsNamedAtTheDeadline) {
  KilledPeer peer;
  peer.start();
  const Tensor x = input_of(0, 1024 * 10, DType::float32);
  try {
    rendezvous_all_reduce_sum(*peer.rendezvous, 0, x, milliseconds(300), nullptr);
    ADD_FAILURE() << "the all-reduce finished without rank 1";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::deadline_exceeded);
    // Rank 0 waits either for rank 1's next piece or for the slot rank 1 never released.
    const std::string what = e.what();
    EXPECT_NE(what.find(": rank(s) 1 did not "), std::string::npos) << what;
    EXPECT_NE(what.find(" within 300 ms"), std::string::npos) << what;
  }
  int status = 0;
  EXPECT_EQ(::waitpid(peer.child, &status, 0), peer.child);
}

TEST(RendezvousAllReduce, RanksWhoseValuesDifferInSizeAreNamed) {
  auto creator = ShmRendezvous::create(2, 256);
  auto other = ShmRendezvous::open(creator->name(), 2);
  std::string seen;
  // 100 and 90 float32: the first piece (64 elements) matches, the second does not.
  std::thread one([&] {
    try {
      rendezvous_all_reduce_sum(*other, 1, input_of(1, 90, DType::float32), milliseconds(30000),
                                nullptr);
    } catch (const Error&) {
    }
  });
  try {
    rendezvous_all_reduce_sum(*creator, 0, input_of(0, 100, DType::float32), milliseconds(30000),
                              nullptr);
  } catch (const Error& e) {
    seen = e.what();
  }
  one.join();
  EXPECT_NE(seen.find("call 2: rank 1 contributed 104 bytes, rank 0 144"), std::string::npos)
      << seen;
}

TEST(RendezvousAllReduce, AForeignSegmentIsNotTakenForARendezvous) {
  // A live segment of another kind (a data-plane ring) under a name a rank was handed.
  ShmRing ring = ShmRing::create(size_t(1) << 16);
  try {
    ShmRendezvous::open(ring.name(), 2);
    FAIL() << "a ring was opened as a rendezvous";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::unavailable);
    EXPECT_NE(std::string(e.what()).find("shared-memory rendezvous " + ring.name() +
                                         " is not one for 2 ranks"),
              std::string::npos)
        << e.what();
  }
  // A rendezvous made for another group size is as foreign.
  auto three = ShmRendezvous::create(3, 1 << 20);
  EXPECT_THROW(ShmRendezvous::open(three->name(), 2), Error);
}

}  // namespace
}  // namespace troupe
