// `troupe run --resume` of a sync parameter_server run (spec cluster-and-ps.md §2.11): the
// checkpoint is taken after the runner joins every closure, at a global-step boundary of the
// SyncReplicas accumulator (no gradient pending, no token held), so the global step alone
// restores its token queue; with the variables, slots, update count and each worker's input
// position, the resumed run continues bitwise where the uninterrupted one went.
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

// `workers` workers over 2 ps tasks; `strategy_extra` adds to the strategy (the mode).
proto::Experiment experiment(const std::string& data, int workers,
                             const std::string& strategy_extra, int checkpoint_every = 100) {
  return experiment::parse_experiment(
      "name: ps-sync-resume\nseed: 1\nstrategy: {kind: parameter_server, num_ps: 2, workers: " +
      std::to_string(workers) + ", partitioner: {kind: fixed, num_shards: 2}" + strategy_extra +
      "}\nmodel: {kind: embedding, num_users: 30, num_items: 20, embedding_dim: 4}\n"
      "data: {kind: tfrecord, files: [" +
      data +
      "], features: {ids: {dtype: int64, shape: [2]}, rating: {dtype: float32}}, label: rating, "
      "global_batch: 64, shuffle: true}\n"
      "optimizer: {kind: adagrad, learning_rate: 0.5}\n"
      "train: {steps: 150, log_every: 50, checkpoint_every: " +
      std::to_string(checkpoint_every) + ", keep: 10, checkpoint_dir: runs/ps}\n");
}

// One worker aggregating two of its own gradients per update: one order of offers, so that a
// resumed run can equal an uninterrupted one bitwise (two workers race for a step's tokens).
proto::Experiment one_worker_sync(const std::string& data) {
  return experiment(data, 1, ", mode: sync, replicas_to_aggregate: 2");
}

// Runs `e` in `dir` with --resume and returns its summary and what it printed.
std::pair<RunSummary, std::string> resume(Runtime& runtime, const proto::Experiment& e,
                                          const std::string& dir, int64_t steps = 0) {
  RunOptions o;
  o.run_dir = dir;
  o.resume = true;
  o.steps = steps;
  o.out = std::tmpfile();
  auto s = run_experiment(runtime.system(), e, o);
  std::rewind(o.out);
  std::string printed;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, o.out)) printed.append(buf, n);
  std::fclose(o.out);
  return {s, printed};
}

// The run died after its last step (its last checkpoint is the one before): removes the newest
// checkpoint, as if it had never been written.
void lose_checkpoint(const std::string& prefix) {
  const fs::path dir = fs::path(prefix).parent_path();
  const std::string name = fs::path(prefix).filename().string();
  fs::remove(dir / "checkpoint");
  for (auto& f : fs::directory_iterator(dir))
    if (f.path().filename().string().rfind(name + ".", 0) == 0) fs::remove(f.path());
}

class PsSyncResume : public ::testing::Test {
 protected:
  PsSyncResume() : dir(fresh_dir("ps-sync")) { data = write_ratings(dir + "/data"); }
  ~PsSyncResume() override { fs::remove_all(dir); }
  std::string dir, data;
  Runtime runtime;
};

