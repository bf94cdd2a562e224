// data.prefetch and data.distribute in `troupe run`: what the runner's input is built from, and
// that training results do not depend on the read-ahead, nor (with one input worker) on who
// batches.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>

#include "experiment/checkpoint/checkpoint.hpp"
#include "experiment/experiment_file.hpp"
#include "experiment/plan.hpp"
#include "experiment/run/experiment_input.hpp"
#include "experiment/run/experiment_setup.hpp"
#include "tests/run/run_test_util.hpp"

using namespace troupe;
using troupe::testing::fresh_dir;
using troupe::testing::run;

namespace {

// `data_extra` is appended to the data section.
proto::Experiment input_experiment(int replicas, const std::string& data_extra) {
  std::ostringstream yaml;
  yaml << "name: input\nseed: 5\nstrategy: {kind: mirrored, devices: [";
  for (int i = 0; i < replicas; ++i) yaml << (i ? ", " : "") << "CPU:" << i;
  yaml << "]}\n"
       << "model: {kind: mlp, input_dim: 16, hidden: [12], classes: 3}\n"
       << "data: {kind: synthetic_classification, examples: 400, global_batch: 32" << data_extra
       << "}\n"
       << "optimizer: {kind: adam, learning_rate: 0.01}\n"
       << "train: {steps: 30, log_every: 10}\n";
  return experiment::parse_experiment(yaml.str(), "input.yaml");
}

std::map<std::string, Tensor> trained(Runtime& runtime, const proto::Experiment& e,
                                      const std::string& name) {
  auto dir = fresh_dir(name);
  auto tensors = checkpoint::read_checkpoint(run(runtime, e, dir).checkpoint).tensors;
  std::filesystem::remove_all(dir);
  return tensors;
}

void expect_bitwise_equal(const std::map<std::string, Tensor>& a,
                          const std::map<std::string, Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) EXPECT_TRUE(t.bitwise_equal(b.at(name))) << name;
}

// Bytes of the iterator's saved state once its input worker has stopped reading ahead: the
// state holds every step produced but not yet handed out.
size_t settled_state_bytes(DistributedIterator& iterator) {
  size_t last = 0;
  int stable = 0;
  for (int i = 0; i < 500 && stable < 5; ++i) {
    size_t now = iterator.save().size();
    stable = now == last ? stable + 1 : 0;
    last = now;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return last;
}

}  // namespace

TEST(InputKeys, PrefetchSetsTheStepsEachInputWorkerProducesAhead) {
  auto e = input_experiment(2, ", shuffle: true, prefetch: 4");
  EXPECT_EQ(make_input_options(e).experimental_per_replica_buffer_size, 4);
  EXPECT_EQ(experiment::make_plan(e).input_workers.at(0).prefetch, 4);
  EXPECT_NE(experiment::plan_to_json(experiment::make_plan(e)).find("\"prefetch\":4"),
            std::string::npos);
  EXPECT_EQ(
      make_input_options(input_experiment(2, ", prefetch: 1")).experimental_per_replica_buffer_size,
      1);
  // 0: off; not given: two strategy.run chunks (2 x train.steps_per_execution, default 8).
  EXPECT_EQ(
      make_input_options(input_experiment(2, ", prefetch: 0")).experimental_per_replica_buffer_size,
      0);
  EXPECT_EQ(input_experiment(2, "").data().prefetch(), 16);
}

// The default read-ahead holds at most 64 MiB of batches (and at least one batch).
TEST(InputKeys, DefaultPrefetchIsCappedByTheBatchesBytes) {
  auto with_batch = [](int64_t batch) {
    return experiment::parse_experiment(
        "name: big\nstrategy: {kind: mirrored, devices: [CPU:0]}\n"
        "model: {kind: mlp, input_dim: 784, hidden: [8], classes: 10}\n"
        "data: {kind: synthetic_classification, examples: 100000, global_batch: " +
            std::to_string(batch) +
            "}\noptimizer: {kind: sgd, learning_rate: 0.1}\ntrain: {steps: 10, "
            "steps_per_execution: 4}\n",
        "big.yaml");
  };
  EXPECT_EQ(with_batch(256).data().prefetch(), 8);    // 2 x 4 steps of 0.8 MB
  EXPECT_EQ(with_batch(8192).data().prefetch(), 2);   // 25.8 MB batches: 2 fit in 64 MiB
  EXPECT_EQ(with_batch(65536).data().prefetch(), 1);  // one 206 MB batch: still read ahead

  // Really produced ahead, before any step asks: 3 more global batches of 32 x (16 float32
  // features + an int64 label) wait in the input worker with prefetch 4 than with 1. (No
  // shuffle: its buffer would hold the same examples before they were read ahead.)
  Runtime runtime;
  std::map<int64_t, size_t> bytes;
  for (int64_t prefetch : {1, 4}) {
    auto ex = input_experiment(2, ", prefetch: " + std::to_string(prefetch));
    auto strategy = make_experiment_strategy(runtime.system(), ex);
    auto input = make_experiment_input(runtime.system(), *strategy, ex);
    auto iterator = input.dataset.make_iterator();
    bytes[prefetch] = settled_state_bytes(iterator);
  }
  const size_t batch_bytes = 32 * (16 * 4 + 8);
  EXPECT_GE(bytes[4], bytes[1] + 3 * batch_bytes) << bytes[1] << " vs " << bytes[4];
}

