// experimental_distribute_dataset end to end through the dataset_iterator actors: the rebatch
// rule (T2, T10), partial steps, empty batches when G < N, option and input errors (T8).
#include <algorithm>

#include "core/data/rebatch.hpp"
#include "tests/input/input_test_util.hpp"

namespace troupe::testing {
namespace {

using data::Dataset;

TEST_F(InputTest, T2_BasicIterationSplitsEachGlobalBatchOverTwoReplicas) {
  auto dist = distribute(2, Dataset::range(0, 4).batch(2));
  auto it = dist.make_iterator();
  auto s1 = it.get_next();
  ASSERT_EQ(s1.size(), 1u);
  EXPECT_EQ(s1[0].size(), 2u);
  EXPECT_EQ(values_of(s1), (StepValues{{0}, {1}}));
  EXPECT_EQ(s1[0].at(0).dtype(), DType::int64);
  EXPECT_EQ(s1[0].at(0).shape().dims(), (std::vector<int64_t>{1}));
  EXPECT_EQ(values_of(it.get_next()), (StepValues{{2}, {3}}));
  EXPECT_FALSE(it.get_next_as_optional().has_value());
}

TEST_F(InputTest, GetNextThrowsOutOfRangeAtTheEndAndKeepsDoingSo) {
  auto dist = distribute(2, Dataset::range(0, 2).batch(2));
  auto it = dist.make_iterator();
  it.get_next();
  for (int i = 0; i < 2; ++i) {
    try {
      it.get_next();
      ADD_FAILURE() << "expected out_of_range";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::out_of_range);
      EXPECT_NE(std::string(e.what()).find("end of sequence"), std::string::npos);
    }
  }
}

TEST_F(InputTest, UnevenLastGlobalBatchGivesEmptyBatchesToReplicasWithoutData) {
  // G = 4 over 3 replicas: sizes [2, 1, 1]; 10 elements leave 2 for the last step.
  auto dist = distribute(3, Dataset::range(0, 10).batch(4));
  auto steps = drain(dist);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0], (StepValues{{0, 1}, {2}, {3}}));
  EXPECT_EQ(steps[1], (StepValues{{4, 5}, {6}, {7}}));
  EXPECT_EQ(steps[2], (StepValues{{8, 9}, {}, {}}));
}

TEST_F(InputTest, EmptyBatchesHaveLeadingDimensionZeroAndTheSpecsTrailingShape) {
  auto x = Tensor::from_vector<float>({5, 3}, std::vector<float>(15, 1.f));
  auto dist = distribute(4, Dataset::from_tensor_slices({x}).batch(4));
  auto it = dist.make_iterator();
  it.get_next();
  auto last = it.get_next();  // one row left: replica 0 has it, 1..3 get empties
  EXPECT_EQ(last[0].at(0).shape().dims(), (std::vector<int64_t>{1, 3}));
  for (size_t r = 1; r < 4; ++r) {
    EXPECT_EQ(last[0].at(r).shape().dims(), (std::vector<int64_t>{0, 3})) << r;
    EXPECT_EQ(last[0].at(r).dtype(), DType::float32);
  }
  EXPECT_FALSE(it.get_next_as_optional());
}

TEST_F(InputTest, T10_GlobalBatchSmallerThanReplicasGivesSomeReplicasEmptyBatchesEveryStep) {
  // G = 2, N = 4: sizes [1, 1, 0, 0] (T10): replicas 2 and 3 always get empty batches.
  auto steps = drain(distribute(4, Dataset::range(0, 4).batch(2)));
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0], (StepValues{{0}, {1}, {}, {}}));
  EXPECT_EQ(steps[1], (StepValues{{2}, {3}, {}, {}}));
}

