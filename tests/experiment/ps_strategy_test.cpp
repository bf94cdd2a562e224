// The parameter_server strategy section (issue 12): defaults, and the plan that lists each
// variable's parts with their ps task — the placement ParameterServerStrategy makes.
#include "experiment/plan.hpp"
#include "tests/experiment/experiment_test_util.hpp"

using troupe::experiment::make_plan;
using troupe::experiment::parse_experiment;
using troupe::experiment::plan_to_json;

namespace {

std::string ps_yaml(const std::string& strategy, const std::string& optimizer = "sgd") {
  return "name: ps\nstrategy: " + strategy +
         "\nmodel: {kind: embedding, num_users: 10, num_items: 6, embedding_dim: 4}\n"
         "data: {kind: tfrecord, files: [d.tfrecord], global_batch: 8, features: {ids: {dtype: "
         "int64, shape: [2]}, r: {dtype: float32}}, label: r}\n"
         "optimizer: {kind: " +
         optimizer + ", learning_rate: 0.1}\ntrain: {steps: 10}\n";
}

TEST(PsStrategySection, DefaultsAsyncRoundRobinOneCopy) {
  auto e = parse_experiment(ps_yaml("{kind: parameter_server, num_ps: 2, workers: 3}"));
  const auto& ps = e.strategy().parameter_server();
  EXPECT_EQ(e.strategy().kind(), "parameter_server");
  EXPECT_EQ(ps.num_ps(), 2);
  EXPECT_EQ(ps.workers(), 3);
  EXPECT_EQ(ps.placement(), "round_robin");
  EXPECT_EQ(ps.mode(), "async");
  EXPECT_EQ(ps.replication(), 1);
  EXPECT_EQ(ps.replicas_to_aggregate(), 0);
  EXPECT_TRUE(ps.partitioner().kind().empty());
}

TEST(PsStrategySection, SyncDefaultsToEveryWorkerAndReadsPartitioners) {
  auto e = parse_experiment(
      ps_yaml("{kind: parameter_server, num_ps: 2, workers: 3, mode: sync, placement: greedy, "
              "partitioner: {kind: min_size, min_shard_bytes: 64}}"));
  const auto& ps = e.strategy().parameter_server();
  EXPECT_EQ(ps.mode(), "sync");
  EXPECT_EQ(ps.replicas_to_aggregate(), 3);
  EXPECT_EQ(ps.total_num_replicas(), 3);
  EXPECT_EQ(ps.placement(), "greedy");
  EXPECT_EQ(ps.partitioner().kind(), "min_size");
  EXPECT_EQ(ps.partitioner().min_shard_bytes(), 64);
  EXPECT_EQ(ps.partitioner().max_shards(), 1);
  auto max = parse_experiment(
      ps_yaml("{kind: parameter_server, num_ps: 2, workers: 2, mode: sync, "
              "replicas_to_aggregate: 1, total_num_replicas: 2, partitioner: {kind: max_size, "
              "max_shard_bytes: 100, max_shards: 3}}"));
  EXPECT_EQ(max.strategy().parameter_server().replicas_to_aggregate(), 1);
  EXPECT_EQ(max.strategy().parameter_server().total_num_replicas(), 2);
  EXPECT_EQ(max.strategy().parameter_server().partitioner().max_shard_bytes(), 100);
}

TEST(PsStrategySection, PlanListsEveryPartAndItsPsTask) {
  // users [10, 4] splits 4/3/3 over ps 0, 1, 2; items [6, 4] into 2/2/2 over ps 0, 1, 2 again
  // (each part advances round-robin); the momentum slots sit beside their parts.
  auto plan = make_plan(parse_experiment(ps_yaml(
      "{kind: parameter_server, num_ps: 3, workers: 2, partitioner: {kind: fixed, num_shards: 3}}",
      "momentum")));
  ASSERT_EQ(plan.variables.size(), 4u);
  const auto& users = plan.variables[0];
  EXPECT_EQ(users.name, "embedding/users");
  ASSERT_EQ(users.parts.size(), 3u);
  EXPECT_EQ(users.parts[1].name, "embedding/users/part_1");
  EXPECT_EQ(users.parts[1].shape, (troupe::Shape{3, 4}));
  EXPECT_EQ(users.parts[1].offset, (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(users.parts[1].task, 1);
  EXPECT_EQ(users.parts[1].device, "/job:ps/replica:0/task:1/device:CPU:0");
  EXPECT_EQ(plan.variables[1].parts[0].task, 0);
  const auto& slot = plan.variables[2];
  EXPECT_EQ(slot.name, "embedding/users/momentum");
  EXPECT_EQ(slot.colocated_with, "embedding/users");
  EXPECT_EQ(slot.parts[2].name, "embedding/users/momentum/part_2");
  EXPECT_EQ(slot.parts[2].task, 2);
  EXPECT_EQ(plan.parameters, 2 * (10 + 6) * 4);
  std::string json = plan_to_json(plan);
  EXPECT_NE(json.find("{\"name\":\"embedding/users/part_1\",\"shape\":[3,4],\"offset\":[4,0],"
                      "\"task\":1,\"device\":\"/job:ps/replica:0/task:1/device:CPU:0\"}"),
            std::string::npos)
      << json;
}

TEST(PsStrategySection, PlanWithoutPartitionerPlacesWholeVariablesRoundRobin) {
  auto plan =
      make_plan(parse_experiment(ps_yaml("{kind: parameter_server, num_ps: 2, workers: 1}")));
  ASSERT_EQ(plan.variables.size(), 2u);
  ASSERT_EQ(plan.variables[1].parts.size(), 1u);
  EXPECT_EQ(plan.variables[1].parts[0].name, "embedding/items");
  EXPECT_EQ(plan.variables[1].parts[0].task, 1);
}

}  // namespace
