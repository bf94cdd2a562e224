// `troupe run` of a parameter_server experiment (issue 12): an in-process cluster of ps shards
// and workers trains matrix factorisation from TFRecord ratings, async and sync, writes metrics
// and a checkpoint pulled from the shards; what it cannot do yet is refused by name.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include <caf/all.hpp>

#include "actors/ps_shard.hpp"
#include "core/data/example_proto.hpp"
#include "core/data/tfrecord.hpp"
#include "experiment/checkpoint/checkpoint.hpp"
#include "experiment/experiment_file.hpp"
#include "experiment/run/ps_experiment_runner.hpp"
#include "experiment/run/ps_worker_host.hpp"
#include "kernels/registry.hpp"
#include "tests/common/error_of.hpp"
#include "tests/common/hidden_factor_ratings.hpp"
#include "tests/run/run_test_util.hpp"

using namespace troupe;
using namespace troupe::testing;
namespace fs = std::filesystem;

namespace {

// 4000 ratings of 30 users x 20 items by hidden rank-2 factors, in one TFRecord file.
std::string write_ratings(const std::string& dir) {
  fs::create_directories(dir);
  const std::string path = dir + "/ratings.tfrecord";
  data::TFRecordWriter writer(path);
  hidden_factor_ratings([&](int, const std::string& record) { writer.write(record); });
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

RunOptions options_with(RunOptions options, std::shared_ptr<const PsRemoteCluster> cluster) {
  options.ps_cluster = std::move(cluster);
  return options;
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
            "--resume: no checkpoint in '" + dir + "/r' to resume from");
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

// A worker process's host checks its part of the cluster before serving steps; so does a
// coordinator given a cluster of another shape.
TEST_F(PsRun, AWorkerHostOrClusterOfAnotherShapeIsRefusedNamingBoth) {
  auto kernels = std::make_shared<const KernelRegistry>(make_cpu_registry());
  std::vector<caf::actor> shards{spawn_ps_shard(runtime.system(), {"ps:0", kernels}),
                                 spawn_ps_shard(runtime.system(), {"ps:1", kernels})};
  auto e = ps_experiment(data, "");
  EXPECT_EQ(error_of([&] { PsWorkerHost h(runtime.system(), e, 0, {shards[0]}); }),
            "strategy.num_ps is 2, but 1 ps shard(s) were connected");
  EXPECT_EQ(error_of([&] { PsWorkerHost h(runtime.system(), e, 2, shards); }),
            "worker 2 is not below strategy.workers 2");
  auto odd = e;
  odd.mutable_data()->set_global_batch(63);
  EXPECT_EQ(error_of([&] { PsWorkerHost h(runtime.system(), odd, 1, shards); }),
            "data.global_batch 63 does not split evenly over strategy.workers 2");
  RunOptions options;
  options.run_dir = dir + "/cluster";
  options.out = stderr;
  auto cluster = std::make_shared<PsRemoteCluster>();
  cluster->shards = shards;
  EXPECT_EQ(
      error_of([&] { run_ps_experiment(runtime.system(), e, options_with(options, cluster)); }),
      "strategy.num_ps 2 and strategy.workers 2 do not match the cluster's 2 ps task(s) "
      "and 0 worker(s)");
  for (auto& shard : shards) caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
}

// One worker (one order of updates), so that a resumed run can equal an uninterrupted one.
proto::Experiment one_worker(const std::string& data, int num_ps, int shards) {
  auto e = ps_experiment(data, "");
  auto* ps = e.mutable_strategy()->mutable_parameter_server();
  ps->set_num_ps(num_ps);
  ps->set_workers(1);
  if (shards > 1)
    ps->mutable_partitioner()->set_num_shards(shards);
  else
    ps->clear_partitioner();
  return e;
}

// Runs `e` in `dir` with --resume and returns its summary and what it printed.
std::pair<RunSummary, std::string> resume(Runtime& runtime, const proto::Experiment& e,
                                          const std::string& dir) {
  RunOptions o;
  o.run_dir = dir;
  o.resume = true;
  o.out = std::tmpfile();
  auto s = run_experiment(runtime.system(), e, o);
  std::rewind(o.out);
  std::string printed;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, o.out)) printed.append(buf, n);
  std::fclose(o.out);
  return {s, printed};
}

