// The SyncReplicas accumulator and token queue actor (spec cluster-and-ps.md §2.11, vector 16):
// tokens, the mean of R accepted gradients, stale gradients dropped, tokens released only once
// the step is applied.
#include <gtest/gtest.h>

#include <future>

#include "coordinator/ps/sync_replicas.hpp"
#include "in_process_cluster.hpp"
#include "tests/common/error_of.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

class SyncReplicasActor : public InProcessCluster {
 protected:
  void SetUp() override { start(0); }
};

TEST_F(SyncReplicasActor, TheCompletingOfferGetsTheMeanAndTokensFollowTheApply) {
  SyncReplicasOptions o;
  o.replicas_to_aggregate = 2;
  o.total_num_replicas = 3;  // one backup worker: 3 tokens per step
  SyncReplicas sync(*sys_, o, cpu_kernels());
  // Initial tokens: R = 2, of global step 0.
  EXPECT_EQ(sync.take_token(), 0);
  EXPECT_EQ(sync.take_token(), 0);
  SyncOffer first =
      sync.offer(0, {{floats({2}, {1, 2}), Tensor()}, {floats({1, 2}, {1, 1}), rows({3})}});
  EXPECT_TRUE(first.accepted);
  EXPECT_FALSE(first.apply);
  SyncOffer second =
      sync.offer(0, {{floats({2}, {3, 4}), Tensor()}, {floats({1, 2}, {2, 2}), rows({5})}});
  ASSERT_TRUE(second.apply);
  EXPECT_EQ(second.global_step, 0);
  EXPECT_EQ(second.mean.at(0).values.to_vector<float>(), (std::vector<float>{2, 3}));
  EXPECT_EQ(second.mean.at(1).indices.to_vector<int64_t>(), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(second.mean.at(1).values.to_vector<float>(), (std::vector<float>{0.5, 0.5, 1, 1}));
  // A third worker's gradient of step 0 is stale now.
  SyncOffer late =
      sync.offer(0, {{floats({2}, {9, 9}), Tensor()}, {floats({1, 2}, {9, 9}), rows({0})}});
  EXPECT_FALSE(late.accepted);
  EXPECT_EQ(sync.stats().dropped, 1);
  EXPECT_EQ(sync.stats().global_step, 1);
  // No token until the step is applied; then tokens_per_step = max(3, 2) of step 1.
  auto waiting = std::async(std::launch::async, [&] { return sync.take_token(); });
  sync.applied(0);
  EXPECT_EQ(waiting.get(), 1);
  EXPECT_EQ(sync.take_token(), 1);
  EXPECT_EQ(sync.take_token(), 1);
}

TEST_F(SyncReplicasActor, TokensLostWithAWorkerAreGivenAgain) {
  SyncReplicasOptions o;
  o.replicas_to_aggregate = 2;
  SyncReplicas sync(*sys_, o, cpu_kernels());
  // Both tokens of step 0 are out; one went with a lost worker.
  EXPECT_EQ(sync.take_token(), 0);
  EXPECT_EQ(sync.take_token(), 0);
  EXPECT_FALSE(sync.offer(0, {{floats({2}, {1, 2}), Tensor()}}).apply);
  // The lost worker's closure, run again, waits for a token until the loss is reported.
  auto retry = std::async(std::launch::async, [&] { return sync.take_token(); });
  SyncReplicas::replace_lost_tokens(sync.actor(), 1);
  EXPECT_EQ(retry.get(), 0);
  SyncOffer done = sync.offer(0, {{floats({2}, {3, 4}), Tensor()}});
  ASSERT_TRUE(done.apply);
  // Lost while the update goes to the shards (maybe by the worker applying it, which would
  // never report it applied): the next step's tokens are released at once, with one more.
  SyncReplicas::replace_lost_tokens(sync.actor(), 1);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(sync.take_token(), 1);
  // A late report of the applied step changes nothing.
  sync.applied(0);
  EXPECT_EQ(sync.stats().global_step, 1);
  EXPECT_EQ(sync.stats().accepted, 0);
}

// A resumed run's accumulator: it continues at the checkpoint's global step with that step's
// tokens, as the uninterrupted run's queue stood at the boundary.
TEST_F(SyncReplicasActor, RestoreContinuesAtAGlobalStepWithItsTokens) {
  SyncReplicasOptions o;
  o.replicas_to_aggregate = 2;
  SyncReplicas sync(*sys_, o, cpu_kernels());
  sync.restore(7);
  EXPECT_EQ(sync.stats().global_step, 7);
  EXPECT_EQ(sync.take_token(), 7);
  EXPECT_EQ(sync.take_token(), 7);
  // Both of step 7's tokens are out: a third waits for the step's update.
  auto third = std::async(std::launch::async, [&] { return sync.take_token(); });
  EXPECT_TRUE(sync.offer(7, {{floats({2}, {1, 2}), Tensor()}}).accepted);
  // An offer of a step before the restored one is stale.
  EXPECT_FALSE(sync.offer(6, {{floats({2}, {1, 2}), Tensor()}}).accepted);
  SyncOffer done = sync.offer(7, {{floats({2}, {3, 4}), Tensor()}});
  ASSERT_TRUE(done.apply);
  EXPECT_EQ(done.global_step, 7);
  sync.applied(7);
  EXPECT_EQ(third.get(), 8);
}

TEST_F(SyncReplicasActor, RestoreOnceTrainingStartedIsRefusedNamingWhatIsPending) {
  SyncReplicasOptions o;
  o.replicas_to_aggregate = 2;
  SyncReplicas sync(*sys_, o, cpu_kernels());
  EXPECT_EQ(sync.take_token(), 0);
  EXPECT_TRUE(sync.offer(0, {{floats({2}, {1, 2}), Tensor()}}).accepted);
  EXPECT_EQ(error_of([&] { sync.restore(5); }),
            "the sync accumulator can be restored to global step 5 only before training: it is "
            "at global step 0 with 1 gradient(s) pending and 1 token(s) queued");
  EXPECT_EQ(sync.stats().global_step, 0);
  EXPECT_EQ(sync.stats().accepted, 1);
  SyncReplicas fresh(*sys_, o, cpu_kernels());
  EXPECT_EQ(error_of([&] { fresh.restore(-1); }), "sync global step -1 is negative");
  EXPECT_EQ(fresh.stats().global_step, 0);
}

TEST_F(SyncReplicasActor, OffersOfAnotherLayoutAreRefused) {
  SyncReplicasOptions o;
  o.replicas_to_aggregate = 2;
  SyncReplicas sync(*sys_, o, cpu_kernels());
  sync.offer(0, {{floats({2}, {1, 2}), Tensor()}});
  EXPECT_EQ(error_of([&] {
              sync.offer(0, {{floats({2}, {1, 2}), Tensor()}, {floats({1}, {1}), Tensor()}});
            }),
            "sync offer of 2 gradients for a step accumulating 1");
  EXPECT_EQ(error_of([&] {
              sync.offer(0, {{floats({3}, {1, 2, 3}), Tensor()}});
            }),
            "sync offer: gradient 0 is float32[3], the step accumulates float32[2]");
}

TEST_F(SyncReplicasActor, TooFewTokensForTheFirstStepIsRefused) {
  SyncReplicasOptions o;
  o.replicas_to_aggregate = 0;
  EXPECT_NE(error_of([&] { SyncReplicas sync(*sys_, o, cpu_kernels()); }), "");
}

}  // namespace
