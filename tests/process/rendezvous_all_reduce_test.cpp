// Large all-reduces through the shared-memory rendezvous (rendezvous_all_reduce_sum of
// coordinator/cluster/small_collective_rendezvous.hpp): values many slots long travel in pieces
// over the two alternating slots, between forked processes. Sizes that end mid-piece and
// mid-cache-line, the bits against a plain rank-order sum (also for values large enough to be
// read from the other processes' memory), a peer that dies mid-transfer (named through the
// group's failure, or at the deadline when nobody knows), and a segment that is not a
// rendezvous. tests/process/cross_memory_all_reduce_test.cpp has the cross-memory path's own.
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
#include "tests/process/rank_order_sum.hpp"

namespace troupe {
namespace {

using std::chrono::milliseconds;
using testing::expected_sum;
using testing::input_of;
using testing::same_bytes;

// Runs `ranks` ranks (rank 0 here, the others forked) summing `count` elements through `depth`
// slots of `slot_bytes` per rank, `calls` times; every rank checks its result's bits. Returns
// rank 0's mismatches plus the children's failures.
// `refusing` (if any) does not allow reading its memory, so every rank takes the pieces.
int run_forked(int ranks, size_t slot_bytes, int64_t count, DType dtype, int calls, int depth = 2,
               int refusing = -1) {
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
          if (!same_bytes(rendezvous_all_reduce_sum(*mine, r, x, milliseconds(30000), nullptr,
                                                    r != refusing),
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
    if (!same_bytes(
            rendezvous_all_reduce_sum(*creator, 0, x, milliseconds(30000), nullptr, refusing != 0),
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

TEST(RendezvousAllReduce, LargeValuesGiveTheRankOrderBitsWhetherReadAcrossProcessesOrInPieces) {
  // From kCrossMemoryMinBytes the ranks read each other's memory; the bits stay the rank order's.
  // 2^18 + 3 float32 (shares end mid-cache-line) and 3 ranks of float64.
  EXPECT_EQ(run_forked(2, 4096, (1 << 18) + 3, DType::float32, 3, kLargeAllReduceDepth), 0);
  EXPECT_EQ(run_forked(3, 4096, (1 << 17) + 5, DType::float64, 2, kLargeAllReduceDepth), 0);
  // A rank that does not allow it sends every rank to the pieces: the same bits.
  EXPECT_EQ(run_forked(2, 4096, (1 << 18) + 3, DType::float32, 2, kLargeAllReduceDepth, 1), 0);
  EXPECT_EQ(run_forked(3, 4096, (1 << 17) + 5, DType::float64, 2, kLargeAllReduceDepth, 0), 0);
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
