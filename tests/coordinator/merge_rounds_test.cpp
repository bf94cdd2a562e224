// actors/merge_rounds without threads: the replica that completes a round gets replica 0's
// merge function and every replica's arguments, errors reach the parked replicas' slots, and the
// barrier's timer is asked for only when none runs, re-arming itself while rounds keep opening.
#include <gtest/gtest.h>

#include "actors/merge_rounds.hpp"
#include "fixture.hpp"

namespace troupe {
namespace {

using testing::scalar;
using testing::value_of;

constexpr auto kHour = std::chrono::milliseconds(std::chrono::hours(1));

MergeRunner tagged_runner(float tag) {
  return [tag](std::vector<std::vector<Tensor>> by_replica) {
    by_replica.at(0).push_back(scalar(tag));
    return by_replica;
  };
}

std::optional<MergeOutcome> answer_now(MergeSlot& slot, uint64_t step, uint32_t call) {
  return slot.take_answer(step, call, std::chrono::steady_clock::now() + std::chrono::seconds(30));
}

TEST(MergeRounds, TheLastArrivalRunsReplicaZerosMergeOnEveryonesArguments) {
  std::vector<MergeSlot> slots(3);
  MergeRounds rounds(slots, kHour);
  EXPECT_FALSE(rounds.arrive(1, 1, 0, "t", {scalar(11)}, tagged_runner(1)).run_merge);
  EXPECT_FALSE(rounds.arrive(0, 1, 0, "t", {scalar(10)}, tagged_runner(0)).run_merge);
  MergeTurn turn = rounds.arrive(2, 1, 0, "t", {scalar(12)}, tagged_runner(2));
  ASSERT_TRUE(turn.run_merge);
  EXPECT_EQ(turn.replicas, (std::vector<int>{0, 1, 2}));
  auto out = turn.runner(std::move(turn.args));
  EXPECT_EQ(value_of(out.at(0).at(0)), 10.0f);
  EXPECT_EQ(value_of(out.at(0).at(1)), 0.0f);  // replica 0's merge function ran
  EXPECT_EQ(value_of(out.at(1).at(0)), 11.0f);
  EXPECT_EQ(value_of(out.at(2).at(0)), 12.0f);
}

TEST(MergeRounds, AMismatchAnswersEveryParkedReplicaWithTheNamedError) {
  std::vector<MergeSlot> slots(2);
  MergeRounds rounds(slots, kHour);
  rounds.arrive(0, 3, 0, "apply", {}, tagged_runner(0));
  EXPECT_FALSE(rounds.arrive(1, 3, 0, "other", {}, tagged_runner(1)).run_merge);
  for (int r : {0, 1}) {
    auto answer = answer_now(slots[size_t(r)], 3, 0);
    ASSERT_TRUE(answer.has_value());
    EXPECT_NE(answer->status.message().find("merge_call mismatch at step 3"), std::string::npos)
        << answer->status.message();
  }
}

TEST(MergeRounds, AReplicaThatFinishesWithoutTheCallFailsTheParkedOnes) {
  std::vector<MergeSlot> slots(2);
  MergeRounds rounds(slots, kHour);
  rounds.arrive(0, 2, 0, "only", {}, tagged_runner(0));
  rounds.finished(1, 2, 0);
  auto answer = answer_now(slots[0], 2, 0);
  ASSERT_TRUE(answer.has_value());
  EXPECT_NE(answer->status.message().find("replica 1 finished step 2 after 0 merge_call(s)"),
            std::string::npos)
      << answer->status.message();
}

TEST(MergeRounds, AFailedReplicaIsNamedToTheParkedOnes) {
  std::vector<MergeSlot> slots(2);
  MergeRounds rounds(slots, kHour);
  rounds.arrive(1, 4, 0, "t", {}, tagged_runner(1));
  rounds.failed(0, 4, "out of cheese");
  auto answer = answer_now(slots[1], 4, 0);
  ASSERT_TRUE(answer.has_value());
  EXPECT_NE(answer->status.message().find("replica 0 failed at step 4: out of cheese"),
            std::string::npos)
      << answer->status.message();
}

TEST(MergeRounds, TheTimerIsAskedForOnceAndStaysArmedWhileRoundsKeepOpening) {
  std::vector<MergeSlot> slots(2);
  MergeRounds rounds(slots, kHour);
  EXPECT_FALSE(rounds.timer_fired().has_value());  // nothing opened: no timer
  EXPECT_TRUE(rounds.arrive(0, 1, 0, "t", {}, tagged_runner(0)).arm_timer);
  EXPECT_TRUE(rounds.arrive(1, 1, 0, "t", {}, tagged_runner(1)).run_merge);
  EXPECT_FALSE(rounds.arrive(0, 2, 0, "t", {}, tagged_runner(0)).arm_timer);  // one is pending
  // Fired while round (2, 0) is open: due again when that round has waited the whole timeout.
  auto next = rounds.timer_fired();
  ASSERT_TRUE(next.has_value());
  EXPECT_LE(*next, kHour);
  EXPECT_TRUE(rounds.arrive(1, 2, 0, "t", {}, tagged_runner(1)).run_merge);
  // Rounds opened since the last firing: the timer stays armed, nobody has to ask.
  rounds.arrive(0, 3, 0, "t", {}, tagged_runner(0));
  rounds.arrive(1, 3, 0, "t", {}, tagged_runner(1));
  next = rounds.timer_fired();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(*next, std::chrono::steady_clock::duration(kHour));
  // A quiet period: the timer stops, and the next round to open asks for it again.
  EXPECT_FALSE(rounds.timer_fired().has_value());
  EXPECT_TRUE(rounds.arrive(0, 4, 0, "t", {}, tagged_runner(0)).arm_timer);
}

TEST(MergeRounds, ARoundOpenForTheWholeTimeoutFailsNamingTheMissingReplica) {
  std::vector<MergeSlot> slots(3);
  MergeRounds rounds(slots, std::chrono::milliseconds(0));
  rounds.arrive(2, 7, 0, "t", {}, tagged_runner(2));
  EXPECT_FALSE(rounds.timer_fired().has_value());  // the round failed: no timer left to run
  auto answer = answer_now(slots[2], 7, 0);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status.code(), Code::deadline_exceeded);
  EXPECT_NE(answer->status.message().find("replica(s) [0, 1] did not arrive"), std::string::npos)
      << answer->status.message();
}

}  // namespace
}  // namespace troupe
