// Training on MirroredStrategy: 1 vs N replica equivalence (the acceptance test),
// convergence on synthetic data, metrics as SyncOnRead variables, the registry.
#include <cmath>

#include "core/data/synthetic.hpp"
#include "tests/coordinator/fixture.hpp"
#include "train/registry.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

class Training : public StrategyTest {};

// Parameters after `steps` SGD steps of `model` on `replicas` replicas over fixed global batches.
std::vector<Tensor> train_params(Runtime& runtime, int replicas, const ModelRegistry& registry,
                                 const std::string& kind, const ModelConfig& config,
                                 const std::vector<std::pair<Tensor, Tensor>>& batches,
                                 OptimizerConfig opt, ApplyPath path = ApplyPath::all_reduce) {
  std::vector<std::string> devices;
  for (int i = 0; i < replicas; ++i) devices.push_back("CPU:" + std::to_string(i));
  MirroredStrategy s(runtime.system(), devices);
  auto scope = s.scope();
  Trainer trainer(s, registry.create_model(kind, config), opt, path);
  for (auto& [x, y] : batches) trainer.train_step(trainer.split_batch(x), trainer.split_batch(y));
  std::vector<Tensor> out;
  for (auto& p : trainer.parameters()) out.push_back(p.clone());
  return out;
}

double max_relative_difference(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  double worst = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    auto x = a[k].to_vector<float>(), y = b[k].to_vector<float>();
    for (size_t i = 0; i < x.size(); ++i)
      worst =
          std::max(worst, std::abs(double(x[i]) - y[i]) / std::max(1e-3, std::abs(double(y[i]))));
  }
  return worst;
}

std::vector<std::pair<Tensor, Tensor>> regression_batches(int count, int64_t batch, int64_t dim) {
  std::vector<std::pair<Tensor, Tensor>> batches;
  Tensor w = Tensor::random_normal({dim, 1}, 99);
  auto kernels = default_kernels();
  Ops ops(*kernels);
  for (int i = 0; i < count; ++i) {
    Tensor x = Tensor::random_normal({batch, dim}, uint64_t(1000 + i));
    Tensor y(DType::float32, {batch, 1});
    ops.matmul(x, w, y);
    batches.push_back({x, y});
  }
  return batches;
}

}  // namespace

TEST_F(Training, Equivalence_LinearRegression_1vs4) {
  auto registry = ModelRegistry::with_builtins();
  ModelConfig c;
  c.input_dim = 6;
  c.seed = 3;
  auto batches = regression_batches(50, 32, 6);
  OptimizerConfig sgd{OptimizerKind::sgd, 0.05};
  auto one = train_params(runtime, 1, registry, "linear", c, batches, sgd);
  auto initial = train_params(runtime, 1, registry, "linear", c, {}, sgd);
  EXPECT_GT(max_relative_difference(one, initial), 0.1);  // training really moved the weights
  auto four = train_params(runtime, 4, registry, "linear", c, batches, sgd);
  EXPECT_LT(max_relative_difference(four, one), 1e-5);
  auto four_merge =
      train_params(runtime, 4, registry, "linear", c, batches, sgd, ApplyPath::merge_call);
  EXPECT_LT(max_relative_difference(four_merge, one), 1e-5);
}

TEST_F(Training, Mlp_1_2_4ReplicasAgreeAfterAFewSteps) {
  auto registry = ModelRegistry::with_builtins();
  ModelConfig c;
  c.input_dim = 8;
  c.hidden = {16, 8};
  c.classes = 3;
  c.seed = 11;
  std::vector<std::pair<Tensor, Tensor>> batches;
  for (int i = 0; i < 5; ++i) {
    Tensor x = Tensor::random_normal({24, 8}, uint64_t(50 + i));
    std::vector<int64_t> labels;
    for (int r = 0; r < 24; ++r) labels.push_back((r * 7 + i) % 3);
    batches.push_back({x, Tensor::from_vector<int64_t>({24}, labels)});
  }
  OptimizerConfig momentum{OptimizerKind::momentum, 0.1, 0.9};
  auto one = train_params(runtime, 1, registry, "mlp", c, batches, momentum);
  for (int n : {2, 4})
    EXPECT_LT(max_relative_difference(
                  train_params(runtime, n, registry, "mlp", c, batches, momentum), one),
              1e-4)
        << n << " replicas";
}