TEST_F(InputTest, T10_SevenElementFilesOverTwoWorkersOfTwoReplicas) {
  // Upstream's walk-through: G = 7, W = 2, R = 2, files A and B of 7 elements, FILE sharding.
  auto a = write_int_file("A", 0, 7), b = write_int_file("B", 100, 7);
  auto dist = distribute(4, int_files({a, b}).batch(7), workers(2));
  EXPECT_EQ(dist.applied_auto_shard_policies(),
            (std::vector<data::AutoShardPolicy>{data::AutoShardPolicy::file,
                                                data::AutoShardPolicy::file}));
  auto steps = drain(dist);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0], (StepValues{{0, 1}, {2, 3}, {100, 101}, {102}}));
  EXPECT_EQ(steps[1], (StepValues{{4, 5}, {6}, {103, 104}, {105, 106}}));
}

TEST_F(InputTest, T10_EveryStepOfEveryWorkerAddsUpToTheGlobalBatch) {
  // G = 10, W = 2, R = 2: worker sizes [3,3,2,2] and [2,2,3,3]; OFF: both read everything.
  auto ds = Dataset::range(0, 40).batch(10).with_auto_shard_policy(data::AutoShardPolicy::off);
  auto steps = drain(distribute(4, ds, workers(2)));
  ASSERT_FALSE(steps.empty());
  for (size_t s = 0; s < steps.size(); ++s) {
    size_t rows = 0;
    for (auto& r : steps[s]) rows += r.size();
    EXPECT_EQ(rows, 10u) << "step " << s;
  }
  EXPECT_EQ(steps[0][0].size(), 3u);
  EXPECT_EQ(steps[0][2].size(), 2u);
}

TEST_F(InputTest, T8_ReplicasNotDivisibleByInputWorkersIsAnError) {
  EXPECT_ERROR_CONTAINS(distribute(3, Dataset::range(0, 8).batch(4), workers(2)),
                        "num_replicas_in_sync (3) must be divisible by the number of input "
                        "workers (2)");
}

TEST_F(InputTest, T8_FourReplicasOverTwoWorkersGiveTwoReplicasPerWorker) {
  auto dist = distribute(
      4, Dataset::range(0, 8).batch(4).with_auto_shard_policy(data::AutoShardPolicy::off),
      workers(2));
  EXPECT_EQ(dist.num_input_workers(), 2);
  EXPECT_EQ(dist.replicas_per_worker(), 2);
  EXPECT_EQ(dist.num_replicas_in_sync(), 4);
}

TEST_F(InputTest, UnbatchedInputIsRejectedWithAnExplanation) {
  EXPECT_ERROR_CONTAINS(distribute(2, Dataset::range(0, 8)),
                        "call batch(global_batch_size) on it before it can be split across 2 "
                        "replicas");
}

TEST_F(InputTest, PerReplicaModeIsNotImplementedForDistributeDataset) {
  InputOptions o;
  o.experimental_replication_mode = InputReplicationMode::per_replica;
  try {
    distribute(2, Dataset::range(0, 8).batch(4), o);
    ADD_FAILURE() << "expected unimplemented";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::unimplemented);
    EXPECT_NE(std::string(e.what()).find("PER_REPLICA"), std::string::npos) << e.what();
  }
}

TEST_F(InputTest, BadInputOptionsAreRejectedByName) {
  auto ds = Dataset::range(0, 8).batch(4);
  InputOptions negative_buffer;
  negative_buffer.experimental_per_replica_buffer_size = -1;
  EXPECT_ERROR_CONTAINS(distribute(2, ds, negative_buffer),
                        "experimental_per_replica_buffer_size must be >= 0, got -1");
  InputOptions place;
  place.experimental_place_dataset_on_device = true;
  EXPECT_ERROR_CONTAINS(distribute(2, ds, place), "requires replication mode PER_REPLICA");
  EXPECT_ERROR_CONTAINS(distribute(2, ds, workers(-1)), "num_input_workers must be >= 0, got -1");
}

