// ParameterServerStrategy over ps shards in this process (spec cluster-and-ps.md §7.3,
// variables.md R-PS-CREATE, R-V2-VAR-*; T-V2-1, T-V2-2).
#include <gtest/gtest.h>

#include "coordinator/colocation.hpp"
#include "coordinator/ps/parameter_server_strategy.hpp"
#include "coordinator/ps/sharded_storage.hpp"
#include "in_process_cluster.hpp"
#include "tests/common/error_of.hpp"
#include "train/optimizer.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

class ParameterServerStrategyTest : public InProcessCluster {};

const PsVariablePlacement& placement_of(const std::vector<PsVariablePlacement>& all,
                                        const std::string& name) {
  for (auto& p : all)
    if (p.name == name) return p;
  throw std::runtime_error("no variable " + name);
}

TEST_F(ParameterServerStrategyTest, T_V2_1_RoundRobinByCreationOrder) {
  start(3);
  ParameterServerStrategy s(*sys_, ps);
  EXPECT_EQ(s.name(), "ParameterServerStrategy");
  auto scope = s.scope();
  std::vector<DistributedVariable> vars;
  for (int i = 2; i <= 5; ++i)
    vars.push_back(s.create_variable("v" + std::to_string(i), floats({1}, {float(i)})));
  const char* expected[] = {
      "/job:ps/replica:0/task:0/device:CPU:0", "/job:ps/replica:0/task:1/device:CPU:0",
      "/job:ps/replica:0/task:2/device:CPU:0", "/job:ps/replica:0/task:0/device:CPU:0"};
  for (size_t i = 0; i < vars.size(); ++i) {
    EXPECT_EQ(vars[i].devices(), std::vector<std::string>{expected[i]});
    EXPECT_EQ(vars[i].storage().read(0).to_vector<float>(), std::vector<float>{float(i + 2)});
  }
  // The value lives on the shard: ask it directly.
  EXPECT_EQ(ask<ps_value_msg>(*sys_, ps[1], ps_read_msg{"v3"}).value.to_vector<float>(),
            std::vector<float>{3.f});
}

TEST_F(ParameterServerStrategyTest, NonTrainableVariablesStayOnTheCoordinator) {
  start(2);
  ParameterServerStrategy s(*sys_, ps);
  auto scope = s.scope();
  auto a = s.create_variable("a", floats({1}, {1}));
  VariableOptions local;
  local.trainable = false;
  auto counter = s.create_variable("counter", floats({1}, {0}), local);
  auto b = s.create_variable("b", floats({1}, {2}));
  // The non-trainable one did not take ps 1's turn.
  EXPECT_EQ(a.devices(), std::vector<std::string>{"/job:ps/replica:0/task:0/device:CPU:0"});
  EXPECT_EQ(b.devices(), std::vector<std::string>{"/job:ps/replica:0/task:1/device:CPU:0"});
  EXPECT_EQ(counter.devices(),
            std::vector<std::string>{"/job:localhost/replica:0/task:0/device:CPU:0"});
  auto placements = s.placements();
  ASSERT_EQ(placements.size(), 3u);
  EXPECT_TRUE(placement_of(placements, "counter").on_coordinator);
  EXPECT_TRUE(placement_of(placements, "counter").parts.empty());
  EXPECT_EQ(placement_of(placements, "b").parts.at(0).task, 1);
}

