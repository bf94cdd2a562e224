// distribute_datasets_from_function (spec §2.9): one call per input worker with InputContext
// (W, i, N) (T7), per-replica batches taken round-robin by the worker's replicas, PER_REPLICA.
#include "tests/input/input_test_util.hpp"

namespace troupe::testing {
namespace {

using data::Dataset;
using data::InputContext;

TEST_F(InputTest, T7_TwoInputWorkersOnFourReplicasGetContexts_2_0_4_And_2_1_4) {
  std::vector<InputContext> seen;
  auto dist = distribute_datasets_from_function(
      runtime.system(), make_strategy(4),
      [&](const InputContext& ctx) {
        seen.push_back(ctx);
        int64_t b = ctx.get_per_replica_batch_size(4);
        return Dataset::range(0, 8)
            .shard(ctx.num_input_pipelines(), ctx.input_pipeline_id())
            .batch(b);
      },
      workers(2));
  EXPECT_EQ(seen, (std::vector<InputContext>{InputContext(2, 0, 4), InputContext(2, 1, 4)}));
  auto steps = drain(dist);
  // Worker 0 holds 0,2,4,6 and worker 1 holds 1,3,5,7; each replica takes one batch per step.
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0], (StepValues{{0}, {2}, {1}, {3}}));
  EXPECT_EQ(steps[1], (StepValues{{4}, {6}, {5}, {7}}));
}

TEST_F(InputTest, T7_PerReplicaModeCallsTheFunctionOncePerReplica) {
  std::vector<InputContext> seen;
  InputOptions o;
  o.experimental_replication_mode = InputReplicationMode::per_replica;
  auto dist = distribute_datasets_from_function(
      runtime.system(), make_strategy(4),
      [&](const InputContext& ctx) {
        seen.push_back(ctx);
        return Dataset::range(ctx.input_pipeline_id() * 10, ctx.input_pipeline_id() * 10 + 2)
            .batch(1);
      },
      o);
  ASSERT_EQ(seen.size(), 4u);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(seen[size_t(i)], InputContext(4, i, 4));
  EXPECT_EQ(dist.num_input_workers(), 4);
  auto steps = drain(dist);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0], (StepValues{{0}, {10}, {20}, {30}}));
}

TEST_F(InputTest, FromFunctionOneWorkerFeedsReplicasRoundRobinWithPartialLastStep) {
  auto dist = distribute_datasets_from_function(
      runtime.system(), make_strategy(3), [](const InputContext& ctx) {
        EXPECT_EQ(ctx, InputContext(1, 0, 3));
        return Dataset::range(0, 10).batch(ctx.get_per_replica_batch_size(6));
      });
  auto steps = drain(dist);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0], (StepValues{{0, 1}, {2, 3}, {4, 5}}));
  EXPECT_EQ(steps[1], (StepValues{{6, 7}, {8, 9}, {}}));
}

TEST_F(InputTest, FromFunctionIndivisibleGlobalBatchReachesTheCaller) {
  EXPECT_ERROR_CONTAINS(distribute_datasets_from_function(runtime.system(), make_strategy(4),
                                                          [](const InputContext& ctx) {
                                                            return Dataset::range(0, 8).batch(
                                                                ctx.get_per_replica_batch_size(63));
                                                          }),
                        "63");
}

TEST_F(InputTest, FromFunctionRejectsConflictingPlacementOptions) {
  InputOptions o;
  o.experimental_replication_mode = InputReplicationMode::per_replica;
  o.experimental_place_dataset_on_device = true;  // fetch_to_device stays true: conflict
  EXPECT_ERROR_CONTAINS(distribute_datasets_from_function(
                            runtime.system(), make_strategy(2),
                            [](const InputContext&) { return Dataset::range(0, 4).batch(1); }, o),
                        "cannot be combined with experimental_fetch_to_device");
}

}  // namespace
}  // namespace troupe::testing
