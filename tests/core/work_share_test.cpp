// WorkShare: row blocks of one member's job that an idle member runs. Every row runs exactly
// once wherever it runs; the owner cuts its job only while someone waits (or waited for the same
// shape last time); a block's exception reaches the owner; more members than cores share nothing.

#include "core/work_share.hpp"

#include <gtest/gtest.h>

#include <sched.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/idle_member.hpp"

namespace troupe {
namespace {

struct Rows {
  std::vector<std::atomic<int>> runs;  // per row: how often it ran
  std::vector<std::atomic<int>> by;    // per row: the member whose thread ran it
  std::atomic<int> calls{0};
  std::atomic<bool> helper_ran{false};
  bool owner_waits_for_helper = false;  // the owner's blocks wait (up to 10 s) for a helped one
  explicit Rows(int64_t n) : runs(size_t(n)), by(size_t(n)) {}
  static void run(const void* context, int64_t begin, int64_t end) {
    auto& self = *static_cast<Rows*>(const_cast<void*>(context));
    self.calls.fetch_add(1);
    for (int64_t r = begin; r < end; ++r) {
      self.runs[size_t(r)].fetch_add(1);
      self.by[size_t(r)].store(WorkShare::current_member());
    }
    if (WorkShare::current_member() != 0) self.helper_ran.store(true);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    const bool cut = end - begin < int64_t(self.runs.size());
    while (self.owner_waits_for_helper && cut && WorkShare::current_member() == 0 &&
           !self.helper_ran.load() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
  }
  void expect_each_row_once() const {
    for (size_t r = 0; r < runs.size(); ++r) EXPECT_EQ(runs[r].load(), 1) << "row " << r;
  }
};

using testing::IdleMember;

TEST(WorkShare, WithoutIdleMembersTheJobRunsWholeOnTheOwner) {
  WorkShare share(2);
  if (!share.sharing()) GTEST_SKIP() << "fewer than 2 usable cores";
  WorkShare::Member member(share, 0);
  Rows rows(100);
  share.run_rows(0, 7, 100, 10, Rows::run, &rows);
  EXPECT_EQ(rows.calls.load(), 1);
  rows.expect_each_row_once();
  EXPECT_EQ(share.helped_blocks(), 0);
}

TEST(WorkShare, AnIdleMemberTakesBlocksAndEveryRowRunsOnce) {
  WorkShare share(2);
  if (!share.sharing()) GTEST_SKIP() << "fewer than 2 usable cores";
  WorkShare::Member member(share, 0);
  IdleMember helper(share);
  Rows rows(64);
  rows.owner_waits_for_helper = true;
  share.run_rows(0, 7, 64, 16, Rows::run, &rows);
  rows.expect_each_row_once();
  EXPECT_EQ(rows.calls.load(), 4);  // 64 rows at 16 or more per block, at most 4 blocks
  int by_helper = 0;
  for (auto& b : rows.by) by_helper += b.load() == 1;
  EXPECT_GT(by_helper, 0);
  EXPECT_EQ(by_helper % 16, 0);  // whole blocks
  EXPECT_EQ(share.helped_blocks(), by_helper / 16);
}

TEST(WorkShare, ShortJobsAndSmallCutsRunWhole) {
  WorkShare share(2);
  if (!share.sharing()) GTEST_SKIP() << "fewer than 2 usable cores";
  IdleMember helper(share);
  Rows rows(31);
  share.run_rows(0, 7, 31, 16, Rows::run, &rows);  // 2 blocks of 16 would not fit
  EXPECT_EQ(rows.calls.load(), 1);
  rows.expect_each_row_once();
}

TEST(WorkShare, AShapeWaitedForLastTimeIsCutAgainAndStopsBeingCutWhenNobodyHelps) {
  WorkShare share(2);
  if (!share.sharing()) GTEST_SKIP() << "fewer than 2 usable cores";
  {
    // Someone idle (not helping) when the call ends: the shape is marked.
    Rows rows(64);
    IdleMember waiter(share, /*help=*/false);
    share.run_rows(0, 9, 64, 16, Rows::run, &rows);
    EXPECT_EQ(rows.calls.load(), 4);  // idle at the start: cut at once
  }
  Rows again(64);
  share.run_rows(0, 9, 64, 16, Rows::run, &again);  // nobody idle now, but the hint holds
  EXPECT_EQ(again.calls.load(), 4);
  again.expect_each_row_once();
  Rows other_shape(64);
  share.run_rows(0, 10, 64, 16, Rows::run, &other_shape);
  EXPECT_EQ(other_shape.calls.load(), 1);
  Rows after(64);  // the last cut was neither helped nor waited for: whole again
  share.run_rows(0, 9, 64, 16, Rows::run, &after);
  EXPECT_EQ(after.calls.load(), 1);
}

// Throws on the helper's thread; the owner's blocks wait until one has.
std::atomic<bool> g_helper_threw{false};
void throw_on_the_helper(const void*, int64_t begin, int64_t) {
  if (WorkShare::current_member() != 0) {
    g_helper_threw.store(true);
    throw std::runtime_error("block at row " + std::to_string(begin) + " failed");
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!g_helper_threw.load() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
}

TEST(WorkShare, ABlockThatThrowsOnAnyThreadIsRethrownByTheOwner) {
  WorkShare share(2);
  if (!share.sharing()) GTEST_SKIP() << "fewer than 2 usable cores";
  WorkShare::Member member(share, 0);
  IdleMember helper(share);
  try {
    share.run_rows(0, 11, 64, 16, throw_on_the_helper, nullptr);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("failed"), std::string::npos);
  }
  Rows rows(64);  // the share still works afterwards
  share.run_rows(0, 12, 64, 16, Rows::run, &rows);
  rows.expect_each_row_once();
}

int usable_cores() {
  cpu_set_t set;
  sched_getaffinity(0, sizeof set, &set);
  return CPU_COUNT(&set);
}

TEST(WorkShare, MoreMembersThanCoresOrOneMemberShareNothing) {
  EXPECT_FALSE(WorkShare(1).sharing());
  WorkShare crowded(usable_cores() + 1);
  EXPECT_FALSE(crowded.sharing());
  WorkShare::Member member(crowded, 0);
  WorkShare::Idle idle;
  EXPECT_FALSE(idle.active());  // an idle member of a non-sharing group does not spin for work
  Rows rows(64);
  crowded.run_rows(0, 7, 64, 16, Rows::run, &rows);
  EXPECT_EQ(rows.calls.load(), 1);
}

TEST(WorkShare, MemberScopesNestAndRestore) {
  WorkShare a(2), b(2);
  EXPECT_EQ(WorkShare::current(), nullptr);
  {
    WorkShare::Member outer(a, 1);
    {
      WorkShare::Member inner(b, 0);
      EXPECT_EQ(WorkShare::current(), &b);
      EXPECT_EQ(WorkShare::current_member(), 0);
    }
    EXPECT_EQ(WorkShare::current(), &a);
    EXPECT_EQ(WorkShare::current_member(), 1);
  }
  EXPECT_EQ(WorkShare::current(), nullptr);
  EXPECT_EQ(WorkShare::current_member(), -1);
}

TEST(WorkShare, AWaiterHelpsUntilItsConditionHolds) {
  WorkShare share(2);
  if (!share.sharing()) GTEST_SKIP() << "fewer than 2 usable cores";
  std::atomic<bool> owner_done{false};
  std::thread waiter([&] {
    WorkShare::Member member(share, 1);
    // Ready once the owner's job has returned; until then it helps.
    while (!spin_until_helping([&] { return owner_done.load(); })) {
    }
  });
  {
    WorkShare::Member member(share, 0);
    // Between two of the waiter's spins nobody is idle for a moment: a job that starts then
    // runs whole, and the next one is cut.
    for (int attempt = 0; attempt < 100 && share.helped_blocks() == 0; ++attempt) {
      while (share.idle_members() == 0) std::this_thread::yield();
      Rows rows(64);
      rows.owner_waits_for_helper = true;
      share.run_rows(0, 13, 64, 16, Rows::run, &rows);
      rows.expect_each_row_once();
    }
  }
  owner_done.store(true);
  waiter.join();
  EXPECT_GT(share.helped_blocks(), 0);
}

}  // namespace
}  // namespace troupe
