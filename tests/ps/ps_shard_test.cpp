// The ps_shard actor in one actor system: pull, assign*, scatter*, gather, optimizer steps
// (dense and sparse rows), exactly-once by step id, save / restore, and the errors it names.
#include <gtest/gtest.h>

#include <cmath>

#include "ps_test_support.hpp"
#include "tests/common/error_of.hpp"

using namespace troupe;
using namespace troupe::testing;
using Floats = std::vector<float>;

namespace {

Floats values(const Tensor& t) { return t.to_vector<float>(); }

UpdateRule rule(OptimizerKind kind, double lr = 0.1) {
  UpdateRule r;
  r.kind = kind;
  r.learning_rate = lr;
  return r;
}

}  // namespace

TEST_F(PsShardTest, PullAndAssignFamily) {
  EXPECT_TRUE(create("w", floats({2, 2}, {1, 2, 3, 4})).applied);
  EXPECT_EQ(values(read("w")), (Floats{1, 2, 3, 4}));
  write("w", ShardWrite::assign_add, floats({2, 2}, {1, 1, 1, 1}));
  EXPECT_EQ(values(read("w")), (Floats{2, 3, 4, 5}));
  write("w", ShardWrite::assign_sub, floats({2, 2}, {2, 2, 2, 2}));
  EXPECT_EQ(values(read("w")), (Floats{0, 1, 2, 3}));
  auto ack = write("w", ShardWrite::assign, floats({2, 2}, {9, 8, 7, 6}));
  EXPECT_EQ(values(read("w")), (Floats{9, 8, 7, 6}));
  EXPECT_TRUE(ack.applied);
  EXPECT_EQ(ack.updates, 3u);
}

TEST_F(PsShardTest, AValueReadIsNotChangedByLaterWrites) {
  create("w", floats({3}, {1, 2, 3}));
  Tensor before = read("w");
  write("w", ShardWrite::assign_add, floats({3}, {10, 10, 10}));
  EXPECT_EQ(values(before), (Floats{1, 2, 3}));
  EXPECT_EQ(values(read("w")), (Floats{11, 12, 13}));
}

TEST_F(PsShardTest, ScatterFamilyTouchesOnlyTheGivenRows) {
  create("t", floats({3, 2}, {0, 0, 1, 1, 2, 2}));
  write("t", ShardWrite::scatter_update, floats({1, 2}, {7, 7}), rows({2}));
  write("t", ShardWrite::scatter_add, floats({2, 2}, {1, 1, 1, 1}), rows({0, 0}));
  write("t", ShardWrite::scatter_sub, floats({1, 2}, {1, 2}), rows({1}));
  EXPECT_EQ(values(read("t")), (Floats{2, 2, 0, -1, 7, 7}));
}

TEST_F(PsShardTest, GatherReturnsOnlyTheRequestedRowsOfAPart) {
  // emb/part_1 holds rows [3, 6) of a [6, 2] embedding.
  ask<ps_ack_msg>(ps_create_msg{{"emb/part_1", "emb", {6, 2}, {3, 0}},
                                floats({3, 2}, {30, 31, 40, 41, 50, 51})});
  auto got = ask<ps_value_msg>(ps_gather_msg{"emb/part_1", rows({2, 0})});
  EXPECT_EQ(got.value.shape(), Shape({2, 2}));
  EXPECT_EQ(values(got.value), (Floats{50, 51, 30, 31}));
}

TEST_F(PsShardTest, DenseSgdAndMomentumMatchTheirFormulas) {
  create("w", floats({2}, {1, 2}));
  apply("w", rule(OptimizerKind::sgd, 0.5), floats({2}, {2, 4}));
  EXPECT_EQ(values(read("w")), (Floats{0, 0}));  // w - 0.5 g
  create("m", floats({1}, {1}));
  UpdateRule mom = rule(OptimizerKind::momentum, 0.1);
  mom.momentum = 0.5;
  apply("m", mom, floats({1}, {1}));  // accum = 1, w = 1 - 0.1
  apply("m", mom, floats({1}, {1}));  // accum = 0.5 + 1, w = 0.9 - 0.15
  EXPECT_NEAR(values(read("m"))[0], 0.75f, 1e-6);
}

TEST_F(PsShardTest, DenseAdamAndAdagradRunTheSharedKernels) {
  // The shard must give bit for bit what apply_update_rule gives on a local copy.
  const KernelRegistry registry = make_cpu_registry();
  Ops ops(registry);
  for (auto kind : {OptimizerKind::adam, OptimizerKind::adagrad}) {
    const std::string name(optimizer_kind_name(kind));
    Tensor init = floats({4}, {1, -2, 3, -4});
    create(name, init);
    Tensor local = init.clone();
    UpdateRule r = rule(kind, 0.01);
    std::vector<Tensor> slots;
    for (auto s : slot_names(kind)) {
      slots.push_back(Tensor::zeros(DType::float32, {4}));
      if (s == "accumulator") ops.fill(slots.back(), r.initial_accumulator);
    }
    std::vector<Tensor*> slot_ptrs;
    for (auto& s : slots) slot_ptrs.push_back(&s);
    for (int64_t step = 1; step <= 3; ++step) {
      r.step = step;
      Tensor g = floats({4}, {0.5f * float(step), -1, 2, 0.25f});
      apply(name, r, g);
      apply_update_rule(ops, r, local, slot_ptrs, Tensor(), g);
    }
    EXPECT_TRUE(read(name).bitwise_equal(local)) << name;
  }
}