TEST_F(ParameterServerStrategyTest, T_V2_2_MinSizePartitionerShardsTheEmbeddingNotTheKernel) {
  start(2);
  ParameterServerStrategyOptions o;
  o.partitioner = [](const Shape& shape, DType dtype) {
    return MinSizePartitioner(256 << 10, 2)(shape, dtype);
  };
  ParameterServerStrategy s(*sys_, ps, o);
  auto scope = s.scope();
  auto embedding = s.create_variable("embedding", Tensor::zeros(DType::float32, {8, 16384}));
  auto kernel = s.create_variable("kernel", Tensor::zeros(DType::float32, {16384, 1}));
  auto& sharded = dynamic_cast<ShardedStorage&>(embedding.storage()).sharded();
  ASSERT_EQ(sharded.layout().num_shards(), 2u);
  EXPECT_EQ(sharded.layout().shard(0).shape, (Shape{4, 16384}));
  EXPECT_EQ(sharded.tasks(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(embedding.shape(), (Shape{8, 16384}));
  // Each part advanced the placement: the unsplit kernel goes to ps 0 again.
  EXPECT_EQ(kernel.devices(), std::vector<std::string>{"/job:ps/replica:0/task:0/device:CPU:0"});
  auto p = placement_of(s.placements(), "embedding");
  ASSERT_EQ(p.parts.size(), 2u);
  EXPECT_TRUE(p.sharded);
  EXPECT_EQ(p.parts[1].name, "embedding/part_1");
  EXPECT_EQ(p.parts[1].offset, (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(p.parts[1].task, 1);
  EXPECT_FALSE(placement_of(s.placements(), "kernel").sharded);
}

TEST_F(ParameterServerStrategyTest, T_V2_2_PartitionerResultsThatSplitOtherAxesAreRefused) {
  start(2);
  ParameterServerStrategyOptions o;
  o.partitioner = [](const Shape&, DType) { return std::vector<int64_t>{2, 2}; };
  ParameterServerStrategy s(*sys_, ps, o);
  auto scope = s.scope();
  std::string error = error_of([&] {
    s.create_variable("w", Tensor::zeros(DType::float32, {4, 4}));
  });
  EXPECT_NE(error.find("'w'"), std::string::npos) << error;
}

TEST_F(ParameterServerStrategyTest, OptimizerSlotsLiveBesideTheirVariables) {
  start(3);
  ParameterServerStrategyOptions o;
  o.partitioner = [](const Shape& shape, DType dtype) {
    return FixedShardsPartitioner(2)(shape, dtype);
  };
  ParameterServerStrategy s(*sys_, ps, o);
  auto scope = s.scope();
  // "table" splits into parts on ps 0 and 1; "bias" (a scalar is never split) goes to ps 2.
  auto table = s.create_variable("table", floats({3, 2}, {1, 1, 1, 1, 1, 1}));
  auto bias = s.create_variable("bias", Tensor::from_scalar<float>(1.f));
  UpdateRule rule;
  rule.kind = OptimizerKind::momentum;
  rule.learning_rate = 0.1;
  rule.momentum = 0.9;
  Optimizer opt(s, rule, {table, bias});
  auto placements = s.placements();
  auto slot = placement_of(placements, "table/momentum");
  EXPECT_EQ(slot.colocated_with, "table");
  ASSERT_EQ(slot.parts.size(), 2u);
  EXPECT_EQ(slot.parts[0].task, 0);
  EXPECT_EQ(slot.parts[1].task, 1);
  EXPECT_EQ(slot.parts[1].name, "table/momentum/part_1");
  EXPECT_EQ(placement_of(placements, "bias/momentum").parts.at(0).task, 2);
  // Slots did not advance the placement: the next variable takes ps 0's turn... after bias (2).
  auto next = s.create_variable("next", floats({1}, {0}));
  EXPECT_EQ(next.devices(), std::vector<std::string>{"/job:ps/replica:0/task:0/device:CPU:0"});

  // One step runs on the shards with the slots: momentum accumulates the gradient (1), so
  // every element moves by the learning rate; a sparse step only moves its rows.
  opt.apply_to_replica(0, {{floats({3, 2}, {1, 1, 1, 1, 1, 1}), Tensor()},
                           {Tensor::from_scalar<float>(1.f), Tensor()}});
  for (float x : table.storage().read(0).to_vector<float>()) EXPECT_FLOAT_EQ(x, 0.9f);
  EXPECT_FLOAT_EQ(bias.storage().read(0).to_vector<float>()[0], 0.9f);
  EXPECT_EQ(opt.slot(0, "momentum").storage().read(0).to_vector<float>(),
            (std::vector<float>{1, 1, 1, 1, 1, 1}));
  opt.apply_to_replica(
      0, {{floats({1, 2}, {1, 1}), rows({2})}, {Tensor::from_scalar<float>(0.f), Tensor()}});
  // Row 2 (on part 1): accum = 0.9 * 1 + 1 = 1.9, x = 0.9 - 0.19; rows 0 and 1 unchanged.
  auto t = table.storage().read(0).to_vector<float>();
  EXPECT_FLOAT_EQ(t[0], 0.9f);
  EXPECT_FLOAT_EQ(t[2], 0.9f);
  EXPECT_FLOAT_EQ(t[4], 0.9f - 0.19f);
}

TEST_F(ParameterServerStrategyTest, AColocatedVariableNeedsAKnownVariable) {
  start(1);
  ParameterServerStrategy s(*sys_, ps);
  auto scope = s.scope();
  ColocateVariablesWith beside("nowhere");
  EXPECT_EQ(error_of([&] { s.create_variable("slot", floats({1}, {0})); }),
            "ParameterServerStrategy: variable 'slot' is to be colocated with 'nowhere', which "
            "this strategy did not create");
}

TEST_F(ParameterServerStrategyTest, ConstructionErrorsNameTheProblem) {
  start(2);
  EXPECT_EQ(error_of([&] { ParameterServerStrategy s(*sys_, {}); }),
            "ParameterServerStrategy needs at least one ps shard, got none");
  EXPECT_EQ(error_of([&] {
              ParameterServerStrategy s(*sys_, {ps[0], caf::actor()});
            }),
            "ParameterServerStrategy: ps shard 1 is not a valid actor handle");
  ParameterServerStrategyOptions o;
  o.placement_policy = std::make_shared<RoundRobinPlacement>(3);
  EXPECT_EQ(error_of([&] { ParameterServerStrategy s(*sys_, ps, o); }),
            "ParameterServerStrategy: the placement policy spans 3 ps tasks, the cluster has 2");
  ParameterServerStrategyOptions bad;
  bad.placement = "random";
  EXPECT_NE(error_of([&] { ParameterServerStrategy s(*sys_, ps, bad); }).find("random"),
            std::string::npos);
}

TEST_F(ParameterServerStrategyTest, ShardedStorageErrorsNameTheVariable) {
  start(2);
  ParameterServerStrategyOptions o;
  o.partitioner = [](const Shape& shape, DType dtype) {
    return FixedShardsPartitioner(2)(shape, dtype);
  };
  ParameterServerStrategy s(*sys_, ps, o);
  auto scope = s.scope();
  auto table = s.create_variable("table", floats({4, 1}, {1, 2, 3, 4}));
  auto bias = s.create_variable("bias", Tensor::from_scalar<float>(0.f));
  auto& storage = table.storage();
  EXPECT_EQ(error_of([&] { storage.read(1); }),
            "read of copy 1 of sharded variable 'table': it lives once, on its ps shards");
  EXPECT_EQ(error_of([&] { storage.write(0, VariableWrite::scatter_add, {rows({1})}); }),
            "write of sharded variable 'table' takes 2 tensor(s), got 1");
  EXPECT_EQ(error_of([&] { storage.local_copies(); }),
            "sharded variable 'table' lives on ps shards: it has no copy in this process to "
            "update in place");
  UpdateRule momentum;
  momentum.kind = OptimizerKind::momentum;
  EXPECT_EQ(error_of([&] {
              storage.apply_update(0, momentum, {&bias.storage()}, Tensor(),
                                   floats({4, 1}, {1, 1, 1, 1}));
            }),
            "optimizer slot 'bias' of sharded variable 'table' is not sharded beside it: slots "
            "must be created colocated");
  auto& sharded = dynamic_cast<ShardedStorage&>(storage).sharded();
  EXPECT_EQ(
      error_of([&] {
        ShardedVariable::create_colocated(s.client(), sharded, "slot", floats({2, 1}, {0, 0}));
      }),
      "variable 'slot' colocated with sharded variable 'table' [4, 1] needs a value of that "
      "shape, got float32[2, 1]");
  // Whole-variable writes split by rows.
  storage.write(0, VariableWrite::add, {floats({4, 1}, {1, 1, 1, 1})});
  EXPECT_EQ(storage.read(0).to_vector<float>(), (std::vector<float>{2, 3, 4, 5}));
}

TEST_F(ParameterServerStrategyTest, GreedyPlacementBalancesBytes) {
  start(2);
  ParameterServerStrategyOptions o;
  o.placement = "greedy";
  ParameterServerStrategy s(*sys_, ps, o);
  auto scope = s.scope();
  auto big = s.create_variable("big", Tensor::zeros(DType::float32, {100}));
  auto small1 = s.create_variable("small1", Tensor::zeros(DType::float32, {10}));
  auto small2 = s.create_variable("small2", Tensor::zeros(DType::float32, {10}));
  EXPECT_EQ(big.devices()[0], "/job:ps/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(small1.devices()[0], "/job:ps/replica:0/task:1/device:CPU:0");
  EXPECT_EQ(small2.devices()[0], "/job:ps/replica:0/task:1/device:CPU:0");
}

}  // namespace
