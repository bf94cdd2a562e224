// SyncReplicas bookkeeping (spec cluster-and-ps.md §2.11, §3 vector 16, §5 "Stragglers").
#include <gtest/gtest.h>

#include "core/ps/sync_replicas.hpp"
#include "tests/common/error_of.hpp"

using namespace troupe;
using troupe::testing::error_of;

TEST(SyncReplicas, Vector16_FiftyOfFifty) {
  SyncReplicasPlan plan({50, 50});
  EXPECT_EQ(plan.tokens_per_step(), 50);
  EXPECT_EQ(plan.initial_tokens(), 50);
}

TEST(SyncReplicas, Vector16_ThreeToAggregateFromTwoReplicas) {
  SyncReplicasPlan plan({3, 2});
  EXPECT_EQ(plan.tokens_per_step(), 3);
  EXPECT_EQ(plan.initial_tokens(1), 1);  // at least R - total = 1
  EXPECT_EQ(plan.initial_tokens(), 3);
  EXPECT_EQ(error_of([&] { plan.initial_tokens(0); }),
            "too few tokens to finish the first step: 0 (given) vs 1 (needed) for 3 replicas to "
            "aggregate out of 2");
}

TEST(SyncReplicas, TotalDefaultsToReplicasToAggregateAndBadCountsAreRejected) {
  EXPECT_EQ(SyncReplicasPlan({4, 0}).total_num_replicas(), 4);
  EXPECT_EQ(error_of([] {
              SyncReplicasPlan({0, 2});
            }),
            "replicas_to_aggregate must be at least 1, got 0");
  EXPECT_EQ(error_of([] {
              SyncReplicasPlan({2, -1});
            }),
            "total_num_replicas must be at least 1 (0 = replicas_to_aggregate), got -1");
}

TEST(SyncReplicas, StaleGradientsAreDroppedAndTokensCarryTheNewStep) {
  // 3 workers, R = 2 (backup worker): the slowest gradient of each step arrives stale.
  SyncReplicasPlan plan({2, 3});
  SyncAccumulator acc(plan);
  TokenQueue tokens;
  tokens.put(plan.initial_tokens(), acc.global_step());
  EXPECT_EQ(tokens.take(), 0);
  EXPECT_EQ(tokens.take(), 0);
  EXPECT_TRUE(acc.offer(0));
  EXPECT_FALSE(acc.ready());
  EXPECT_TRUE(acc.offer(0));
  ASSERT_TRUE(acc.ready());
  const int64_t next_tokens = acc.take();  // advances the global step first
  tokens.put(next_tokens, acc.global_step());
  EXPECT_EQ(acc.global_step(), 1);
  EXPECT_EQ(tokens.size(), 3u);  // max(total, R) tokens for step 1
  EXPECT_FALSE(acc.offer(0));    // the straggler of step 0: stale, dropped
  EXPECT_EQ(acc.dropped(), 1);
  EXPECT_EQ(acc.accepted(), 0);
  EXPECT_EQ(tokens.take(), 1);
  EXPECT_EQ(error_of([&] { acc.take(); }), "sync step 1 has 0 of 2 gradients");
}
