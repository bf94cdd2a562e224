// make_plan: replicas, batch splits (spec §2.7.6 rebatch arithmetic) and model variables.
#include "experiment/plan.hpp"
#include "experiment/run/experiment_setup.hpp"
#include "tests/experiment/experiment_test_util.hpp"
#include "train/registry.hpp"

using troupe::Shape;
using troupe::experiment::ExperimentPlan;
using troupe::experiment::make_plan;
using troupe::experiment::parse_experiment;
using troupe::testing::replace_line;
using troupe::testing::valid_experiment_yaml;

namespace {
const std::string kCpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
const std::string kCpu1 = "/job:localhost/replica:0/task:0/device:CPU:1";
const std::string kCpu2 = "/job:localhost/replica:0/task:0/device:CPU:2";
}  // namespace

TEST(ExperimentPlan, DefaultExperimentNumbers) {
  ExperimentPlan plan = make_plan(troupe::experiment::default_experiment());
  ASSERT_EQ(plan.replicas.size(), 2u);
  EXPECT_EQ(plan.replicas[0].device, kCpu0);
  EXPECT_EQ(plan.replicas[1].device, kCpu1);
  ASSERT_EQ(plan.input_workers.size(), 1u);
  EXPECT_EQ(plan.input_workers[0].per_replica_batch_sizes, (std::vector<int64_t>{128, 128}));
  ASSERT_EQ(plan.variables.size(), 4u);
  EXPECT_EQ(plan.variables[0].name, "dense_0/kernel");
  EXPECT_EQ(plan.variables[0].shape, (Shape{784, 256}));
  EXPECT_EQ(plan.variables[0].bytes, 802816);
  EXPECT_EQ(plan.variables[1].name, "dense_0/bias");
  EXPECT_EQ(plan.variables[1].bytes, 1024);
  EXPECT_EQ(plan.variables[2].name, "dense_1/kernel");
  EXPECT_EQ(plan.variables[2].shape, (Shape{256, 10}));
  EXPECT_EQ(plan.variables[3].name, "dense_1/bias");
  EXPECT_EQ(plan.parameters, 784 * 256 + 256 + 256 * 10 + 10);
  EXPECT_EQ(plan.variable_bytes, plan.parameters * 4);
  ASSERT_EQ(plan.variables[0].components.size(), 2u);
  EXPECT_EQ(plan.variables[0].components[0].name, "dense_0/kernel");
  EXPECT_EQ(plan.variables[0].components[0].device, kCpu0);
  EXPECT_EQ(plan.variables[0].components[1].name, "dense_0/kernel/replica_1");
  EXPECT_EQ(plan.variables[0].components[1].device, kCpu1);
}

TEST(ExperimentPlan, ThreeReplicasUnevenBatchGivesTheRemainderToTheFirst) {
  std::string yaml = valid_experiment_yaml();
  yaml = replace_line(yaml, "strategy:",
                      "strategy: {kind: mirrored, devices: [CPU:0, cpu:1, "
                      "/device:CPU:2]}");
  yaml = replace_line(yaml, "data:",
                      "data: {kind: synthetic_classification, examples: 100, "
                      "global_batch: 10}");
  ExperimentPlan plan = make_plan(parse_experiment(yaml));
  ASSERT_EQ(plan.replicas.size(), 3u);
  EXPECT_EQ(plan.replicas[1].device, kCpu1);
  EXPECT_EQ(plan.replicas[2].device, kCpu2);
  EXPECT_EQ(plan.input_workers[0].per_replica_batch_sizes, (std::vector<int64_t>{4, 3, 3}));
  EXPECT_EQ(plan.input_workers[0].batch_size, 10);
  EXPECT_EQ(plan.variables[0].components[2].name, "dense_0/kernel/replica_2");
  // hidden [256, 64] -> three dense layers.
  ASSERT_EQ(plan.variables.size(), 6u);
  EXPECT_EQ(plan.variables[4].name, "dense_2/kernel");
  EXPECT_EQ(plan.variables[4].shape, (Shape{64, 10}));
}

TEST(ExperimentPlan, LinearSoftmaxAndEmbeddingVariables) {
  troupe::proto::ModelSpec linear;
  linear.set_kind("linear");
  linear.set_input_dim(5);
  linear.set_units(1);
  auto v = troupe::experiment::model_variables(linear);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].shape, (Shape{5, 1}));
  EXPECT_EQ(v[1].shape, (Shape{1}));

  troupe::proto::ModelSpec softmax;
  softmax.set_kind("softmax");
  softmax.set_input_dim(5);
  softmax.set_classes(3);
  v = troupe::experiment::model_variables(softmax);
  EXPECT_EQ(v[0].shape, (Shape{5, 3}));

  troupe::proto::ModelSpec embedding;
  embedding.set_kind("embedding");
  embedding.set_num_users(100);
  embedding.set_num_items(40);
  embedding.set_embedding_dim(8);
  v = troupe::experiment::model_variables(embedding);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].name, "embedding/users");  // the names the model creates
  EXPECT_EQ(v[0].shape, (Shape{100, 8}));
  EXPECT_EQ(v[1].name, "embedding/items");
  EXPECT_EQ(v[1].bytes, 40 * 8 * 4);
}

TEST(ExperimentPlan, BatchSmallerThanReplicasGivesZeroSizedBatches) {
  std::string yaml = replace_line(valid_experiment_yaml(), "data:",
                                  "data: {kind: synthetic_classification, examples: 100, "
                                  "global_batch: 1}");
  ExperimentPlan plan = make_plan(parse_experiment(yaml));
  EXPECT_EQ(plan.input_workers[0].per_replica_batch_sizes, (std::vector<int64_t>{1, 0}));
}