TEST_F(InputTest, ElementSpecIsPerReplicaAndDynamicWithSeveralWorkers) {
  auto x = Tensor::zeros(DType::float32, Shape{8, 3});
  auto ds = Dataset::from_tensor_slices({x}).batch(4, /*drop_remainder=*/true);
  auto one = distribute(2, ds);
  ASSERT_EQ(one.element_spec().size(), 1u);
  EXPECT_EQ(one.element_spec()[0].dims, (std::vector<int64_t>{2, 3}));
  auto it = one.make_iterator();
  EXPECT_EQ(it.element_spec(), one.element_spec());
  auto two = distribute(2, ds.with_auto_shard_policy(data::AutoShardPolicy::off), workers(2));
  EXPECT_EQ(two.element_spec()[0].dims, (std::vector<int64_t>{data::kUnknownDim, 3}));
}

TEST_F(InputTest, LargerPerReplicaBufferYieldsTheSameSteps) {
  auto ds = Dataset::range(0, 50).batch(6);
  auto reference = drain(distribute(4, ds));
  for (int64_t buffer : {2, 5}) {
    auto steps = drain(distribute(4, ds, workers(0, buffer)));
    EXPECT_EQ(steps, reference) << "buffer " << buffer;
  }
}

TEST_F(InputTest, EachMakeIteratorStartsFromTheBeginning) {
  auto dist = distribute(2, Dataset::range(0, 6).batch(2));
  auto first = dist.make_iterator();
  first.get_next();
  auto second = dist.make_iterator();
  EXPECT_EQ(values_of(second.get_next()), (StepValues{{0}, {1}}));
  EXPECT_EQ(values_of(first.get_next()), (StepValues{{2}, {3}}));
}

}  // namespace
}  // namespace troupe::testing

namespace troupe::testing {
namespace {

TEST_F(InputTest, RangeForVisitsEveryStepOnce) {
  auto dist = distribute(3, data::Dataset::range(0, 10).batch(4));
  std::vector<StepValues> seen;
  for (const auto& step : dist) seen.push_back(values_of(step));
  EXPECT_EQ(seen, drain(dist));
  EXPECT_EQ(seen.size(), 3u);
}

TEST_F(InputTest, OneReplicaGetsEveryGlobalBatchWhole) {
  auto steps = drain(distribute(1, data::Dataset::range(0, 5).batch(2)));
  EXPECT_EQ(steps, (std::vector<StepValues>{{{0, 1}}, {{2, 3}}, {{4}}}));
}

TEST_F(InputTest, MultiComponentElementsGiveOnePerReplicaPerComponent) {
  auto x = Tensor::from_vector<float>({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto y = Tensor::from_vector<int64_t>({4}, {10, 11, 12, 13});
  auto dist = distribute(2, data::Dataset::from_tensor_slices({x, y}).batch(4));
  auto it = dist.make_iterator();
  auto step = it.get_next();
  ASSERT_EQ(step.size(), 2u);
  EXPECT_EQ(step[0].at(1).to_vector<float>(), (std::vector<float>{4, 5, 6, 7}));
  EXPECT_EQ(values_of(step, 1), (StepValues{{10, 11}, {12, 13}}));
  EXPECT_EQ(step[0].devices(), strategy->extended().worker_devices());
}

}  // namespace
}  // namespace troupe::testing

namespace troupe::testing {
namespace {

TEST_F(InputTest, GetNextInsideAnotherStrategysScopeIsAnError) {
  auto dist = distribute(2, data::Dataset::range(0, 4).batch(2));
  auto it = dist.make_iterator();
  {
    auto own = strategy->scope();
    EXPECT_EQ(values_of(it.get_next()), (StepValues{{0}, {1}}));
  }
  MirroredStrategy other(runtime.system(), {"CPU:0"});
  {
    auto scope = other.scope();
    EXPECT_ERROR_CONTAINS(it.get_next(),
                          "belongs to another strategy than the current MirroredStrategy");
  }
  EXPECT_EQ(values_of(it.get_next()), (StepValues{{2}, {3}}));
}

}  // namespace
}  // namespace troupe::testing