TEST_F(PsSyncResume, AResumedSyncRunEndsBitwiseEqualToAnUninterruptedOne) {
  auto e = one_worker_sync(data);
  auto whole = checkpoint::read_checkpoint(run(runtime, e, dir + "/whole").checkpoint);
  auto died = run(runtime, e, dir + "/died");
  lose_checkpoint(died.checkpoint);
  auto [s, printed] = resume(runtime, e, dir + "/died");
  EXPECT_NE(printed.find("resumed at step 100 of the checkpoint " + dir +
                         "/died/ckpt-100; 50 step(s) after it were lost"),
            std::string::npos)
      << printed;
  // 100 worker steps, two gradients per update: global step 50.
  EXPECT_NE(printed.find("sync: the token queue restarts at global step 50"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find("mode sync (global step 75), 75 update(s) applied"), std::string::npos)
      << printed;
  EXPECT_EQ(s.first_step, 100);
  EXPECT_EQ(s.last_step, 150);
  auto resumed = checkpoint::read_checkpoint(s.checkpoint);
  EXPECT_EQ(resumed.blobs.at("ps_sync"), "75,0");
  EXPECT_EQ(whole.blobs.at("ps_sync"), "75,0");
  EXPECT_EQ(resumed.blobs.at("ps_worker_batches"), whole.blobs.at("ps_worker_batches"));
  ASSERT_EQ(resumed.tensors.size(), whole.tensors.size());
  for (auto& [name, t] : whole.tensors)
    EXPECT_TRUE(resumed.tensors.at(name).bitwise_equal(t)) << name;
  EXPECT_EQ(resumed.tensors.at("optimizer/iterations").scalar<int64_t>(), 75);
}

// The boundary the resume relies on: every checkpoint of a sync run whose workers' steps per
// checkpoint window are a multiple of replicas_to_aggregate holds no pending gradient, and its
// global step is the updates applied. Two workers race for the tokens here.
TEST_F(PsSyncResume, SyncCheckpointsAreTakenAtAGlobalStepBoundary) {
  auto e = experiment(data, 2, ", mode: sync", /*checkpoint_every=*/50);
  auto s = run(runtime, e, dir + "/two");
  for (int step : {50, 100, 150}) {
    auto ckpt = checkpoint::read_checkpoint(dir + "/two/ckpt-" + std::to_string(step));
    // Two workers, replicas_to_aggregate 2: one update per step of the run.
    EXPECT_EQ(ckpt.blobs.at("ps_sync"), std::to_string(step) + ",0") << step;
    EXPECT_EQ(ckpt.tensors.at("optimizer/iterations").scalar<int64_t>(), step) << step;
  }
  // A run of two workers resumes too (not bitwise: which worker's gradient joins which update
  // depends on who takes a token first).
  lose_checkpoint(s.checkpoint);
  auto [resumed, printed] = resume(runtime, e, dir + "/two");
  EXPECT_EQ(resumed.last_step, 150);
  EXPECT_NE(printed.find("sync: the token queue restarts at global step 100"), std::string::npos)
      << printed;
  EXPECT_EQ(checkpoint::read_checkpoint(resumed.checkpoint).blobs.at("ps_sync"), "150,0");
  EXPECT_LT(resumed.final_loss, 0.05);
}

TEST_F(PsSyncResume, ACheckpointWithAPendingGradientIsRefusedNamingIt) {
  // 25 worker steps of one worker, two gradients per update: 12 updates and one gradient
  // accumulated for global step 12.
  auto e = one_worker_sync(data);
  auto first = run(runtime, e, dir + "/odd", 25);
  EXPECT_EQ(checkpoint::read_checkpoint(first.checkpoint).blobs.at("ps_sync"), "12,1");
  EXPECT_EQ(error_of([&] { resume(runtime, e, dir + "/odd"); }),
            "--resume: checkpoint '" + first.checkpoint +
                "' was taken with 1 gradient(s) of global step 12 accumulated but not applied "
                "(replicas_to_aggregate 2 does not divide the worker steps between "
                "checkpoints): it cannot resume exactly");
}

TEST_F(PsSyncResume, ACheckpointOfTheOtherModeIsRefusedNamingIt) {
  auto sync = one_worker_sync(data);
  auto async = experiment(data, 1, "");
  auto s = run(runtime, sync, dir + "/sync", 20);
  EXPECT_EQ(error_of([&] { resume(runtime, async, dir + "/sync"); }),
            "--resume: checkpoint '" + s.checkpoint +
                "' was written by a sync parameter_server run (at global step 10); this run is "
                "async (strategy.mode): resume it in sync mode");
  auto a = run(runtime, async, dir + "/async", 20);
  EXPECT_EQ(error_of([&] { resume(runtime, sync, dir + "/async"); }),
            "--resume: checkpoint '" + a.checkpoint +
                "' was written by an async parameter_server run; this run is sync "
                "(strategy.mode): resume it in async mode");
  // Nothing was trained or written by the refused runs.
  EXPECT_EQ(checkpoint::latest_checkpoint(dir + "/sync").value_or(""), s.checkpoint);
  EXPECT_EQ(checkpoint::latest_checkpoint(dir + "/async").value_or(""), a.checkpoint);
}

TEST_F(PsSyncResume, BackupWorkersAreRefusedByName) {
  auto backups =
      experiment(data, 2, ", mode: sync, replicas_to_aggregate: 1, total_num_replicas: 2");
  EXPECT_EQ(error_of([&] { resume(runtime, backups, dir + "/backups"); }),
            "--resume: a sync parameter_server run with backup workers "
            "(strategy.total_num_replicas 2 above replicas_to_aggregate 1) cannot resume: the "
            "tokens of earlier steps its stale gradients leave in the queue are not "
            "checkpointed");
}

}  // namespace