TEST_F(Training, SoftmaxOnSyntheticClassificationExceeds90PercentAccuracy) {
  data::ClassificationOptions d;
  d.num_examples = 1024;
  d.num_features = 8;
  d.num_classes = 4;
  d.seed = 5;
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  ModelConfig c;
  c.input_dim = 8;
  c.classes = 4;
  Trainer trainer(s, make_softmax_classifier(c), {OptimizerKind::sgd, 0.1});
  for (int epoch = 0; epoch < 3; ++epoch) {
    trainer.metrics().reset();
    auto it = data::synthetic_classification(d).batch(64, true).make_iterator();
    while (auto batch = it.next())
      trainer.train_step(trainer.split_batch(batch->at(0)), trainer.split_batch(batch->at(1)));
  }
  EXPECT_EQ(trainer.metrics().count(), 1024);
  EXPECT_GT(trainer.metrics().accuracy(), 0.9);
}

TEST_F(Training, MetricsAreSyncOnReadSumsReadBackAcrossReplicas) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  TrainMetrics m(s, "eval");
  s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
    int r = c.replica_id_in_sync_group();
    m.record({/*loss_sum=*/1.5 + r, /*correct=*/3 + r, /*rows=*/4});
    return std::vector<Tensor>{};
  });
  EXPECT_DOUBLE_EQ(m.loss_sum(), 4.0);
  EXPECT_DOUBLE_EQ(m.count(), 8.0);
  EXPECT_DOUBLE_EQ(m.mean_loss(), 0.5);
  EXPECT_DOUBLE_EQ(m.accuracy(), 7.0 / 8.0);
  m.reset();
  EXPECT_DOUBLE_EQ(m.count(), 0.0);
  EXPECT_DOUBLE_EQ(m.accuracy(), 0.0);
}

TEST_F(Training, MetricsRecordedOverSeveralRunsAreAllReadAndResetDropsUnreadOnes) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  TrainMetrics m(s, "train");
  auto record = [&](double base) {
    s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
      int r = c.replica_id_in_sync_group();
      m.record({base + r, /*correct=*/1, /*rows=*/2});
      return std::vector<Tensor>{};
    });
  };
  record(1.0);
  record(10.0);
  record(100.0);
  EXPECT_DOUBLE_EQ(m.loss_sum(), 1.0 + 2.0 + 10.0 + 11.0 + 100.0 + 101.0);
  EXPECT_DOUBLE_EQ(m.count(), 12.0);
  EXPECT_DOUBLE_EQ(m.loss_sum(), 225.0) << "a second read adds nothing twice";
  record(1000.0);
  m.reset();  // drops what was recorded since the last read, too
  EXPECT_DOUBLE_EQ(m.count(), 0.0);
  record(5.0);
  EXPECT_DOUBLE_EQ(m.loss_sum(), 11.0);
}

TEST_F(Training, RegistryStepByNameTrainsTheEmbeddingModelWithSparseUpdates) {
  auto registry = ModelRegistry::with_builtins();
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  ModelConfig c;
  c.users = 6;
  c.items = 5;
  c.dim = 4;
  Trainer trainer(s, registry.create_model("embedding", c), {OptimizerKind::adagrad, 0.3});
  StepFn step = registry.make_step("train_step", trainer);
  std::vector<int64_t> pairs;
  std::vector<float> ratings;
  for (int64_t u = 0; u < 6; ++u)
    for (int64_t i = 0; i < 4; ++i) {
      pairs.insert(pairs.end(), {u, (u + i) % 5});
      ratings.push_back(float((u + i) % 3) - 1.0f);
    }
  Tensor x = Tensor::from_vector<int64_t>({24, 2}, pairs);
  Tensor y = Tensor::from_vector<float>({24}, ratings);
  auto loss_of_pass = [&] {
    trainer.metrics().reset();
    s.run(step, {trainer.split_batch(x), trainer.split_batch(y)});
    return trainer.metrics().mean_loss();
  };
  double first = loss_of_pass();
  for (int i = 0; i < 50; ++i) loss_of_pass();
  EXPECT_LT(loss_of_pass(), 0.5 * first);
  // Mirrored tables stay identical on both replicas.
  auto& users = trainer.variables()[0];
  EXPECT_EQ(users.name(), "embedding/users");
  EXPECT_TRUE(users.components()[0].read().bitwise_equal(users.components()[1].read()));
}

TEST(ModelRegistry_, NamesAndUnknownNameErrors) {
  auto registry = ModelRegistry::with_builtins();
  EXPECT_EQ(registry.model_names(),
            (std::vector<std::string>{"embedding", "linear", "mlp", "softmax"}));
  EXPECT_EQ(registry.step_names(), (std::vector<std::string>{"eval_step", "train_step"}));
  expect_error([&] { registry.create_model("resnet", {}); },
               {"unknown model 'resnet' (known: embedding, linear, mlp, softmax)"});
  DefaultStrategy s;
  auto scope = s.scope();
  ModelConfig c;
  c.input_dim = 2;
  Trainer trainer(s, registry.create_model("linear", c), {});
  expect_error([&] { registry.make_step("predict", trainer); },
               {"unknown step 'predict' (known: eval_step, train_step)"});
  registry.add_model("tiny", [](const ModelConfig& cfg) { return make_linear_regression(cfg); });
  EXPECT_EQ(registry.create_model("tiny", c)->kind(), "linear");
}

