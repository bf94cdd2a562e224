// InputContext (spec §2.10, T6, T7).
#include "core/data/input_context.hpp"
#include "data_test_util.hpp"

using namespace troupe;
using namespace troupe::data;
using namespace troupe::data::testing;

TEST(InputContext, T6_DefaultsAndStringForm) {
  InputContext ctx;
  EXPECT_EQ(ctx.num_input_pipelines(), 1);
  EXPECT_EQ(ctx.input_pipeline_id(), 0);
  EXPECT_EQ(ctx.num_replicas_in_sync(), 1);
  EXPECT_EQ(ctx.to_string(), "tf.distribute.InputContext(input pipeline id 0, total: 1)");
}

TEST(InputContext, T6_PerReplicaBatchSize) {
  EXPECT_EQ(InputContext(1, 0, 4).get_per_replica_batch_size(64), 16);
  EXPECT_EQ(InputContext(2, 1, 8).get_per_replica_batch_size(16), 2);
  EXPECT_ERROR_CONTAINS(InputContext(1, 0, 4).get_per_replica_batch_size(63),
                        "The global batch size (63) is not divisible by num_replicas_in_sync (4)");
}

TEST(InputContext, T7_ContextsForWorkers) {
  auto two = input_contexts_for_workers(2, 4);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0], InputContext(2, 0, 4));
  EXPECT_EQ(two[1], InputContext(2, 1, 4));
  auto per_replica = input_contexts_for_workers(4, 4);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(per_replica[size_t(i)], InputContext(4, i, 4));
  EXPECT_ERROR_CONTAINS(input_contexts_for_workers(0, 4), "should have at least one worker");
}

TEST(InputContext, InvalidFieldsAreRejected) {
  EXPECT_ERROR_CONTAINS(InputContext(2, 2, 1), "input_pipeline_id 2 outside [0, 2)");
  EXPECT_ERROR_CONTAINS(InputContext(1, 0, 0), "num_replicas_in_sync must be >= 1, got 0");
}
