// Primary-backup replication of ps shards (issue 12 item 7, replication 2): every change to a
// shard's variables reaches its backup (the next shard, round-robin) before the client hears
// of it, and a client whose shard goes away sends its requests to the backup — the same step
// ids, so a step in flight during the failover is applied once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "coordinator/ps/cluster_coordinator.hpp"
#include "coordinator/ps/parameter_server_storage.hpp"
#include "coordinator/ps/parameter_server_strategy.hpp"
#include "in_process_cluster.hpp"
#include "tests/common/error_of.hpp"
#include "train/ps_trainer.hpp"

using namespace troupe;
using namespace troupe::testing;
using ::testing::HasSubstr;

namespace {

constexpr int64_t kUsers = 24, kItems = 24, kBatch = 16;

class PsReplication : public InProcessCluster {
 protected:
  std::vector<caf::actor> fresh_shards(int n) {
    std::vector<caf::actor> out;
    for (int i = 0; i < n; ++i)
      out.push_back(spawn_ps_shard(*sys_, {"ps:" + std::to_string(i), cpu_kernels()}));
    ps.insert(ps.end(), out.begin(), out.end());  // stopped with the fixture
    return out;
  }

  static ParameterServerStrategyOptions options(int64_t replication) {
    ParameterServerStrategyOptions o;
    o.partitioner = [](const Shape& shape, DType dtype) {
      return FixedShardsPartitioner(2)(shape, dtype);
    };
    o.replication = replication;
    return o;
  }

  static std::shared_ptr<const Model> model() {
    ModelConfig c;
    c.users = kUsers;
    c.items = kItems;
    c.dim = 4;
    c.seed = 3;
    return make_embedding_model(c);
  }

  // Random (user, item) pairs with random ratings: one worker draws them in a fixed order.
  static PerWorkerDataset batches(ClusterCoordinator& c) {
    return c.create_per_worker_dataset([](int worker) {
      auto rng = std::make_shared<std::mt19937>(100 + worker);
      return ElementFn([rng] {
        std::vector<int64_t> pairs;
        std::vector<float> labels;
        std::uniform_real_distribution<float> rating(-1.f, 1.f);
        for (int64_t r = 0; r < kBatch; ++r) {
          pairs.insert(pairs.end(), {int64_t((*rng)() % kUsers), int64_t((*rng)() % kItems)});
          labels.push_back(rating(*rng));
        }
        return std::vector<Tensor>{Tensor::from_vector<int64_t>({kBatch, 2}, pairs),
                                   Tensor::from_vector<float>({kBatch}, labels)};
      });
    });
  }

  static UpdateRule adagrad() {
    UpdateRule r;
    r.kind = OptimizerKind::adagrad;
    r.learning_rate = 0.3;
    return r;
  }

