// The shared-memory rendezvous of small all-reduces (net/shm_rendezvous.hpp): ranks as threads
// and as forked processes, the alternating slots under contributions of changing size, and
// every way a call ends early (a missing rank, a broken group, sizes that differ).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <vector>

#include "core/status.hpp"
#include "net/shm_rendezvous.hpp"

namespace troupe {
namespace {

using std::chrono::milliseconds;

// Rank r's contribution to call k: floats whose sum over ranks is known in closed form.
std::vector<float> contribution(int rank, int call, size_t count) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = float(rank * 1000 + call) + float(i) * 0.5f;
  return v;
}

// Runs `calls` exchanges of changing size as `rank`; returns the number of wrong sums.
int run_rank(ShmRendezvous& rv, int rank, int calls) {
  int wrong = 0;
  for (int k = 1; k <= calls; ++k) {
    const size_t count = size_t(16 * (1 + k % 5));
    auto mine = contribution(rank, k, count);
    auto slots = rv.exchange(rank, mine.data(), count * sizeof(float), milliseconds(10000), {});
    for (size_t i = 0; i < count; ++i) {
      float sum = 0;
      for (size_t r = 0; r < slots.size(); ++r) sum += reinterpret_cast<const float*>(slots[r])[i];
      float expect = 0;
      for (int r = 0; r < rv.ranks(); ++r) expect += contribution(r, k, count)[i];
      if (sum != expect) ++wrong;
    }
  }
  return wrong;
}

TEST(ShmRendezvous, ThreeRanksSeeEveryContributionOverManyCallsOfChangingSize) {
  auto creator = ShmRendezvous::create(3, 4096);
  std::vector<std::unique_ptr<ShmRendezvous>> others;
  others.push_back(ShmRendezvous::open(creator->name(), 3));
  others.push_back(ShmRendezvous::open(creator->name(), 3));
  creator->attach(0);
  others[0]->attach(1);
  others[1]->attach(2);
  EXPECT_EQ(creator->attached(), 3);
  int wrong[3] = {0, 0, 0};
  std::thread a([&] { wrong[1] = run_rank(*others[0], 1, 500); });
  std::thread b([&] { wrong[2] = run_rank(*others[1], 2, 500); });
  wrong[0] = run_rank(*creator, 0, 500);
  a.join();
  b.join();
  EXPECT_EQ(wrong[0] + wrong[1] + wrong[2], 0);
}

TEST(ShmRendezvous, ForkedProcessesMeetThroughTheSegment) {
  auto creator = ShmRendezvous::create(2, 4096);
  const std::string name = creator->name();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 1;
    try {
      auto mine = ShmRendezvous::open(name, 2);
      mine->attach(1);
      code = run_rank(*mine, 1, 300) == 0 ? 0 : 2;
    } catch (...) {
      code = 3;
    }
    ::_exit(code);
  }
  creator->attach(0);
  EXPECT_EQ(run_rank(*creator, 0, 300), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(creator->attached(), 2);
}

TEST(ShmRendezvous, AMissingRankIsNamedAtTheDeadline) {
  auto rv = ShmRendezvous::create(3, 64);
  auto other = ShmRendezvous::open(rv->name(), 3);
  float x = 1;
  std::thread one(
      [&] { EXPECT_THROW(other->exchange(1, &x, sizeof x, milliseconds(100), {}), Error); });
  try {
    rv->exchange(0, &x, sizeof x, milliseconds(100), {});
    FAIL() << "no deadline";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::deadline_exceeded);
    EXPECT_NE(std::string(e.what()).find("rank(s) 2 did not arrive within 100 ms"),
              std::string::npos)
        << e.what();
  }
  one.join();
}

TEST(ShmRendezvous, ABrokenGroupEndsTheWaitWithItsReason) {
  auto rv = ShmRendezvous::create(2, 64);
  float x = 1;
  auto broken = [] { return std::string("rank 1 is down: killed"); };
  try {
    rv->exchange(0, &x, sizeof x, milliseconds(60000), broken);
    FAIL() << "waited for a dead rank";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::unavailable);
    EXPECT_STREQ(e.what(), "rank 1 is down: killed");
  }
}

