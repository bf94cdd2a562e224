// Distributed variables: reads and writes in every context and aggregation
// (spec variables.md §2.2-2.8, T-UPD-1..4, R-SAVE).
#include "tests/coordinator/fixture.hpp"

using namespace troupe;
using namespace troupe::testing;

class Variables : public StrategyTest {
 protected:
  std::vector<float> components_of(const DistributedVariable& v) {
    std::vector<float> out;
    for (auto& c : v.components()) out.push_back(value_of(c.read()));
    return out;
  }
  /// Replica r calls fn(v, r) in replica context.
  template <class Fn>
  void in_replicas(Strategy& s, Fn fn) {
    s.run([&](ReplicaContext& c, const std::vector<Tensor>&) {
      fn(c.replica_id_in_sync_group());
      return std::vector<Tensor>{};
    });
  }
};

TEST_F(Variables, T_UPD_1_OnWriteReplicaAssignAddAggregates) {
  const std::vector<std::pair<Aggregation, std::vector<float>>> cases = {
      {Aggregation::sum, {3, 3}},
      {Aggregation::mean, {1.5, 1.5}},
      {Aggregation::only_first_replica, {1, 1}},
      {Aggregation::none, {1, 2}},  // copies diverge
  };
  for (auto& [agg, expected] : cases) {
    MirroredStrategy s(runtime.system(), cpus(2));
    auto scope = s.scope();
    auto v = s.create_variable("v", scalar(0), {Sync::on_write, agg});
    in_replicas(s, [&](int r) { v.assign_add(scalar(float(r + 1))); });
    EXPECT_EQ(components_of(v), expected) << aggregation_name(agg);
  }
}

TEST_F(Variables, T_UPD_2_OnReadCrossReplicaReadAggregates) {
  const std::vector<std::pair<Aggregation, float>> cases = {
      {Aggregation::sum, 7}, {Aggregation::mean, 3.5}, {Aggregation::only_first_replica, 3}};
  for (auto& [agg, expected] : cases) {
    MirroredStrategy s(runtime.system(), cpus(2));
    auto scope = s.scope();
    auto v = s.create_variable("m", scalar(0), {Sync::on_read, agg});
    in_replicas(s, [&](int r) {
      v.assign(scalar(float(3 + r)));
      EXPECT_EQ(value_of(v.value()), float(3 + r));  // replica context reads the local copy
    });
    EXPECT_EQ(components_of(v), (std::vector<float>{3, 4}));
    EXPECT_EQ(value_of(v.value()), expected) << aggregation_name(agg);
  }
}

TEST_F(Variables, OnReadWithNoneCannotBeReadCrossReplica) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  auto v = s.create_variable("m", scalar(0), {Sync::on_read, Aggregation::none});
  expect_error([&] { v.value(); }, {"'m' (ON_READ, aggregation NONE) can not be read"});
}

TEST_F(Variables, T_UPD_3_OnReadSumAssignDividesAndAssignAddIsRejected) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  auto v = s.create_variable("total", scalar(0), {Sync::on_read, Aggregation::sum});
  v.assign(scalar(10));
  EXPECT_EQ(components_of(v), (std::vector<float>{5, 5}));
  EXPECT_EQ(value_of(v.value()), 10.0f);
  expect_error([&] { v.assign_add(scalar(1)); },
               {"does not support assign_add/assign_sub in cross-replica context when aggregation "
                "is SUM"});
  auto m = s.create_variable("avg", scalar(0), {Sync::on_read, Aggregation::mean});
  m.assign_add(scalar(2));
  EXPECT_EQ(components_of(m), (std::vector<float>{2, 2}));
}

TEST_F(Variables, T_UPD_4_MeanOnIntegersAndDistributedValuesInReplicaContextAreRejected) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  expect_error(
      [&] {
        s.create_variable("n", Tensor::from_scalar<int32_t>(0),
                          {Sync::on_write, Aggregation::mean});
      },
      {"'n': MEAN aggregation is not supported for int32"});
  auto v = s.create_variable("v", scalar(0), {Sync::on_write, Aggregation::sum});
  expect_error([&] { in_replicas(s, [&](int) {
                       v.assign(PerReplica({scalar(1), scalar(2)}));
                     }); },
               {"in replica context: a distributed value", "can not be assigned"});
  expect_error(
      [&] {
        s.create_variable("x", scalar(0), {Sync::none, Aggregation::none});
      },
      {"synchronization NONE is not supported"});
}

