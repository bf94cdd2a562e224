// Matrix factorisation trained with ParameterServerStrategy and a ClusterCoordinator in one
// process (issue 12's embedding model): 2 ps shards holding the two embedding tables, each split
// in two parts, 2 workers drawing from their own datasets; async and sync (SyncReplicas) to a
// loss threshold.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "coordinator/ps/cluster_coordinator.hpp"
#include "coordinator/ps/parameter_server_strategy.hpp"
#include "coordinator/ps/sharded_storage.hpp"
#include "in_process_cluster.hpp"
#include "tests/common/error_of.hpp"
#include "train/ps_trainer.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

constexpr int64_t kUsers = 24, kItems = 24, kBatch = 32;

// Ratings of a rank-2 ground truth: rating(u, i) = <true_u, true_i>.
class Ratings {
 public:
  Ratings() {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> x(-1.f, 1.f);
    for (auto& v : users_) v = x(rng);
    for (auto& v : items_) v = x(rng);
  }
  float rating(int64_t u, int64_t i) const {
    return users_[2 * u] * items_[2 * i] + users_[2 * u + 1] * items_[2 * i + 1];
  }
  // A batch of random (user, item) pairs from `rng`.
  std::vector<Tensor> batch(std::mt19937& rng) const {
    std::vector<int64_t> pairs;
    std::vector<float> labels;
    for (int64_t r = 0; r < kBatch; ++r) {
      int64_t u = int64_t(rng() % kUsers), i = int64_t(rng() % kItems);
      pairs.insert(pairs.end(), {u, i});
      labels.push_back(rating(u, i));
    }
    return {Tensor::from_vector<int64_t>({kBatch, 2}, pairs),
            Tensor::from_vector<float>({kBatch}, labels)};
  }
  // Every pair once.
  std::vector<Tensor> all() const {
    std::vector<int64_t> pairs;
    std::vector<float> labels;
    for (int64_t u = 0; u < kUsers; ++u)
      for (int64_t i = 0; i < kItems; ++i) {
        pairs.insert(pairs.end(), {u, i});
        labels.push_back(rating(u, i));
      }
    return {Tensor::from_vector<int64_t>({kUsers * kItems, 2}, pairs),
            Tensor::from_vector<float>({kUsers * kItems}, labels)};
  }

 private:
  float users_[2 * kUsers], items_[2 * kItems];
};

class PsTraining : public InProcessCluster {
 protected:
  void SetUp() override { start(2); }

  ParameterServerStrategyOptions split_in_two() {
    ParameterServerStrategyOptions o;
    o.partitioner = [](const Shape& shape, DType dtype) {
      return FixedShardsPartitioner(2)(shape, dtype);
    };
    return o;
  }

  std::shared_ptr<const Model> model() {
    ModelConfig c;
    c.users = kUsers;
    c.items = kItems;
    c.dim = 4;
    c.seed = 3;
    return make_embedding_model(c);
  }

  PerWorkerDataset random_batches(ClusterCoordinator& c) {
    return c.create_per_worker_dataset([this](int worker) {
      auto rng = std::make_shared<std::mt19937>(100 + worker);
      return ElementFn([this, rng] { return ratings.batch(*rng); });
    });
  }

  double eval_loss(const PsTrainer& trainer, const Model& m) {
    auto data = ratings.all();
    auto kernels = default_kernels();
    Ops ops(*kernels);
    auto out = m.compute(ops, trainer.parameters(), data[0], data[1], data[0].shape()[0], false);
    return out.stats.loss_sum / double(out.stats.rows);
  }

  // Schedules `steps` steps, joins, and returns the mean training loss of the last 20.
  static double train(PsTrainer& trainer, ClusterCoordinator& c, const PerWorkerDataset& data,
                      int steps) {
    std::vector<RemoteValue> values;
    for (int i = 0; i < steps; ++i) values.push_back(trainer.schedule_step(data));
    c.join();
    double loss = 0, rows = 0;
    for (size_t i = values.size() - 20; i < values.size(); ++i) {
      auto out = values[i].fetch();
      loss += out.at(0).scalar<double>();
      rows += out.at(1).scalar<double>();
    }
    return loss / rows;
  }

  Ratings ratings;
};