  void SetUp() override { start(0); }
};

TEST_F(PsReplication, ReplicationAboveNumPsIsRefused) {
  auto one = fresh_shards(1);
  EXPECT_EQ(error_of([&] { ParameterServerStrategy s(*sys_, one, options(2)); }),
            "ParameterServerStrategy: replication 2 needs at least as many ps tasks, the cluster "
            "has 1 (num_ps)");
  auto two = fresh_shards(2);
  EXPECT_EQ(error_of([&] { ParameterServerStrategy s(*sys_, two, options(3)); }),
            "ParameterServerStrategy: replication 3 is not supported (1: no backup, 2: a backup "
            "of every shard)");
  EXPECT_EQ(error_of([&] { ParameterServerStrategy s(*sys_, two, options(0)); }),
            "ParameterServerStrategy: replication 0 is not supported (1: no backup, 2: a backup "
            "of every shard)");
}

TEST_F(PsReplication, ThePrimaryCopiesEveryChangeToItsBackupBeforeItAcknowledges) {
  auto shards = fresh_shards(3);
  ParameterServerStrategy s(*sys_, shards, options(2));
  PsClient client(*sys_);
  auto w = ParameterServerStorage::create(s.client(), shards[2], 2, "w",
                                          Tensor::from_vector<float>({2}, {1.f, 2.f}));
  w->write(0, VariableWrite::add, {Tensor::from_vector<float>({2}, {0.5f, 0.5f})});
  w->set_step_id(7);
  w->apply_update(0, adagrad(), {}, Tensor{}, Tensor::from_vector<float>({2}, {1.f, -1.f}));
  // Acknowledged: ps:2's backup, ps:0, has the value, the slots and the applied step id.
  auto primary = client.save(shards[2], ps_save_msg{{"w"}});
  auto backup = client.save(shards[0], ps_save_msg{{"w"}});
  ASSERT_EQ(backup.variables.size(), 1u);
  EXPECT_TRUE(backup.variables[0].value.bitwise_equal(primary.variables[0].value));
  ASSERT_EQ(backup.variables[0].slots.size(), 1u);
  EXPECT_TRUE(backup.variables[0].slots[0].bitwise_equal(primary.variables[0].slots[0]));
  EXPECT_EQ(backup.variables[0].updates, 2u);  // the write and the optimizer step
  EXPECT_EQ(primary.variables[0].updates, 2u);
  EXPECT_EQ(backup.variables[0].applied_floor, primary.variables[0].applied_floor);
  EXPECT_EQ(backup.variables[0].applied_sparse, primary.variables[0].applied_sparse);
  // ps:1 is nobody's backup for 'w'.
  EXPECT_THAT(error_of([&] { client.read(shards[1], "w"); }), HasSubstr("'w'"));
}

// A worker process of a launched run attaches to shards its coordinator set up: its client
// only learns the backups (PsClient::learn_backups) and fails over as the coordinator's does.
TEST_F(PsReplication, AnAttachedClientLearnsTheBackupsAndFailsOverToThem) {
  auto shards = fresh_shards(3);
  ParameterServerStrategy coordinator(*sys_, shards, options(2));
  auto w = ParameterServerStorage::create(coordinator.client(), shards[2], 2, "w",
                                          Tensor::from_vector<float>({2}, {1.f, 2.f}));
  ParameterServerStrategyOptions attached_options = options(2);
  attached_options.attach = true;
  ParameterServerStrategy attached(*sys_, shards, attached_options);
  w->write(0, VariableWrite::add, {Tensor::from_vector<float>({2}, {0.5f, 0.5f})});
  caf::anon_send_exit(shards[2], caf::exit_reason::kill);
  // ps:2's backup is ps:0: the attached client reads 'w' there, written before the kill.
  Tensor value = attached.client()->read(shards[2], "w");
  EXPECT_TRUE(value.bitwise_equal(Tensor::from_vector<float>({2}, {1.5f, 2.5f})));
  EXPECT_EQ(attached.client()->failed_over(), 1u);
}

TEST_F(PsReplication, LearningBackupsOfFewerThanTwoShardsIsRefused) {
  PsClient client(*sys_);
  EXPECT_EQ(error_of([&] { client.learn_backups(fresh_shards(1)); }),
            "ps replication needs at least two ps shards (a backup on another one), got 1");
}

TEST_F(PsReplication, KilledPrimaryFailsOverToBackupAndNothingAcknowledgedIsLost) {
  // The reference: the same schedule (one worker, so one order of updates) without the kill.
  std::vector<Tensor> expected;
  {
    ParameterServerStrategy s(*sys_, fresh_shards(3), options(1));
    ClusterCoordinator c(*sys_, {1, 2, 1});
    PsTrainer trainer(s, c, model(), adagrad());
    auto data = batches(c);
    for (int i = 0; i < 200; ++i) trainer.schedule_step(data);
    c.join();
    expected = trainer.parameters();
  }
  auto shards = fresh_shards(3);
  ParameterServerStrategy s(*sys_, shards, options(2));
  ClusterCoordinator c(*sys_, {1, 2, 1});
  PsTrainer trainer(s, c, model(), adagrad());
  auto data = batches(c);
  for (int i = 0; i < 100; ++i) trainer.schedule_step(data);
  c.join();
  // ps:0 holds parts of both tables and of their accumulators; it dies while the next steps
  // are queued or in flight (two closures at a time at the worker).
  for (int i = 0; i < 100; ++i) trainer.schedule_step(data);
  caf::anon_send_exit(shards[0], caf::exit_reason::kill);
  c.join();
  EXPECT_EQ(s.client()->failed_over(), 1u);
  EXPECT_EQ(trainer.updates_applied(), 200);
  auto got = trainer.parameters();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(got[i].bitwise_equal(expected[i])) << "parameter " << i;
}

// Sync training (SyncReplicas, spec cluster-and-ps.md §2.11) losing a primary: the accumulator
// and token queue live with the coordinator, and the closure applying a step's mean retries the
// update on the backup under its step id, so the step is applied once, it reports the step
// applied and the next step's tokens are released: no worker waits on a token forever.
TEST_F(PsReplication, SyncTrainingOverAKilledPrimaryGoesOnAndAppliesEveryStepOnce) {
  PsTrainingOptions sync;
  sync.mode = PsTrainingMode::sync;
  sync.replicas_to_aggregate = 2;  // one worker offers two gradients per step, in one order
  std::vector<Tensor> expected;
  {
    ParameterServerStrategy s(*sys_, fresh_shards(3), options(1));
    ClusterCoordinator c(*sys_, {1, 2, 1});
    PsTrainer trainer(s, c, model(), adagrad(), sync);
    auto data = batches(c);
    for (int i = 0; i < 200; ++i) trainer.schedule_step(data);
    c.join();
    expected = trainer.parameters();
  }
  auto shards = fresh_shards(3);
  ParameterServerStrategy s(*sys_, shards, options(2));
  ClusterCoordinator c(*sys_, {1, 2, 1});
  PsTrainer trainer(s, c, model(), adagrad(), sync);
  auto data = batches(c);
  for (int i = 0; i < 100; ++i) trainer.schedule_step(data);
  c.join();
  for (int i = 0; i < 100; ++i) trainer.schedule_step(data);
  caf::anon_send_exit(shards[0], caf::exit_reason::kill);
  c.join();
  EXPECT_EQ(s.client()->failed_over(), 1u);
  const SyncReplicasStats stats = trainer.sync()->stats();
  EXPECT_EQ(stats.global_step, 100);  // the 200 worker steps scheduled, two per update
  EXPECT_EQ(stats.accepted, 0);
  EXPECT_EQ(stats.dropped, 0);
  EXPECT_EQ(trainer.updates_applied(), 100);
  auto got = trainer.parameters();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(got[i].bitwise_equal(expected[i])) << "parameter " << i;
}

TEST_F(PsReplication, APrimaryWhoseBackupWentAwayStillServesThenNamesItsOwnLoss) {
  auto shards = fresh_shards(2);
  ParameterServerStrategy s(*sys_, shards, options(2));
  auto w = ParameterServerStorage::create(s.client(), shards[0], 0, "w",
                                          Tensor::from_vector<float>({1}, {1.f}));
  caf::scoped_actor self{*sys_};
  self->monitor(shards[1]);
  caf::anon_send_exit(shards[1], caf::exit_reason::kill);
  self->receive([](caf::down_msg&) {});
  // The backup is gone: the primary acknowledges alone.
  w->write(0, VariableWrite::assign, {Tensor::from_vector<float>({1}, {5.f})});
  EXPECT_TRUE(w->read(0).bitwise_equal(Tensor::from_vector<float>({1}, {5.f})));
  // And with the primary gone too, nothing serves 'w': named, not hung.
  self->monitor(shards[0]);
  caf::anon_send_exit(shards[0], caf::exit_reason::kill);
  self->receive([](caf::down_msg&) {});
  EXPECT_THAT(error_of([&] { w->read(0); }), HasSubstr("serving variable 'w' went away"));
}

TEST_F(PsReplication, WithoutABackupAKilledShardStopsTheRunNamingShardTaskAndVariable) {
  auto shards = fresh_shards(2);
  auto o = options(1);
  o.shard_names = {"'ps:0' (/job:ps/task:0)", "'ps:1' (/job:ps/task:1)"};
  ParameterServerStrategy s(*sys_, shards, o);
  ClusterCoordinator c(*sys_, {1, 2, 1});
  PsTrainer trainer(s, c, model(), adagrad());
  auto data = batches(c);
  trainer.schedule_step(data);
  c.join();
  caf::scoped_actor self{*sys_};
  self->monitor(shards[0]);
  caf::anon_send_exit(shards[0], caf::exit_reason::kill);
  self->receive([](caf::down_msg&) {});
  trainer.schedule_step(data);
  const std::string error = error_of([&] { c.join(); });
  EXPECT_THAT(error, HasSubstr("ps shard 'ps:0' (/job:ps/task:0) serving "
                               "variable 'embedding/"));
  EXPECT_THAT(error, HasSubstr("went away: it was killed (kill)"));
}

}  // namespace
