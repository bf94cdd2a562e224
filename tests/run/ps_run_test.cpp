// `troupe run` of a parameter_server experiment (issue 12): an in-process cluster of ps shards
// and workers trains matrix factorisation from TFRecord ratings, async and sync, writes metrics
// and a checkpoint pulled from the shards; what it cannot do yet is refused by name.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "core/data/example_proto.hpp"
#include "core/data/tfrecord.hpp"
#include "experiment/checkpoint/checkpoint.hpp"
#include "experiment/experiment_file.hpp"
#include "tests/common/error_of.hpp"
#include "tests/run/run_test_util.hpp"

using namespace troupe;
using namespace troupe::testing;
namespace fs = std::filesystem;

namespace {

// 4000 ratings of 30 users x 20 items by hidden rank-2 factors, in one TFRecord file.
std::string write_ratings(const std::string& dir) {
  fs::create_directories(dir);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> x(-1.f, 1.f);
  std::vector<float> users(60), items(40);
  for (auto& v : users) v = x(rng);
  for (auto& v : items) v = x(rng);
  const std::string path = dir + "/ratings.tfrecord";
  data::TFRecordWriter writer(path);
  for (int n = 0; n < 4000; ++n) {
    int64_t u = int64_t(rng() % 30), i = int64_t(rng() % 20);
    data::Example example;
    example["ids"] = data::Feature::of_int64s({u, i});
    example["rating"] =
        data::Feature::of_floats({users[size_t(2 * u)] * items[size_t(2 * i)] +
                                  users[size_t(2 * u + 1)] * items[size_t(2 * i + 1)]});
    writer.write(data::encode_example(example));
  }
  writer.close();
  return path;
}

proto::Experiment ps_experiment(const std::string& data, const std::string& strategy_extra) {
  return experiment::parse_experiment(
      "name: ps-run\nseed: 1\nstrategy: {kind: parameter_server, num_ps: 2, workers: 2, "
      "partitioner: {kind: fixed, num_shards: 2}" +
      strategy_extra +
      "}\nmodel: {kind: embedding, num_users: 30, num_items: 20, embedding_dim: 4}\n"
      "data: {kind: tfrecord, files: [" +
      data +
      "], features: {ids: {dtype: int64, shape: [2]}, rating: {dtype: float32}}, label: rating, "
      "global_batch: 64, shuffle: true}\n"
      "optimizer: {kind: adagrad, learning_rate: 0.5}\n"
      "train: {steps: 150, log_every: 50, checkpoint_every: 100, checkpoint_dir: runs/ps}\n");
}

class PsRun : public ::testing::Test {
 protected:
  PsRun() : dir(fresh_dir("ps")) { data = write_ratings(dir + "/data"); }
  ~PsRun() override { fs::remove_all(dir); }
  std::string dir, data;
  Runtime runtime;
};

TEST_F(PsRun, AsyncTrainsMatrixFactorisationAndCheckpointsTheShards) {
  auto s = run(runtime, ps_experiment(data, ""), dir + "/async");
  EXPECT_EQ(s.last_step, 150);
  // Ratings have variance about 0.2; the mean loss of the last 50 steps falls far below it.
  EXPECT_LT(s.final_loss, 0.05);
  EXPECT_TRUE(fs::exists(s.metrics_csv));
  auto ckpt = checkpoint::read_checkpoint(s.checkpoint);
  EXPECT_EQ(ckpt.step, 150);
  EXPECT_EQ(ckpt.tensors.at("embedding/users").shape(), (Shape{30, 4}));
  EXPECT_EQ(ckpt.tensors.at("embedding/items/accumulator").shape(), (Shape{20, 4}));
  // Two workers, one update each per step.
  EXPECT_EQ(ckpt.tensors.at("optimizer/iterations").scalar<int64_t>(), 300);
}

TEST_F(PsRun, SyncAveragesBothWorkersPerUpdate) {
  auto s = run(runtime, ps_experiment(data, ", mode: sync"), dir + "/sync");
  EXPECT_EQ(s.last_step, 150);
  EXPECT_LT(s.final_loss, 0.05);
  auto ckpt = checkpoint::read_checkpoint(s.checkpoint);
  EXPECT_EQ(ckpt.tensors.at("optimizer/iterations").scalar<int64_t>(), 150);
}

TEST_F(PsRun, WhatItCannotDoYetIsRefusedByName) {
  auto e = ps_experiment(data, "");
  EXPECT_EQ(error_of([&] { run(runtime, e, dir + "/r", 0, /*resume=*/true); }),
            "--resume: parameter_server runs write checkpoints but cannot resume from them yet");
  auto odd = experiment::parse_experiment(
      "name: ps-odd\nstrategy: {kind: parameter_server, num_ps: 1, workers: 3}\n"
      "model: {kind: embedding, num_users: 30, num_items: 20, embedding_dim: 4}\n"
      "data: {kind: tfrecord, files: [" +
      data +
      "], features: {ids: {dtype: int64, shape: [2]}, rating: {dtype: float32}}, label: rating, "
      "global_batch: 64}\noptimizer: {kind: sgd, learning_rate: 0.1}\ntrain: {steps: 5}\n");
  EXPECT_EQ(error_of([&] { run(runtime, odd, dir + "/odd"); }),
            "data.global_batch 64 does not split evenly over strategy.workers 3");
  auto skip = e;
  skip.mutable_train()->set_on_nan("skip_step");
  EXPECT_EQ(error_of([&] { run(runtime, skip, dir + "/skip"); }),
            "train.on_nan: parameter_server runs stop at a non-finite loss; 'skip_step' is not "
            "supported for them yet");
  auto chunked = e;
  chunked.mutable_train()->set_steps_per_execution(4);
  EXPECT_EQ(error_of([&] { run(runtime, chunked, dir + "/chunked"); }),
            "train.steps_per_execution: parameter_server runs schedule one step per closure; "
            "remove it");
}

}  // namespace