TEST_F(PsTraining, MatrixFactorisationAsyncReachesTheLossThreshold) {
  ParameterServerStrategy s(*sys_, ps, split_in_two());
  ClusterCoordinator c(*sys_, {2, 2, 1});
  auto m = model();
  UpdateRule adagrad;
  adagrad.kind = OptimizerKind::adagrad;
  adagrad.learning_rate = 0.5;
  PsTrainer trainer(s, c, m, adagrad);
  // Both tables (and their accumulators) are split over the two shards.
  auto& users = dynamic_cast<ShardedStorage&>(trainer.variables()[0].storage()).sharded();
  EXPECT_EQ(users.tasks(), (std::vector<int64_t>{0, 1}));
  const double before = eval_loss(trainer, *m);
  auto data = random_batches(c);
  const double last = train(trainer, c, data, 400);
  const double after = eval_loss(trainer, *m);
  EXPECT_EQ(trainer.updates_applied(), 400);
  EXPECT_LT(after, 0.05) << "before " << before << ", last training batches " << last;
  EXPECT_LT(after, 0.2 * before);
}

TEST_F(PsTraining, MatrixFactorisationSyncAveragesTwoReplicasPerStep) {
  ParameterServerStrategy s(*sys_, ps, split_in_two());
  ClusterCoordinator c(*sys_, {2, 2, 1});
  auto m = model();
  UpdateRule adagrad;
  adagrad.kind = OptimizerKind::adagrad;
  adagrad.learning_rate = 0.5;
  PsTrainingOptions sync;
  sync.mode = PsTrainingMode::sync;
  sync.replicas_to_aggregate = 2;
  PsTrainer trainer(s, c, m, adagrad, sync);
  const double before = eval_loss(trainer, *m);
  auto data = random_batches(c);
  const double last = train(trainer, c, data, 400);
  const double after = eval_loss(trainer, *m);
  // total_num_replicas = R: no stale gradients, one update per two offers.
  ASSERT_NE(trainer.sync(), nullptr);
  auto stats = trainer.sync()->stats();
  EXPECT_EQ(stats.dropped, 0);
  EXPECT_EQ(stats.global_step, 200);
  EXPECT_EQ(trainer.updates_applied(), 200);
  EXPECT_LT(after, 0.05) << "before " << before << ", last training batches " << last;
  EXPECT_LT(after, 0.2 * before);
}

TEST_F(PsTraining, ANonFiniteLossStopsTrainingBeforeAnythingIsApplied) {
  ParameterServerStrategy s(*sys_, ps);
  ClusterCoordinator c(*sys_, {1, 1, 1});
  auto m = model();
  PsTrainer trainer(s, c, m, {});
  auto before = trainer.parameters();
  PerWorkerDataset nan_labels = c.create_per_worker_dataset([](int) {
    return ElementFn([] {
      return std::vector<Tensor>{Tensor::from_vector<int64_t>({1, 2}, {0, 0}),
                                 floats({1}, {std::nanf("")})};
    });
  });
  RemoteValue step = trainer.schedule_step(nan_labels);
  EXPECT_EQ(error_of([&] { c.join(); }),
            "step 1 on worker 0: the loss is NaN; nothing was applied");
  EXPECT_EQ(trainer.updates_applied(), 0);
  EXPECT_TRUE(trainer.parameters()[0].bitwise_equal(before[0]));
}

TEST_F(PsTraining, AStepNeedsADatasetOfThisCoordinator) {
  ParameterServerStrategy s(*sys_, ps);
  ClusterCoordinator c(*sys_, {1, 1, 1});
  PsTrainer trainer(s, c, model(), {});
  RemoteValue bad = c.schedule(
      "train_step", {Tensor::from_vector<int64_t>({1}, {7}), Tensor::from_scalar<int64_t>(0)});
  EXPECT_EQ(error_of([&] { c.join(); }),
            "per-worker dataset 7 was not created by this coordinator");
  c.schedule("train_step", {});
  EXPECT_EQ(error_of([&] { c.join(); }),
            "step 'train_step' takes a per-worker dataset id and the run's first update count");
  c.schedule("train_step", {Tensor::from_vector<int64_t>({1}, {0})});
  EXPECT_EQ(error_of([&] { c.join(); }),
            "step 'train_step' takes a per-worker dataset id and the run's first update count");
}

TEST_F(PsTraining, ModeAndSyncSettingsAreChecked) {
  ParameterServerStrategy s(*sys_, ps);
  ClusterCoordinator c(*sys_, {2, 1, 1});
  PsTrainingOptions o;
  o.replicas_to_aggregate = 2;
  EXPECT_EQ(error_of([&] { PsTrainer t(s, c, model(), {}, o); }),
            "replicas_to_aggregate and total_num_replicas apply to sync training only (mode is "
            "async)");
  EXPECT_EQ(error_of([] { parse_ps_training_mode("semi"); }),
            "unknown parameter-server training mode 'semi' (async, sync)");
}

}  // namespace