TEST(ExperimentPlan, JsonHasTheDocumentedShape) {
  std::string json = plan_to_json(make_plan(troupe::experiment::default_experiment()));
  EXPECT_NE(json.find("\"replicas\":[{\"id\":0,\"device\":\"" + kCpu0 + "\"},{\"id\":1,"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"input_workers\":[{\"id\":0,\"per_replica_batch_sizes\":[128,128]"),
            std::string::npos)
      << json;
  EXPECT_NE(
      json.find("{\"name\":\"dense_0/kernel\",\"dtype\":\"float32\",\"shape\":[784,256],"
                "\"bytes\":802816,\"components\":[{\"name\":\"dense_0/kernel\",\"device\":\"" +
                kCpu0 + "\"},{\"name\":\"dense_0/kernel/replica_1\""),
      std::string::npos)
      << json;
}

TEST(ExperimentPlan, TableListsVariablesAndTotals) {
  std::string table = plan_to_table(make_plan(troupe::experiment::default_experiment()));
  EXPECT_NE(table.find("dense_1/kernel"), std::string::npos) << table;
  EXPECT_NE(table.find("[128, 128] = 256"), std::string::npos) << table;
  EXPECT_NE(table.find("203530 parameters"), std::string::npos) << table;
}

TEST(ExperimentPlan, StepsPerExecutionIsTheEffectiveValue) {
  ExperimentPlan plan = make_plan(troupe::experiment::default_experiment());
  EXPECT_EQ(plan.steps_per_execution, 8);  // not given: the default
  std::string json = plan_to_json(plan);
  EXPECT_NE(json.find("\"global_batch\":256,\"steps_per_execution\":8,"), std::string::npos)
      << json;
  EXPECT_NE(plan_to_table(plan).find("global batch 256, 8 step(s) per execution"),
            std::string::npos);
  std::string yaml = replace_line(valid_experiment_yaml(),
                                  "train:", "train: {steps: 100, steps_per_execution: 3}");
  plan = make_plan(parse_experiment(yaml));
  EXPECT_EQ(plan.steps_per_execution, 3);
  json = plan_to_json(plan);
  EXPECT_NE(json.find("\"steps_per_execution\":3,"), std::string::npos) << json;
}

// The plan names each variable as the model creates it, so `plan` and `inspect` of a checkpoint
// agree (an MLP's layers are dense_0, dense_1, ...; it once planned dense, dense_1).
TEST(ExperimentPlan, VariableNamesAreTheOnesTheModelCreates) {
  for (const char* model_line : {"model: {kind: mlp, input_dim: 6, hidden: [5, 4], classes: 3}",
                                 "model: {kind: softmax, input_dim: 6, classes: 3}"}) {
    auto e =
        parse_experiment(replace_line(valid_experiment_yaml(), "model:", model_line), "x.yaml");
    auto model = troupe::ModelRegistry::with_builtins().create_model(e.model().kind(),
                                                                     troupe::make_model_config(e));
    std::vector<std::string> planned, created;
    for (const auto& v : make_plan(e).variables) planned.push_back(v.name);
    for (const auto& p : model->initial_parameters()) created.push_back(p.name);
    EXPECT_EQ(planned, created) << model_line;
  }
}

// train.flush_denormals defaults to true (TensorFlow flushes subnormals on its CPU threads); the
// plan prints the mode in both forms and the strategy options carry it to the replica groups.
TEST(ExperimentPlan, FlushDenormalsDefaultsToOnAndReachesTheStrategyOptions) {
  auto e = parse_experiment(valid_experiment_yaml(), "x.yaml");
  ExperimentPlan plan = make_plan(e);
  EXPECT_TRUE(plan.flush_denormals);
  EXPECT_TRUE(troupe::make_strategy_options(e).flush_denormals);
  EXPECT_NE(troupe::experiment::plan_to_table(plan).find("subnormals flushed to zero"),
            std::string::npos);
  e = parse_experiment(
      replace_line(valid_experiment_yaml(), "train:", "train: {steps: 10, flush_denormals: false}"),
      "x.yaml");
  plan = make_plan(e);
  EXPECT_FALSE(plan.flush_denormals);
  EXPECT_FALSE(troupe::make_strategy_options(e).flush_denormals);
  EXPECT_NE(troupe::experiment::plan_to_table(plan).find("subnormals kept"), std::string::npos);
  EXPECT_NE(troupe::experiment::plan_to_json(plan).find("\"flush_denormals\":false"),
            std::string::npos);
}

// train.on_nan defaults to stop (Keras' TerminateOnNaN, on unless asked otherwise); the plan
// prints the policy in both forms.
TEST(ExperimentPlan, OnNanDefaultsToStopAndIsPrinted) {
  ExperimentPlan plan = make_plan(parse_experiment(valid_experiment_yaml(), "x.yaml"));
  EXPECT_EQ(plan.on_nan, "stop");
  auto e = parse_experiment(
      replace_line(valid_experiment_yaml(), "train:", "train: {steps: 10, on_nan: skip_step}"),
      "x.yaml");
  plan = make_plan(e);
  EXPECT_EQ(plan.on_nan, "skip_step");
  EXPECT_NE(troupe::experiment::plan_to_table(plan).find("on non-finite loss: skip_step"),
            std::string::npos);
  EXPECT_NE(troupe::experiment::plan_to_json(plan).find("\"on_nan\":\"skip_step\""),
            std::string::npos);
}