TEST_F(PsShardTest, SparseAdagradKeepsPerRowSlots) {
  create("emb", floats({3, 2}, {1, 1, 1, 1, 1, 1}));
  UpdateRule r = rule(OptimizerKind::adagrad, 0.1);
  r.initial_accumulator = 0.1;
  apply("emb", r, floats({1, 2}, {1, 2}), rows({1}));
  auto w = values(read("emb"));
  // Rows 0 and 2 untouched; row 1: accum = 0.1 + g², w = 1 - 0.1 g / (sqrt(accum) + eps).
  EXPECT_EQ(w[0], 1.f);
  EXPECT_EQ(w[5], 1.f);
  EXPECT_NEAR(w[2], 1 - 0.1 * 1 / std::sqrt(1.1), 1e-6);
  EXPECT_NEAR(w[3], 1 - 0.1 * 2 / std::sqrt(4.1), 1e-6);
  // The accumulator slot moved only for row 1.
  auto saved = ask<ps_checkpoint_msg>(ps_save_msg{{"emb"}});
  ASSERT_EQ(saved.variables.at(0).slots.size(), 1u);
  auto acc = values(saved.variables[0].slots[0]);
  EXPECT_NEAR(acc[0], 0.1f, 1e-7);
  EXPECT_NEAR(acc[2], 1.1f, 1e-6);
  EXPECT_NEAR(acc[3], 4.1f, 1e-6);
  EXPECT_NEAR(acc[4], 0.1f, 1e-7);
}

TEST_F(PsShardTest, ARetriedStepIsAcknowledgedButAppliedOnce) {
  create("w", floats({2}, {0, 0}));
  auto first = apply("w", rule(OptimizerKind::sgd, 1), floats({2}, {1, 1}), {}, 7);
  auto retry = apply("w", rule(OptimizerKind::sgd, 1), floats({2}, {1, 1}), {}, 7);
  EXPECT_TRUE(first.applied);
  EXPECT_FALSE(retry.applied);
  EXPECT_EQ(retry.step_id, 7u);
  EXPECT_EQ(retry.updates, 1u);
  EXPECT_EQ(values(read("w")), (Floats{-1, -1}));
  // Writes deduplicate the same way; step 0 is never deduplicated.
  EXPECT_FALSE(write("w", ShardWrite::assign_add, floats({2}, {5, 5}), {}, 7).applied);
  write("w", ShardWrite::assign_add, floats({2}, {1, 1}));
  write("w", ShardWrite::assign_add, floats({2}, {1, 1}));
  EXPECT_EQ(values(read("w")), (Floats{1, 1}));
}

TEST_F(PsShardTest, AFailedUpdateDoesNotConsumeItsStepId) {
  create("w", floats({2}, {0, 0}));
  EXPECT_NE(error_of([&] {
              apply("w", rule(OptimizerKind::sgd), floats({3}, {1, 1, 1}), {}, 4);
            }),
            "");
  EXPECT_TRUE(apply("w", rule(OptimizerKind::sgd, 1), floats({2}, {1, 1}), {}, 4).applied);
}

TEST_F(PsShardTest, SaveAndRestoreIntoAFreshShardContinuesIdentically) {
  create("w", floats({3}, {1, 2, 3}));
  UpdateRule mom = rule(OptimizerKind::momentum, 0.1);
  apply("w", mom, floats({3}, {1, 1, 1}), {}, 1);
  auto checkpoint = ask<ps_checkpoint_msg>(ps_save_msg{});
  EXPECT_EQ(checkpoint.shard, "ps:0");
  apply("w", mom, floats({3}, {1, 2, 3}), {}, 2);

  caf::actor other = spawn_ps_shard(*sys_, {"ps:1", cpu_kernels()});
  EXPECT_EQ(ask<ps_ack_msg>(checkpoint, &other).updates, 1u);
  EXPECT_FALSE(
      ask<ps_ack_msg>(ps_apply_msg{"w", 1, to_rule_msg(mom), {}, floats({3}, {1, 1, 1}), {}},
                      &other)
          .applied);  // step 1 is in the checkpoint: still a repeat
  ask<ps_ack_msg>(ps_apply_msg{"w", 2, to_rule_msg(mom), {}, floats({3}, {1, 2, 3}), {}}, &other);
  EXPECT_TRUE(ask<ps_value_msg>(ps_read_msg{"w"}, &other).value.bitwise_equal(read("w")));
  caf::anon_send_exit(other, caf::exit_reason::user_shutdown);
}