TEST(ShmRendezvous, ContributionsOfDifferentSizesAreNamed) {
  auto rv = ShmRendezvous::create(2, 256);
  auto other = ShmRendezvous::open(rv->name(), 2);
  std::vector<char> small(64), large(128);
  std::string seen[2];
  std::thread one([&] {
    try {
      other->exchange(1, large.data(), large.size(), milliseconds(10000), {});
    } catch (const Error& e) {
      seen[1] = e.what();
    }
  });
  try {
    rv->exchange(0, small.data(), small.size(), milliseconds(10000), {});
  } catch (const Error& e) {
    seen[0] = e.what();
  }
  one.join();
  EXPECT_NE(seen[0].find("rank 1 contributed 128 bytes, rank 0 64"), std::string::npos) << seen[0];
  EXPECT_NE(seen[1].find("rank 0 contributed 64 bytes, rank 1 128"), std::string::npos) << seen[1];
}

TEST(ShmRendezvous, ASlotIsNotRewrittenBeforeEveryRankReleasedIt) {
  // Two slots per rank: rank 0 may post calls 1 and 2 ahead, but call 3 reuses call 1's slot,
  // which rank 1 has not released (nor even read).
  auto rv = ShmRendezvous::create(2, 64, 2);
  auto other = ShmRendezvous::open(rv->name(), 2);
  EXPECT_EQ(other->depth(), 2);
  float x = 1;
  EXPECT_EQ(rv->post(0, &x, sizeof x, milliseconds(100), {}), 1u);
  EXPECT_EQ(rv->post(0, &x, sizeof x, milliseconds(100), {}), 2u);
  rv->release(0, 1);  // rank 0 is done with call 1; rank 1 is not
  try {
    rv->post(0, &x, sizeof x, milliseconds(100), {});
    FAIL() << "rewrote a slot rank 1 still holds";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::deadline_exceeded);
    EXPECT_NE(std::string(e.what()).find("call 3: rank(s) 1 did not release call 1 within 100 ms"),
              std::string::npos)
        << e.what();
  }
  // Once rank 1 took part in call 1 and released it, the slot is free again.
  EXPECT_EQ(other->post(1, &x, sizeof x, milliseconds(100), {}), 1u);
  auto slots = other->collect(1, 1, sizeof x, milliseconds(100), {});
  EXPECT_EQ(*reinterpret_cast<const float*>(slots[0]), 1.0f);
  other->release(1, 1);
  EXPECT_EQ(rv->post(0, &x, sizeof x, milliseconds(100), {}), 3u);
}

TEST(ShmRendezvous, AContributionLargerThanASlotIsRefused) {
  auto rv = ShmRendezvous::create(2, 64);
  std::vector<char> big(65);
  try {
    rv->exchange(0, big.data(), big.size(), milliseconds(100), {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("65 bytes do not fit a slot of 64"), std::string::npos);
  }
}

TEST(ShmRendezvous, OpenChecksNameAndShape) {
  try {
    ShmRendezvous::open("/troupe-rdv-no-such-segment", 2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "cannot open shared-memory rendezvous /troupe-rdv-no-such-segment"),
              std::string::npos);
  }
  auto rv = ShmRendezvous::create(2, 64);
  try {
    ShmRendezvous::open(rv->name(), 3);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not one for 3 ranks"), std::string::npos) << e.what();
  }
}

TEST(ShmRendezvous, CreateRefusesShapesItCannotServe) {
  EXPECT_THROW(ShmRendezvous::create(0, 64), Error);
  try {
    ShmRendezvous::create(2, 100);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("slots a positive multiple of 64 bytes"),
              std::string::npos);
  }
  EXPECT_THROW(ShmRendezvous::create(2, 64, 1), Error);
  EXPECT_THROW(ShmRendezvous::create(2, 64, ShmRendezvous::kMaxDepth + 1), Error);
}

TEST(ShmRendezvous, TheNameIsGoneOnceUnlinkedAndTheDecisionIsShared) {
  auto rv = ShmRendezvous::create(2, 64);
  auto other = ShmRendezvous::open(rv->name(), 2);
  EXPECT_EQ(other->decision(), ShmRendezvous::Decision::pending);
  rv->decide(ShmRendezvous::Decision::on);
  EXPECT_EQ(other->decision(), ShmRendezvous::Decision::on);
  rv->unlink();
  EXPECT_THROW(ShmRendezvous::open(rv->name(), 2), Error);
}

}  // namespace
}  // namespace troupe
