// The cross-memory all-reduce (coordinator/cluster/cross_memory_all_reduce.hpp) between forked
// processes: every rank reads the others' memory and gets the rank-order bits; one rank that does
// not allow it sends every rank back (nullopt on all), and a group remembers that; sizes that
// differ are named; a rank that dies after handing out its addresses is named, never waited for
// past the deadline.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>
#include <thread>

#include "coordinator/cluster/cross_memory_all_reduce.hpp"
#include "core/status.hpp"
#include "tests/process/rank_order_sum.hpp"

namespace troupe {
namespace {

using std::chrono::milliseconds;
using testing::expected_sum;
using testing::input_of;
using testing::same_bytes;

// What a rank's call gave: 0 the rank-order bits, 1 nullopt, 2 other bits, 3 an error.
int outcome(ShmRendezvous& rendezvous, int rank, int64_t count, DType dtype, bool allowed) {
  try {
    auto sum = cross_memory_all_reduce_sum(rendezvous, rank, input_of(rank, count, dtype), allowed,
                                           milliseconds(30000), {});
    if (!sum) return 1;
    return same_bytes(*sum, expected_sum(rendezvous.ranks(), count, dtype)) ? 0 : 2;
  } catch (const std::exception&) {
    return 3;
  }
}

// Rank 0 here, the others forked; returns every rank's outcome, rank order.
std::vector<int> run_forked(int ranks, int64_t count, DType dtype, int refusing = -1) {
  auto creator = ShmRendezvous::create(ranks, 4096, 2);
  std::vector<pid_t> children;
  for (int r = 1; r < ranks; ++r) {
    const pid_t child = ::fork();
    if (child == 0) {
      auto mine = ShmRendezvous::open(creator->name(), ranks);
      mine->attach(r);
      ::_exit(outcome(*mine, r, count, dtype, r != refusing));
    }
    children.push_back(child);
  }
  creator->attach(0);
  std::vector<int> outcomes{outcome(*creator, 0, count, dtype, refusing != 0)};
  for (pid_t child : children) {
    int status = 0;
    ::waitpid(child, &status, 0);
    outcomes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status));
  }
  return outcomes;
}

TEST(CrossMemoryAllReduce, EveryRankReadsTheOthersAndGetsTheRankOrderBits) {
  // Shares that end mid-cache-line, more than one 128 KiB chunk each, 2 and 3 processes.
  EXPECT_EQ(run_forked(2, (1 << 18) + 3, DType::float32), (std::vector<int>{0, 0}));
  EXPECT_EQ(run_forked(3, (1 << 17) + 5, DType::float64), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(run_forked(2, 1 << 18, DType::int32), (std::vector<int>{0, 0}));
}

TEST(CrossMemoryAllReduce, OneRankThatDoesNotAllowItSendsEveryRankToThePieces) {
  EXPECT_EQ(run_forked(2, 1 << 18, DType::float32, 1), (std::vector<int>{1, 1}));
  EXPECT_EQ(run_forked(3, 1 << 16, DType::float32, 0), (std::vector<int>{1, 1, 1}));
}

// The refusal is remembered: after a vote that one rank refused, the next call returns nullopt
// without meeting anyone (rank 1 makes no second call here; were it awaited, the call would end
// deadline_exceeded after 200 ms).
TEST(CrossMemoryAllReduce, AGroupThatRefusedOnceTakesThePiecesWithoutVotingAgain) {
  auto creator = ShmRendezvous::create(2, 4096, 2);
  auto other = ShmRendezvous::open(creator->name(), 2);
  const int64_t count = 1 << 18;
  CrossMemoryVotes mine, theirs;
  std::optional<Tensor> refused_there = Tensor();
  std::thread one([&] {
    refused_there = cross_memory_all_reduce_sum(*other, 1, input_of(1, count, DType::float32),
                                                false, milliseconds(30000), {}, &theirs);
  });
  EXPECT_FALSE(cross_memory_all_reduce_sum(*creator, 0, input_of(0, count, DType::float32), true,
                                           milliseconds(30000), {}, &mine));
  one.join();
  EXPECT_FALSE(refused_there);
  EXPECT_TRUE(mine.refused);
  EXPECT_TRUE(theirs.refused);
  EXPECT_FALSE(cross_memory_all_reduce_sum(*creator, 0, input_of(0, count, DType::float32), true,
                                           milliseconds(200), {}, &mine));
}

TEST(CrossMemoryAllReduce, RanksWhoseValuesDifferInSizeAreNamed) {
  auto creator = ShmRendezvous::create(2, 4096, 2);
  auto other = ShmRendezvous::open(creator->name(), 2);
  std::thread one([&] {
    try {
      cross_memory_all_reduce_sum(*other, 1, input_of(1, 1000, DType::float32), true,
                                  milliseconds(30000), {});
    } catch (const Error&) {
    }
  });
  try {
    cross_memory_all_reduce_sum(*creator, 0, input_of(0, 1024, DType::float32), true,
                                milliseconds(30000), {});
    ADD_FAILURE() << "sizes 4096 and 4000 were summed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_EQ(std::string(e.what()), "all-reduce: rank 1 contributed 4000 bytes, rank 0 4096");
  }
  one.join();
}

TEST(CrossMemoryAllReduce, ARankThatDiesAfterHandingOutItsAddressesIsNamed) {
  auto creator = ShmRendezvous::create(2, 4096, 2);
  const int64_t count = 1 << 18;
  const pid_t child = ::fork();
  if (child == 0) {
    // Rank 1 says where its value is and that it can read, then dies before the sum.
    auto mine = ShmRendezvous::open(creator->name(), 2);
    const Tensor x = input_of(1, count, DType::float32);
    const int64_t addresses[4] = {int64_t(::getpid()), int64_t(x.raw_data()), int64_t(x.raw_data()),
                                  int64_t(x.byte_size())};
    mine->exchange(1, addresses, sizeof addresses, milliseconds(30000), {});
    const uint8_t yes = 1;
    mine->exchange(1, &yes, 1, milliseconds(30000), {});
    ::kill(::getpid(), SIGKILL);
  }
  try {
    cross_memory_all_reduce_sum(*creator, 0, input_of(0, count, DType::float32), true,
                                milliseconds(2000), {});
    ADD_FAILURE() << "the all-reduce finished without rank 1";
  } catch (const Error& e) {
    // Either its memory could not be read (it is gone), or it never arrived at the next meeting.
    const std::string what = e.what();
    EXPECT_TRUE(e.code() == Code::unavailable || e.code() == Code::deadline_exceeded) << what;
    EXPECT_NE(what.find("rank"), std::string::npos) << what;
    EXPECT_TRUE(what.find("rank 1 is down: reading its input (process ") != std::string::npos ||
                what.find("rank(s) 1 did not") != std::string::npos)
        << what;
  }
  int status = 0;
  EXPECT_EQ(::waitpid(child, &status, 0), child);
}

}  // namespace
}  // namespace troupe