TEST_F(PsShardTest, ErrorsNameTheShardAndTheVariable) {
  create("w", floats({2}, {0, 0}));
  ask<ps_ack_msg>(
      ps_create_msg{{"emb/part_1", "emb", {6, 2}, {3, 0}}, Tensor::zeros(DType::float32, {3, 2})});
  EXPECT_EQ(error_of([&] { read("nope"); }), "ps shard 'ps:0' holds no variable 'nope'");
  EXPECT_EQ(error_of([&] { create("w", floats({1}, {1})); }),
            "ps shard 'ps:0', variable 'w': already exists");
  EXPECT_EQ(error_of([&] {
              write("w", ShardWrite::assign, floats({3}, {1, 2, 3}));
            }),
            "ps shard 'ps:0', variable 'w': assign value float32[3] does not match the variable's "
            "float32[2]");
  EXPECT_EQ(error_of([&] {
              ask<ps_value_msg>(ps_gather_msg{"emb/part_1", rows({1, 3})});
            }),
            "ps shard 'ps:0', variable 'emb/part_1' (rows [3, 6) of 'emb'): gather: row 3 is "
            "not in [0, 3)");
  EXPECT_EQ(error_of([&] {
              ask<ps_ack_msg>(ps_write_msg{"w", 9, 0, {}, Tensor::zeros(DType::float32, {2})});
            }),
            "unknown variable write 9 (0..5: assign, assign_add, assign_sub, scatter_update, "
            "scatter_add, scatter_sub)");
  ps_rule_msg bad;
  bad.kind = 7;
  EXPECT_EQ(
      error_of([&] {
        ask<ps_ack_msg>(ps_apply_msg{"w", 0, bad, {}, Tensor::zeros(DType::float32, {2}), {}});
      }),
      "unknown optimizer kind 7 (0 sgd, 1 momentum, 2 adam, 3 adagrad)");
  apply("w", rule(OptimizerKind::momentum), floats({2}, {1, 1}));
  EXPECT_EQ(error_of([&] {
              apply("w", rule(OptimizerKind::adam), floats({2}, {1, 1}));
            }),
            "ps shard 'ps:0', variable 'w': its slots were made for momentum, the step uses adam");
  EXPECT_EQ(error_of([&] {
              ask<ps_ack_msg>(ps_create_msg{{"emb/part_2", "emb", {6, 2}, {5, 0}},
                                            floats({3, 2}, {0, 0, 0, 0, 0, 0})});
            }),
            "ps shard 'ps:0', variable 'emb/part_2': initial value float32[3, 2] does not fit at "
            "row offset 5 of 'emb' [6, 2]");
}

TEST_F(PsShardTest, ErrorsKeepTheirCodeAcrossTheChannel) {
  try {
    read("nope");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::not_found);
  }
  create("w", floats({1}, {0}));
  try {
    create("w", floats({1}, {0}));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::already_exists);
  }
}

TEST_F(PsShardTest, RestoreRejectsAMismatchAndChangesNothing) {
  create("w", floats({2}, {1, 2}));
  ps_checkpoint_msg cp;
  cp.shard = "ps:9";
  cp.variables.push_back({{"v", "", {}, {}}, floats({1}, {5}), "", {}, 0, 0, {}});
  cp.variables.push_back({{"w", "", {}, {}}, floats({3}, {1, 2, 3}), "", {}, 0, 0, {}});
  EXPECT_EQ(error_of([&] { ask<ps_ack_msg>(cp); }),
            "ps shard 'ps:0', restoring 'w': saved value float32[3] does not match the held "
            "float32[2]");
  EXPECT_EQ(error_of([&] { read("v"); }), "ps shard 'ps:0' holds no variable 'v'");
}

TEST_F(PsShardTest, SlotsCanBeVariablesOfTheSameShard) {
  // An optimizer that creates its slots as variables ("w/momentum") names them in the step.
  create("w", floats({2}, {1, 1}));
  create("w/momentum", floats({2}, {0, 0}));
  UpdateRule mom = rule(OptimizerKind::momentum, 0.1);
  mom.momentum = 0.5;
  ps_apply_msg step{"w", 0, to_rule_msg(mom), {}, floats({2}, {1, 2}), {"w/momentum"}};
  ask<ps_ack_msg>(step);
  EXPECT_EQ(values(read("w/momentum")), (Floats{1, 2}));
  EXPECT_NEAR(values(read("w"))[1], 0.8f, 1e-6);
  step.slot_variables = {"w/missing"};
  EXPECT_EQ(error_of([&] { ask<ps_ack_msg>(step); }),
            "ps shard 'ps:0', variable 'w': slot variable 'w/missing' is not held by this shard");
  step.slot_variables = {};
  step.rule = to_rule_msg(rule(OptimizerKind::adam));
  step.slot_variables = {"w/momentum"};
  EXPECT_EQ(error_of([&] { ask<ps_ack_msg>(step); }),
            "ps shard 'ps:0', variable 'w': adam keeps 2 slot(s), the step names 1 slot "
            "variable(s)");
}
