// The merge_call barrier's decisions (spec mirrored.md §2.9, §2.14), without actors.
#include <gtest/gtest.h>

#include "core/merge_barrier.hpp"

using namespace troupe;
using Action = MergeBarrier::Action;

namespace {
bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}
}  // namespace

TEST(MergeBarrier, RunsMergeOnlyWhenEveryReplicaArrived) {
  MergeBarrier b(3);
  EXPECT_EQ(b.arrive(2, 1, 0, "t").action, Action::wait);
  EXPECT_EQ(b.arrive(0, 1, 0, "t").action, Action::wait);
  EXPECT_TRUE(b.round_open());
  auto d = b.arrive(1, 1, 0, "t");
  EXPECT_EQ(d.action, Action::run_merge);
  EXPECT_EQ(d.replicas, (std::vector<int>{0, 1, 2}));
  EXPECT_FALSE(b.round_open());
}

TEST(MergeBarrier, SecondCallOfTheSameStepIsANewRound) {
  MergeBarrier b(2);
  b.arrive(0, 5, 0, "a");
  EXPECT_EQ(b.arrive(1, 5, 0, "a").action, Action::run_merge);
  b.arrive(1, 5, 1, "b");
  EXPECT_EQ(b.arrive(0, 5, 1, "b").action, Action::run_merge);
}

TEST(MergeBarrier, TagMismatchNamesBothReplicasTagsAndStep) {
  MergeBarrier b(2);
  b.arrive(0, 7, 0, "grads");
  auto d = b.arrive(1, 7, 0, "metrics");
  EXPECT_EQ(d.action, Action::fail);
  EXPECT_EQ(d.replicas, (std::vector<int>{0, 1}));
  EXPECT_TRUE(contains(d.error, "merge_call mismatch at step 7")) << d.error;
  EXPECT_TRUE(contains(d.error, "replica 0 is at merge_call 0 (tag 'grads')")) << d.error;
  EXPECT_TRUE(contains(d.error, "replica 1 is at merge_call 0 (tag 'metrics')")) << d.error;
}

TEST(MergeBarrier, CallIndexMismatchIsAnError) {
  MergeBarrier b(2);
  b.arrive(0, 1, 0, "");
  auto d = b.arrive(1, 1, 1, "");
  EXPECT_EQ(d.action, Action::fail);
  EXPECT_TRUE(contains(d.error, "replica 1 is at merge_call 1")) << d.error;
}

TEST(MergeBarrier, ReplicaFinishingWhileOthersWaitIsUnequalMergeCalls) {
  MergeBarrier b(2);
  b.arrive(0, 3, 0, "x");
  auto d = b.finished(1, 3, 0);
  EXPECT_EQ(d.action, Action::fail);
  EXPECT_EQ(d.replicas, (std::vector<int>{0}));
  EXPECT_TRUE(contains(d.error, "different numbers of merge_call calls")) << d.error;
  EXPECT_TRUE(contains(d.error, "replica 1 finished step 3 after 0 merge_call(s)")) << d.error;
}

TEST(MergeBarrier, ArrivingAfterAPeerFinishedFailsAtOnce) {
  MergeBarrier b(2);
  b.arrive(0, 3, 0, "x");
  b.arrive(1, 3, 0, "x");
  EXPECT_EQ(b.finished(1, 3, 1).action, Action::wait);
  auto d = b.arrive(0, 3, 1, "y");
  EXPECT_EQ(d.action, Action::fail);
  EXPECT_EQ(d.replicas, (std::vector<int>{0}));
  EXPECT_TRUE(contains(d.error, "replica 1 finished step 3 after 1 merge_call(s)")) << d.error;
}

TEST(MergeBarrier, FailedReplicaReleasesWaitersAndKeepsTheRootCause) {
  MergeBarrier b(3);
  b.arrive(0, 2, 0, "");
  b.arrive(2, 2, 0, "");
  auto d = b.failed(1, 2, "loss is NaN");
  EXPECT_EQ(d.action, Action::fail);
  EXPECT_EQ(d.replicas, (std::vector<int>{0, 2}));
  EXPECT_EQ(d.error, "replica 1 failed at step 2: loss is NaN");
  // The aborted replicas report failure too; the step's error stays the root cause.
  EXPECT_EQ(b.failed(0, 2, "aborted").action, Action::wait);
  auto late = b.arrive(2, 2, 1, "");
  EXPECT_EQ(late.error, "replica 1 failed at step 2: loss is NaN");
}

TEST(MergeBarrier, TimeoutNamesMissingAndArrivedReplicas) {
  MergeBarrier b(4);
  b.arrive(3, 9, 0, "sync");
  b.arrive(0, 9, 0, "sync");
  auto d = b.timeout(9, 0, 250);
  EXPECT_EQ(d.action, Action::fail);
  EXPECT_EQ(d.code, Code::deadline_exceeded);
  EXPECT_TRUE(contains(d.error, "timed out after 250 ms at step 9, merge_call 0 (tag 'sync')"))
      << d.error;
  EXPECT_TRUE(contains(d.error, "replica(s) [1, 2] did not arrive (arrived: [0, 3])")) << d.error;
}

TEST(MergeBarrier, TimerOfACompletedRoundIsIgnored) {
  MergeBarrier b(2);
  b.arrive(0, 1, 0, "");
  b.arrive(1, 1, 0, "");
  EXPECT_EQ(b.timeout(1, 0, 100).action, Action::wait);
  b.arrive(0, 2, 0, "");
  EXPECT_EQ(b.timeout(1, 0, 100).action, Action::wait);  // a timer of the previous step
}

TEST(MergeBarrier, NextStepStartsClean) {
  MergeBarrier b(2);
  b.arrive(0, 1, 0, "a");
  b.arrive(1, 1, 0, "b");  // mismatch fails step 1
  b.arrive(0, 2, 0, "a");
  EXPECT_EQ(b.arrive(1, 2, 0, "a").action, Action::run_merge);
}

TEST(MergeBarrier, RejectsStaleStepsDuplicatesAndUnknownReplicas) {
  MergeBarrier b(2);
  b.arrive(0, 4, 0, "");
  auto dup = b.arrive(0, 4, 0, "");
  EXPECT_TRUE(contains(dup.error, "replica 0 arrived twice")) << dup.error;
  auto stale = b.arrive(1, 3, 0, "");
  EXPECT_TRUE(contains(stale.error, "arrived at merge_call for step 3 but the group is at step 4"))
      << stale.error;
  EXPECT_TRUE(contains(b.arrive(5, 4, 0, "").error, "unknown replica 5"));
  EXPECT_THROW(MergeBarrier(0), Error);
}