TEST_F(Variables, CrossReplicaAssignTakesOneValueOrMirrored) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  auto v = s.create_variable("v", vec({0, 0}));
  v.assign(vec({1, 2}));
  EXPECT_EQ(v.components()[1].read().to_vector<float>(), (std::vector<float>{1, 2}));
  v.assign(Mirrored({vec({3, 4}), vec({3, 4})}));
  EXPECT_EQ(v.value().to_vector<float>(), (std::vector<float>{3, 4}));
  expect_error(
      [&] {
        v.assign(PerReplica({vec({1, 1}), vec({2, 2})}));
      },
      {"accepts one tensor or a Mirrored value"});
  expect_error(
      [&] {
        v.assign(vec({1, 2, 3}));
      },
      {"assign of variable 'v' (float32[2])", "float32[3]"});
  v.assign_sub(vec({1, 1}));
  EXPECT_EQ(v.components()[0].read().to_vector<float>(), (std::vector<float>{2, 3}));
}

TEST_F(Variables, ReadValueDoesNotChangeWhenTheVariableIsWritten) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  auto v = s.create_variable("v", vec({1, 1}));
  Tensor before = v.value();
  v.assign_add(vec({5, 5}));
  EXPECT_EQ(before.to_vector<float>(), (std::vector<float>{1, 1}));
  EXPECT_EQ(v.value().to_vector<float>(), (std::vector<float>{6, 6}));
}

TEST_F(Variables, ReplicaScatterAddWithSumConcatenatesEveryReplicasRows) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  auto table = s.create_variable("emb", Tensor::zeros(DType::float32, {3, 2}),
                                 {Sync::on_write, Aggregation::sum});
  in_replicas(s, [&](int r) {
    auto idx = Tensor::from_vector<int64_t>({1}, {0});
    auto rows = Tensor::from_vector<float>({1, 2}, {float(r + 1), float(r + 1)});
    table.scatter_add(idx, rows);
  });
  // IndexedSlices SUM: {0: [1,1]} and {0: [2,2]} -> row 0 = [3,3] on every copy (spec §3.2).
  for (auto& c : table.components())
    EXPECT_EQ(c.read().to_vector<float>(), (std::vector<float>{3, 3, 0, 0, 0, 0}));
  expect_error(
      [&] {
        in_replicas(s, [&](int) {
          table.scatter_update(Tensor::from_vector<int64_t>({1}, {1}),
                               Tensor::from_vector<float>({1, 2}, {9, 9}));
        });
      },
      {"scatter_update of MirroredVariable 'emb' with aggregation SUM is not supported"});
}

TEST_F(Variables, ScatterUpdateOnlyFirstReplicaBroadcastsReplicaZero) {
  MirroredStrategy s(runtime.system(), cpus(2));
  auto scope = s.scope();
  auto table = s.create_variable("t", Tensor::zeros(DType::float32, {2, 1}),
                                 {Sync::on_write, Aggregation::only_first_replica});
  in_replicas(s, [&](int r) {
    table.scatter_update(Tensor::from_vector<int32_t>({1}, {1}),
                         Tensor::from_vector<float>({1, 1}, {float(10 + r)}));
  });
  for (auto& c : table.components())
    EXPECT_EQ(c.read().to_vector<float>(), (std::vector<float>{0, 10}));
}

TEST_F(Variables, R_SAVE_OnReadSumRestoreDividesSoTheSumSurvives) {
  MirroredStrategy s(runtime.system(), cpus(4));
  auto scope = s.scope();
  auto v = s.create_variable("count", scalar(0), {Sync::on_read, Aggregation::sum});
  in_replicas(s, [&](int r) { v.assign(scalar(float(r))); });
  Tensor saved = v.save_value();
  EXPECT_EQ(value_of(saved), 6.0f);
  v.restore(saved);
  EXPECT_EQ(components_of(v), (std::vector<float>{1.5, 1.5, 1.5, 1.5}));
  EXPECT_EQ(value_of(v.value()), 6.0f);
  auto w = s.create_variable("w", scalar(0));
  w.restore(scalar(3));
  EXPECT_EQ(components_of(w), (std::vector<float>{3, 3, 3, 3}));
  EXPECT_EQ(value_of(w.save_value()), 3.0f);
}

TEST_F(Variables, LazyCreationInsideReplicasYieldsOneVariable) {
  MirroredStrategy s(runtime.system(), cpus(3));
  auto out = s.run_one([&](ReplicaContext& c, const std::vector<Tensor>&) {
    auto v = s.create_variable("lazy", scalar(1));
    v.assign_add(scalar(float(c.replica_id_in_sync_group())));  // NONE: local copies only
    return v.value();
  });
  EXPECT_EQ(value_of(out.at(2)), 3.0f);
  auto scope = s.scope();
  EXPECT_EQ(s.create_variable("lazy", scalar(0)).name(), "lazy_1");
}