TEST_F(Training, SplitBatchSlicesRowsWithoutCopying) {
  MirroredStrategy s(runtime.system(), cpus(3));
  auto scope = s.scope();
  ModelConfig c;
  c.input_dim = 2;
  Trainer trainer(s, make_linear_regression(c), {});
  Tensor x = Tensor::zeros(DType::float32, {7, 2});
  PerReplica parts = trainer.split_batch(x);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts.at(0).shape(), (Shape{3, 2}));
  EXPECT_EQ(parts.at(2).shape(), (Shape{2, 2}));
  for (auto& p : parts.values()) EXPECT_TRUE(p.shares_buffer_with(x));
}

TEST_F(Training, StepsUpdateVariablesInPlaceWithoutCopies) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  ModelConfig c;
  c.input_dim = 4;
  c.hidden = {8};
  c.classes = 3;
  for (ApplyPath path : {ApplyPath::all_reduce, ApplyPath::merge_call}) {
    Trainer trainer(s, make_mlp(c), {OptimizerKind::momentum, 0.1}, path);
    Tensor x = Tensor::random_normal({8, 4}, 1);
    Tensor y = Tensor::from_vector<int64_t>({8}, {0, 1, 2, 0, 1, 2, 0, 1});
    trainer.train_step(trainer.split_batch(x), trainer.split_batch(y));
    std::vector<const void*> before;
    for (auto& v : trainer.variables())
      for (auto& component : v.components()) before.push_back(component.read().raw_data());
    trainer.train_step(trainer.split_batch(x), trainer.split_batch(y));
    size_t i = 0;
    for (auto& v : trainer.variables())
      for (auto& component : v.components())
        EXPECT_EQ(component.read().raw_data(), before[i++]) << component.name();
  }
}

// steps_per_execution: several steps in one strategy.run are the same steps, bit for bit, with
// the same losses, including a last batch that does not split evenly.
TEST_F(Training, TrainStepsInOneRunEqualOneRunPerStepBitwise) {
  auto registry = ModelRegistry::with_builtins();
  ModelConfig c;
  c.input_dim = 6;
  c.hidden = {5};
  c.classes = 3;
  std::vector<std::pair<Tensor, Tensor>> batches;
  for (int i = 0; i < 5; ++i) {
    int64_t rows = i == 4 ? 7 : 12;
    std::vector<int32_t> labels;
    for (int64_t k = 0; k < rows; ++k) labels.push_back(int32_t((k * 7 + i) % 3));
    batches.push_back({Tensor::random_normal({rows, 6}, uint64_t(50 + i)),
                       Tensor::from_vector<int32_t>({rows}, labels)});
  }
  for (int replicas : {1, 2, 3}) {
    SCOPED_TRACE(replicas);
    MirroredStrategy one_by_one(runtime.system(), cpus(replicas)),
        together(runtime.system(), cpus(replicas));
    std::vector<double> losses_one, losses_together;
    std::vector<Tensor> params_one, params_together;
    {
      auto scope = one_by_one.scope();
      Trainer t(one_by_one, registry.create_model("mlp", c), {OptimizerKind::adam, 0.05});
      for (auto& [x, y] : batches)
        losses_one.push_back(t.train_step(t.split_batch(x), t.split_batch(y)));
      for (auto& p : t.parameters()) params_one.push_back(p.clone());
    }
    {
      auto scope = together.scope();
      Trainer t(together, registry.create_model("mlp", c), {OptimizerKind::adam, 0.05});
      std::vector<ValueArg> xs, ys;
      for (auto& [x, y] : batches) {
        xs.push_back(t.split_batch(x));
        ys.push_back(t.split_batch(y));
      }
      losses_together = t.train_steps(xs, ys);
      EXPECT_EQ(t.optimizer().iterations(), 5);
      for (auto& p : t.parameters()) params_together.push_back(p.clone());
    }
    EXPECT_EQ(losses_together, losses_one);
    ASSERT_EQ(params_together.size(), params_one.size());
    for (size_t k = 0; k < params_one.size(); ++k)
      EXPECT_EQ(params_together[k].to_vector<float>(), params_one[k].to_vector<float>()) << k;
  }
}

TEST_F(Training, TrainStepsNamesMismatchedBatchLists) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  ModelConfig c;
  c.input_dim = 2;
  Trainer t(s, make_linear_regression(c), {OptimizerKind::sgd, 0.1});
  expect_error(
      [&] {
        t.train_steps({Tensor::zeros(DType::float32, {2, 2})}, {});
      },
      {"train_steps: 1 feature batches but 0 label batches"});
}
