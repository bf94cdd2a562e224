// Deduplication of updates by step id (issue 12: exactly-once where TF gives at-least-once).
#include <gtest/gtest.h>

#include "core/ps/applied_steps.hpp"

using namespace troupe;

TEST(AppliedSteps, RepeatOfAStepIsRecognised) {
  AppliedSteps s;
  EXPECT_TRUE(s.first_time(1));
  EXPECT_FALSE(s.first_time(1));
  EXPECT_TRUE(s.first_time(3));
  EXPECT_FALSE(s.first_time(3));
  EXPECT_TRUE(s.contains(3));
  EXPECT_FALSE(s.contains(2));
}

TEST(AppliedSteps, StepZeroIsNeverDeduplicated) {
  AppliedSteps s;
  EXPECT_TRUE(s.first_time(0));
  EXPECT_TRUE(s.first_time(0));
  EXPECT_FALSE(s.contains(0));
}

TEST(AppliedSteps, OutOfOrderIdsCompactIntoTheFloor) {
  AppliedSteps s;
  for (uint64_t id : {2, 4, 3}) EXPECT_TRUE(s.first_time(id));
  EXPECT_EQ(s.floor(), 0u);
  EXPECT_EQ(s.sparse_size(), 3u);
  EXPECT_TRUE(s.first_time(1));
  EXPECT_EQ(s.floor(), 4u);
  EXPECT_EQ(s.sparse_size(), 0u);
  EXPECT_FALSE(s.first_time(2));  // below the floor: still a repeat
}

TEST(AppliedSteps, TenThousandInOrderStepsKeepNoSparseIds) {
  AppliedSteps s;
  for (uint64_t id = 1; id <= 10000; ++id) ASSERT_TRUE(s.first_time(id));
  EXPECT_EQ(s.floor(), 10000u);
  EXPECT_EQ(s.sparse_size(), 0u);
}