TEST(InputKeys, PrefetchDoesNotChangeTrainingResults) {
  Runtime runtime;
  const auto with_one = trained(runtime, input_experiment(2, ", shuffle: true, prefetch: 1"), "p1");
  expect_bitwise_equal(with_one,
                       trained(runtime, input_experiment(2, ", shuffle: true, prefetch: 4"), "p4"));
  expect_bitwise_equal(with_one,
                       trained(runtime, input_experiment(2, ", shuffle: true, prefetch: 0"), "p0"));
  expect_bitwise_equal(with_one, trained(runtime, input_experiment(2, ", shuffle: true"), "p16"));
}

TEST(InputKeys, FilledBatchesAndTheFirstEpochCacheDoNotChangeTrainingResults) {
  // Without shuffle the run's batches are filled in place and, from the second epoch on (400
  // examples, 30 steps of 32), copied from the first epoch's cache. A shuffle with a buffer of
  // one keeps the order but passes elements one by one, so batch() stacks one tensor per
  // example as before: the trained weights must be the same bits.
  Runtime runtime;
  expect_bitwise_equal(
      trained(runtime, input_experiment(2, ""), "filled"),
      trained(runtime, input_experiment(2, ", shuffle: true, shuffle_buffer: 1"), "stacked"));
}

TEST(InputKeys, FromFunctionCallsTheDatasetFunctionOncePerInputWorker) {
  Runtime runtime;
  auto e = input_experiment(4, ", distribute: from_function");
  auto strategy = make_experiment_strategy(runtime.system(), e);
  InputOptions two_workers;
  two_workers.num_input_workers = 2;
  auto input = make_experiment_input(runtime.system(), *strategy, e, two_workers);
  EXPECT_EQ(input.contexts, (std::vector<data::InputContext>{data::InputContext(2, 0, 4),
                                                             data::InputContext(2, 1, 4)}));
  EXPECT_EQ(input.dataset.num_input_workers(), 2);
  // Each replica's batch is global / replicas, and the two workers read different examples.
  auto iterator = input.dataset.make_iterator();
  auto step = iterator.get_next();
  auto features = step.at(0).values();
  ASSERT_EQ(features.size(), 4u);
  for (const auto& t : features) EXPECT_EQ(t.shape(), (Shape{8, 16}));
  EXPECT_FALSE(features[0].bitwise_equal(features[2]));

  // The runner's own input (one worker in one process) calls it once.
  auto own = make_experiment_input(runtime.system(), *strategy, e);
  EXPECT_EQ(own.contexts, (std::vector<data::InputContext>{data::InputContext(1, 0, 4)}));
  EXPECT_TRUE(
      make_experiment_input(runtime.system(), *strategy, input_experiment(4, "")).contexts.empty());
}

TEST(InputKeys, FromFunctionTrainsLikeTheDistributedDatasetWithOneInputWorker) {
  // One worker batching per replica hands replica r rows [r b, (r + 1) b) of each global batch:
  // the rows experimental_distribute_dataset gives it, so training is bitwise the same.
  Runtime runtime;
  auto dir = fresh_dir("from-function");
  auto s = run(runtime, input_experiment(2, ", shuffle: true, distribute: from_function"), dir);
  EXPECT_EQ(s.last_step, 30);
  EXPECT_GT(s.final_accuracy, 0.5);
  auto from_function = checkpoint::read_checkpoint(s.checkpoint).tensors;
  std::filesystem::remove_all(dir);
  expect_bitwise_equal(from_function,
                       trained(runtime, input_experiment(2, ", shuffle: true"), "dataset"));
}