// The run died after step 150 (its last checkpoint is the one of step 100): removes the
// newer checkpoint, as if it had never been written.
void lose_checkpoint(const std::string& prefix) {
  const fs::path dir = fs::path(prefix).parent_path();
  const std::string name = fs::path(prefix).filename().string();
  fs::remove(dir / "checkpoint");
  for (auto& f : fs::directory_iterator(dir))
    if (f.path().filename().string().rfind(name + ".", 0) == 0) fs::remove(f.path());
}

TEST_F(PsRun, ResumeRestoresVariablesSlotsAndInputAndReportsTheLostSteps) {
  auto e = one_worker(data, 2, 2);
  auto whole = checkpoint::read_checkpoint(run(runtime, e, dir + "/whole").checkpoint);
  auto died = run(runtime, e, dir + "/died");
  lose_checkpoint(died.checkpoint);
  auto [s, printed] = resume(runtime, e, dir + "/died");
  EXPECT_NE(printed.find("resumed at step 100 of the checkpoint " + dir +
                         "/died/ckpt-100; 50 step(s) after it were lost"),
            std::string::npos)
      << printed;
  EXPECT_EQ(s.first_step, 100);
  EXPECT_EQ(s.last_step, 150);
  auto resumed = checkpoint::read_checkpoint(s.checkpoint);
  ASSERT_EQ(resumed.tensors.size(), whole.tensors.size());
  for (auto& [name, t] : whole.tensors)
    EXPECT_TRUE(resumed.tensors.at(name).bitwise_equal(t)) << name;
}

TEST_F(PsRun, ResumeReshardsIntoAnotherNumberOfPsTasks) {
  // Written by 4 ps tasks (4 parts a table), resumed by 1, 2 and 3; written by 1, resumed by 4.
  const std::vector<std::pair<std::pair<int, int>, std::pair<int, int>>> cases = {
      {{4, 4}, {1, 1}}, {{4, 4}, {2, 2}}, {{4, 4}, {3, 3}}, {{1, 1}, {4, 4}}};
  auto whole =
      checkpoint::read_checkpoint(run(runtime, one_worker(data, 1, 1), dir + "/whole").checkpoint);
  int n = 0;
  for (auto& [from, to] : cases) {
    const std::string d = dir + "/reshard" + std::to_string(n++);
    auto died = run(runtime, one_worker(data, from.first, from.second), d);
    lose_checkpoint(died.checkpoint);
    auto [s, printed] = resume(runtime, one_worker(data, to.first, to.second), d);
    auto resumed = checkpoint::read_checkpoint(s.checkpoint);
    for (auto& [name, t] : whole.tensors) {
      const Tensor& r = resumed.tensors.at(name);
      ASSERT_EQ(r.shape(), t.shape()) << name;
      if (t.dtype() != DType::float32) {
        EXPECT_TRUE(r.bitwise_equal(t)) << name;
        continue;
      }
      // The optimizer is elementwise, so the parts do not change the arithmetic.
      for (int64_t i = 0; i < t.num_elements(); ++i)
        ASSERT_NEAR(r.data<float>()[i], t.data<float>()[i], 1e-6)
            << name << "[" << i << "], " << from.first << " -> " << to.first << " ps tasks";
    }
  }
}

TEST_F(PsRun, ResumeOfACheckpointOfAnotherWorkerCountIsRefusedNamingIt) {
  auto e = one_worker(data, 2, 2);
  auto first = run(runtime, e, dir + "/w");
  auto two = ps_experiment(data, "");
  EXPECT_EQ(error_of([&] { resume(runtime, two, dir + "/w"); }),
            "checkpoint '" + first.checkpoint +
                "' was written by 1 worker(s), this run has 2 (strategy.workers): each worker "
                "reads its own shard of the data");
}

TEST_F(PsRun, ReplicationTwoTrainsToTheSameWeightsAsReplicationOne) {
  auto one = one_worker(data, 2, 2);
  auto two = one;
  two.mutable_strategy()->mutable_parameter_server()->set_replication(2);
  auto a = checkpoint::read_checkpoint(run(runtime, one, dir + "/one").checkpoint);
  auto b = checkpoint::read_checkpoint(run(runtime, two, dir + "/two").checkpoint);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (auto& [name, t] : a.tensors) EXPECT_TRUE(b.tensors.at(name).bitwise_equal(t)) << name;
}

}  // namespace
