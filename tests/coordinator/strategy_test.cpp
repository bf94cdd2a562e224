// Strategy API: scope, run, reduce, local results, variables' creation (spec strategy-and-input
// §2.1-2.5, mirrored.md §3.1, variables.md T-MV-1, T-DV-1).
#include "tests/coordinator/fixture.hpp"

using namespace troupe;
using namespace troupe::testing;

class Strategy_ : public StrategyTest {};

TEST_F(Strategy_, T_MV_1_VariableCreatedInScopeIsMirroredWithReplicaNames) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  auto v = s.create_variable("Variable", scalar(1.0f));
  ASSERT_EQ(v.components().size(), 2u);
  EXPECT_EQ(v.components()[0].name(), "Variable");
  EXPECT_EQ(v.components()[1].name(), "Variable/replica_1");
  EXPECT_TRUE(v.is_mirrored());
  for (auto& c : v.components()) {
    EXPECT_EQ(c.shape(), Shape{});
    EXPECT_EQ(value_of(c.read()), 1.0f);
  }
  EXPECT_EQ(v.components()[1].device(), "/job:localhost/replica:0/task:0/device:CPU:1");
}

TEST_F(Strategy_, CreateVariableOutsideScopeNamesTheScope) {
  MirroredStrategy s(runtime.system(), cpus(2));
  expect_error([&] { s.create_variable("w", scalar(0)); },
               {"create_variable('w') must be called inside MirroredStrategy.scope()"});
}

TEST_F(Strategy_, ScopeIsReentrantAndExclusive) {
  MirroredStrategy a(runtime.system(), cpus(2));
  OneDeviceStrategy b(runtime.system(), "CPU:0");
  {
    auto s1 = a.scope();
    {
      auto s2 = a.scope();
      a.create_variable("x", scalar(1));
    }
    a.create_variable("y", scalar(1));  // still in a's scope after the inner exit
    expect_error([&] { auto s3 = b.scope(); }, {"inside the scope of another strategy"});
  }
  expect_error([&] { a.create_variable("z", scalar(1)); }, {"must be called inside"});
}

TEST_F(Strategy_, SameNameTwiceInCrossReplicaContextIsUniquified) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  EXPECT_EQ(s.create_variable("w", scalar(0)).name(), "w");
  EXPECT_EQ(s.create_variable("w", scalar(0)).name(), "w_1");
}

TEST_F(Strategy_, T_DV_1_RunSplitsPerReplicaArgumentsAndReduceSumsOverAxis) {
  MirroredStrategy s(runtime.system(), cpus(2));
  PerReplica batch({vec({5}), vec({6})});  // [5,6,7,8] batched by 2 over 2 replicas: first step
  auto plus_one = s.run_one(
      [](ReplicaContext&, const std::vector<Tensor>& a) {
        auto out = a[0].clone();
        out.data<float>()[0] += 1.0f;
        return out;
      },
      {batch});
  EXPECT_EQ(plus_one.at(0).to_vector<float>(), std::vector<float>{6});
  EXPECT_EQ(plus_one.at(1).to_vector<float>(), std::vector<float>{7});
  EXPECT_FLOAT_EQ(value_of(s.reduce(ReduceOp::sum, batch, 0)), 11.0f);
  auto ids = s.run_one([](ReplicaContext& c, const std::vector<Tensor>&) {
    return Tensor::from_scalar<int32_t>(c.replica_id_in_sync_group());
  });
  EXPECT_EQ(ids.at(0).scalar<int32_t>(), 0);
  EXPECT_EQ(ids.at(1).scalar<int32_t>(), 1);
}

TEST_F(Strategy_, ReduceMeanOverAxisIsTheTrueGlobalMean) {
  MirroredStrategy s(runtime.system(), cpus(2));
  PerReplica uneven({vec({1, 2, 3}), vec({4})});  // a short last batch on replica 1
  EXPECT_FLOAT_EQ(value_of(s.reduce(ReduceOp::mean, uneven, 0)), 2.5f);
  EXPECT_FLOAT_EQ(value_of(s.reduce("sum", uneven, -1)), 10.0f);
  expect_error([&] { s.reduce(ReduceOp::sum, uneven, 1); }, {"axis 1 is outside [-1, 1)"});
  expect_error([&] { s.reduce("max", uneven); }, {"reduce_op must be SUM or MEAN", "max"});
}

TEST_F(Strategy_, ReduceWithoutAxisIsElementwiseAcrossReplicas) {
  MirroredStrategy s(runtime.system(), cpus(2));
  PerReplica v({vec({1, 2}), vec({3, 4})});
  EXPECT_EQ(s.reduce(ReduceOp::sum, v).to_vector<float>(), (std::vector<float>{4, 6}));
  EXPECT_EQ(s.reduce("Mean", v).to_vector<float>(), (std::vector<float>{2, 3}));
  // A plain tensor counts as held by every replica.
  EXPECT_FLOAT_EQ(value_of(s.reduce(ReduceOp::sum, scalar(3))), 6.0f);
  EXPECT_FLOAT_EQ(value_of(s.reduce(ReduceOp::mean, scalar(3))), 3.0f);
}

TEST_F(Strategy_, ReduceInReplicaContextIsRejected) {
  MirroredStrategy s(runtime.system(), cpus(2));
  expect_error(
      [&] {
        s.run_one([&](ReplicaContext&, const std::vector<Tensor>&) {
          return s.reduce(ReduceOp::sum, scalar(1));
        });
      },
      {"reduce() may not be called in replica context", "failed too"});
}

TEST_F(Strategy_, ExperimentalLocalResultsListsComponents) {
  MirroredStrategy s(runtime.system(), cpus(3));
  auto out = s.run_one([](ReplicaContext& c, const std::vector<Tensor>&) {
    return scalar(float(c.replica_id_in_sync_group() * 10));
  });
  auto local = s.experimental_local_results(out);
  ASSERT_EQ(local.size(), 3u);
  EXPECT_EQ(value_of(local[2]), 20.0f);
  EXPECT_EQ(s.experimental_local_results(scalar(4)).size(), 1u);
}

TEST_F(Strategy_, RunRejectsPerReplicaOfTheWrongSize) {
  MirroredStrategy s(runtime.system(), cpus(2));
  expect_error(
      [&] {
        s.run({}, {PerReplica({scalar(1), scalar(2), scalar(3)})});
      },
      {"3 components passed where 2 replicas run"});
}

TEST_F(Strategy_, DefaultAndOneDeviceStrategiesRunOneReplica) {
  DefaultStrategy d;
  auto r = d.run_one([](ReplicaContext& c, const std::vector<Tensor>&) {
    EXPECT_EQ(c.num_replicas_in_sync(), 1);
    return c.all_reduce(ReduceOp::sum, scalar(2));
  });
  EXPECT_EQ(value_of(r.at(0)), 2.0f);
  OneDeviceStrategy one(runtime.system(), "/cpu:0");
  EXPECT_EQ(one.extended().worker_devices(),
            std::vector<std::string>{"/job:localhost/replica:0/task:0/device:CPU:0"});
}
