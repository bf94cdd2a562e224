// ShardedVariable and ParameterServerStorage over ps_shard actors in one process (spec
// variables.md R-SV, R-SLICE, R-EMB, R-PS-SPLIT; T-PS-2, T-PS-4, T-EMB-3, T-SLICE-*).
#include <gtest/gtest.h>

#include "coordinator/ps/parameter_server_storage.hpp"
#include "coordinator/ps/sharded_variable.hpp"
#include "core/ps/partitioners.hpp"
#include "ps_test_support.hpp"
#include "tests/common/error_of.hpp"

using namespace troupe;
using namespace troupe::testing;
using Floats = std::vector<float>;

namespace {

// Two ps shards ("ps:0", "ps:1") in one actor system and a client for them.
class ShardedVariableTest : public ::testing::Test {
 protected:
  ShardedVariableTest() {
    configure_actor_system(cfg_, ActorSystemOptions::in_process(2));
    sys_ = std::make_unique<caf::actor_system>(cfg_);
    for (int i = 0; i < 2; ++i)
      ps.push_back(spawn_ps_shard(*sys_, {"ps:" + std::to_string(i), cpu_kernels()}));
    client = std::make_shared<PsClient>(*sys_);
  }
  ~ShardedVariableTest() override {
    for (auto& a : ps) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    ps.clear();
  }

  // rows × 2 floats, row r = [10 r, 10 r + 1].
  static Tensor table(int64_t rows) {
    Floats v;
    for (int64_t r = 0; r < rows; ++r) v.insert(v.end(), {10.f * r, 10.f * r + 1});
    return floats({rows, 2}, v);
  }

  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  std::vector<caf::actor> ps;
  std::shared_ptr<PsClient> client;
};

}  // namespace

TEST_F(ShardedVariableTest, T_PS_2_DenseKernelInTwoPartsReadsBackWhole) {
  Tensor w = Tensor::random_normal({100, 10}, 7);
  Partitioner fixed = FixedShardsPartitioner(2);
  const int64_t n = shard_count_for(&fixed, w.shape(), w.dtype(), false, "dense/kernel");
  RoundRobinPlacement rr(2);
  auto sv = ShardedVariable::create(client, ps, rr, "dense/kernel", w, n);
  ASSERT_EQ(sv.layout().num_shards(), 2u);
  EXPECT_EQ(sv.layout().shard(0).shape, Shape({50, 10}));
  EXPECT_EQ(sv.tasks(), (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(sv.read().bitwise_equal(w));
  // Each part is a variable of its own on its ps task, named <name>/part_<i>.
  EXPECT_TRUE(client->read(ps[1], "dense/kernel/part_1").bitwise_equal(w.slice_rows(50, 100)));
}

TEST_F(ShardedVariableTest, T_PS_4_PartsAdvanceTheRoundRobin) {
  RoundRobinPlacement rr(2);
  auto a = ShardedVariable::create(client, ps, rr, "A", table(4), 2);
  auto b = ParameterServerStorage::create(client, ps[size_t(rr.place({"B", {3}, DType::float32}))],
                                          0, "B", floats({3}, {1, 2, 3}));
  auto c = ShardedVariable::create(client, ps, rr, "C", table(6), 3);
  EXPECT_EQ(a.tasks(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(b->shard(), ps[0]);
  EXPECT_EQ(c.tasks(), (std::vector<int64_t>{1, 0, 1}));
}

TEST_F(ShardedVariableTest, T_SLICE_IntegerAndSlicedReadsMatchTheDenseValue) {
  RoundRobinPlacement rr(2);
  auto sv = ShardedVariable::create(client, ps, rr, "t", table(10), 3);  // rows [4, 3, 3]
  const Tensor dense = sv.read();
  for (int64_t i = -10; i < 10; ++i) {
    const int64_t r = i < 0 ? i + 10 : i;
    EXPECT_EQ(sv.row(i).to_vector<float>(), (Floats{10.f * r, 10.f * r + 1})) << i;
  }
  EXPECT_EQ(sv.slice({9, 3, -2}).to_vector<float>(), (Floats{90, 91, 70, 71, 50, 51}));
  EXPECT_EQ(sv.slice({2, 8, 3}).to_vector<float>(), (Floats{20, 21, 50, 51}));
  EXPECT_EQ(sv.slice({5, 3, std::nullopt}).shape(), Shape({0, 2}));  // T-SLICE-3
  EXPECT_EQ(error_of([&] { sv.row(10); }), "index 10 is out of bounds for axis 0 with size 10");
  EXPECT_EQ(error_of([&] { sv.slice({1, 4, 0}); }), "slice step cannot be zero");
}

TEST_F(ShardedVariableTest, T_EMB_3_LookupDivAndModGatherFromEachShard) {
  // [[1,2],[3,4],[5,6],[7,8],[9,10]] in 3 parts: [[1,2],[3,4]], [[5,6],[7,8]], [[9,10]].
  RoundRobinPlacement rr(2);
  auto sv = ShardedVariable::create(client, ps, rr, "emb",
                                    floats({5, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}), 3);
  Tensor ids = Tensor::from_vector<int64_t>({3}, {0, 3, 4});
  auto div = sv.embedding_lookup(ids);
  EXPECT_EQ(div.shape(), Shape({3, 2}));
  EXPECT_EQ(div.to_vector<float>(), (Floats{1, 2, 7, 8, 9, 10}));
  auto mod = sv.embedding_lookup(ids, PartitionStrategy::mod);
  EXPECT_EQ(mod.to_vector<float>(), (Floats{1, 2, 3, 4, 7, 8}));
  // Any ids shape: output is ids.shape + [2]; int32 ids work too.
  auto grid = sv.embedding_lookup(Tensor::from_vector<int32_t>({2, 2}, {4, 4, 0, 2}));
  EXPECT_EQ(grid.shape(), Shape({2, 2, 2}));
  EXPECT_EQ(grid.to_vector<float>(), (Floats{9, 10, 9, 10, 1, 2, 5, 6}));
  EXPECT_EQ(error_of([&] { sv.embedding_lookup(Tensor::from_vector<int64_t>({1}, {5})); }),
            "embedding id 5 is not in [0, 5)");
  EXPECT_EQ(error_of([&] { sv.embedding_lookup(floats({1}, {0})); }),
            "embedding_lookup ids of 'emb' must be an int32 or int64 tensor, got float32[1]");
}

TEST_F(ShardedVariableTest, WholeVariableAssignAndScatterRouteRowsToTheirParts) {
  RoundRobinPlacement rr(2);
  auto sv = ShardedVariable::create(client, ps, rr, "v", table(5), 2);  // rows [3, 2]
  sv.assign_add(table(5));
  EXPECT_EQ(sv.row(4).to_vector<float>(), (Floats{80, 82}));
  sv.assign(table(5));
  // Global rows 4 (part 1), 0 (part 0) and 4 again (duplicates accumulate).
  sv.scatter_add(Tensor::from_vector<int64_t>({3}, {4, 0, 4}), floats({3, 2}, {1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(sv.read().to_vector<float>(), (Floats{2, 3, 10, 11, 20, 21, 30, 31, 44, 45}));
  sv.scatter_update(Tensor::from_vector<int64_t>({1}, {3}), floats({1, 2}, {-1, -1}));
  sv.scatter_sub(Tensor::from_vector<int64_t>({1}, {1}), floats({1, 2}, {10, 10}));
  EXPECT_EQ(sv.read().to_vector<float>(), (Floats{2, 3, 0, 1, 20, 21, -1, -1, 44, 45}));
  sv.assign_sub(table(5));
  EXPECT_EQ(sv.row(3).to_vector<float>(), (Floats{-31, -32}));
}

TEST_F(ShardedVariableTest, WholeVariableWritesNameTheProblem) {
  RoundRobinPlacement rr(2);
  auto sv = ShardedVariable::create(client, ps, rr, "v", table(5), 2);
  EXPECT_EQ(error_of([&] { sv.assign(table(4)); }),
            "assign of sharded variable 'v' needs a value of its layout float32[5, 2], got "
            "float32[4, 2]");
  EXPECT_EQ(error_of([&] {
              sv.scatter_add(Tensor::from_vector<int64_t>({1}, {5}), floats({1, 2}, {1, 1}));
            }),
            "index 5 is out of bounds for axis 0 with size 5");
  EXPECT_EQ(error_of([&] {
              sv.scatter_add(Tensor::from_vector<int64_t>({2}, {0, 1}), floats({1, 2}, {1, 1}));
            }),
            "scatter_add of sharded variable 'v': 2 indices need rows float32[2, 2], got "
            "float32[1, 2]");
  EXPECT_EQ(error_of([&] {
              sv.scatter_sub(Tensor::from_vector<int64_t>({1}, {-1}), floats({1, 2}, {1, 1}));
            }),
            "scatter_sub of 'v': row -1 is negative");
  UpdateRule sgd;
  EXPECT_EQ(error_of([&] { sv.apply_gradients(sgd, Tensor(), table(4)); }),
            "apply_gradients of sharded variable 'v' needs a gradient of its layout "
            "float32[5, 2], got float32[4, 2]");
  RoundRobinPlacement three(3);
  EXPECT_EQ(error_of([&] { ShardedVariable::create(client, ps, three, "x", table(4), 2); }),
            "sharded variable 'x': placement spans 3 ps tasks, 2 shard actors were given");
}

TEST_F(ShardedVariableTest, ParameterServerStorageRunsTheOptimizerStepOnTheShard) {
  auto w = ParameterServerStorage::create(client, ps[1], 1, "w", floats({2}, {1, 1}));
  auto slot = ParameterServerStorage::create(client, ps[1], 1, "w/momentum", floats({2}, {0, 0}));
  EXPECT_EQ(w->devices(), (std::vector<std::string>{"/job:ps/replica:0/task:1/device:CPU:0"}));
  EXPECT_EQ(w->copies(), 1u);
  w->write(0, VariableWrite::add, {floats({2}, {1, 1})});
  UpdateRule mom;
  mom.kind = OptimizerKind::momentum;
  mom.learning_rate = 0.5;
  w->apply_update(0, mom, {slot.get()}, Tensor(), floats({2}, {1, 2}));
  EXPECT_EQ(w->read(0).to_vector<float>(), (Floats{1.5f, 1}));  // 2 - 0.5 g
  EXPECT_EQ(slot->read(0).to_vector<float>(), (Floats{1, 2}));
  // Exactly-once: a step id repeats nothing.
  w->set_step_id(42);
  w->write(0, VariableWrite::add, {floats({2}, {1, 1})});
  w->write(0, VariableWrite::add, {floats({2}, {1, 1})});
  EXPECT_EQ(w->read(0).to_vector<float>(), (Floats{2.5f, 2}));

  auto elsewhere = ParameterServerStorage::create(client, ps[0], 0, "w/m0", floats({2}, {0, 0}));
  EXPECT_EQ(error_of([&] {
              w->apply_update(0, mom, {elsewhere.get()}, Tensor(), floats({2}, {1, 2}));
            }),
            "optimizer slot 'w/m0' of variable 'w' lives on /job:ps/replica:0/task:0/device:CPU:0, "
            "the variable on /job:ps/replica:0/task:1/device:CPU:0: slots must be on the "
            "variable's shard so the step runs there");
  EXPECT_EQ(error_of([&] { w->local_copies(); }),
            "variable 'w' lives on /job:ps/replica:0/task:1/device:CPU:0: it has no copy in this "
            "process to update in place");
  EXPECT_EQ(error_of([&] { w->read(1); }),
            "read of copy 1 of variable 'w': it lives once, on "
            "/job:ps/replica:0/task:1/device:CPU:0");
  EXPECT_EQ(error_of([&] {
              w->write(0, VariableWrite::scatter_add, {floats({2}, {1, 1})});
            }),
            "scatter_add of variable 'w' takes 2 tensor(s), got 1");
}

namespace {

// Concatenation of slot `k` over saved parts (part order = row order).
std::vector<float> slot_rows(const std::vector<ps_saved_variable>& parts, size_t k) {
  std::vector<float> out;
  for (auto& p : parts) {
    auto v = p.slots.at(k).to_vector<float>();
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

}  // namespace

TEST_F(ShardedVariableTest, SparseAndDenseGradientsRunOnTheOwningParts) {
  RoundRobinPlacement rr(2);
  auto sv = ShardedVariable::create(client, ps, rr, "emb", table(5), 2);  // rows [3, 2]
  UpdateRule sgd;
  sgd.learning_rate = 1;
  sv.apply_gradients(sgd, Tensor::from_vector<int64_t>({2}, {4, 1}), floats({2, 2}, {1, 1, 2, 2}),
                     5);
  sv.apply_gradients(sgd, Tensor::from_vector<int64_t>({2}, {4, 1}), floats({2, 2}, {1, 1, 2, 2}),
                     5);  // the retry of step 5 changes nothing
  EXPECT_EQ(sv.read().to_vector<float>(), (Floats{0, 1, 8, 9, 20, 21, 30, 31, 39, 40}));
  sv.apply_gradients(sgd, Tensor(), table(5));  // w - w = 0 row by row on every part
  EXPECT_EQ(sv.read().to_vector<float>(), (Floats{0, 0, -2, -2, 0, 0, 0, 0, -1, -1}));
}

TEST_F(ShardedVariableTest, CheckpointOfFourPartsRestoresIntoOneTwoAndThreeAndOneIntoFour) {
  UpdateRule ada;
  ada.kind = OptimizerKind::adagrad;
  ada.learning_rate = 0.1;
  int round = 0;
  auto trained = [&](int64_t parts) {
    RoundRobinPlacement rr(2);
    auto sv =
        ShardedVariable::create(client, ps, rr, "emb" + std::to_string(round++), table(10), parts);
    sv.apply_gradients(ada, Tensor::from_vector<int64_t>({4}, {0, 4, 7, 9}),
                       floats({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), 1);
    sv.apply_gradients(ada, Tensor(), table(10), 2);
    return sv;
  };
  for (auto [from, to] : std::vector<std::pair<int64_t, int64_t>>{{4, 1}, {4, 2}, {4, 3}, {1, 4}}) {
    auto original = trained(from);
    auto saved = original.save();
    ASSERT_EQ(int64_t(saved.size()), from);
    // Fresh shards, as after a restart with another ps count.
    std::vector<caf::actor> fresh;
    for (int i = 0; i < 3; ++i)
      fresh.push_back(spawn_ps_shard(*sys_, {"new:" + std::to_string(i), cpu_kernels()}));
    RoundRobinPlacement rr(3);
    auto restored = ShardedVariable::restore(client, fresh, rr, saved, to);
    EXPECT_EQ(int64_t(restored.layout().num_shards()), to);
    EXPECT_TRUE(restored.read().bitwise_equal(original.read())) << from << " -> " << to;
    auto resaved = restored.save();
    EXPECT_EQ(slot_rows(resaved, 0), slot_rows(saved, 0)) << from << " -> " << to;
    // Steps 1 and 2 are in the checkpoint of every row: retrying them changes nothing, and
    // both the restored and the original variable take step 3 alike.
    restored.apply_gradients(ada, Tensor(), table(10), 2);
    EXPECT_TRUE(restored.read().bitwise_equal(original.read()));
    restored.apply_gradients(ada, Tensor(), table(10), 3);
    original.apply_gradients(ada, Tensor(), table(10), 3);
    EXPECT_TRUE(restored.read().bitwise_equal(original.read())) << from << " -> " << to;
    for (auto& a : fresh) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }
}

TEST_F(ShardedVariableTest, RestoreRefusesPartsOfDifferentVariablesOrSlots) {
  RoundRobinPlacement rr(2);
  auto a = ShardedVariable::create(client, ps, rr, "a", table(4), 2);
  auto b = ShardedVariable::create(client, ps, rr, "b", table(4), 2);
  auto mixed = a.save();
  mixed[1] = b.save()[1];
  RoundRobinPlacement again(2);
  EXPECT_EQ(error_of([&] { ShardedVariable::restore(client, ps, again, mixed, 1); }),
            "saved part 'b/part_1' is not a part of 'a' [4, 2] like 'a/part_0'");
  UpdateRule mom;
  mom.kind = OptimizerKind::momentum;
  a.apply_gradients(mom, Tensor::from_vector<int64_t>({1}, {0}), floats({1, 2}, {1, 1}));
  EXPECT_EQ(error_of([&] { ShardedVariable::restore(client, ps, again, a.save(), 1); }),
            "saved parts of 'a' have different optimizer slots: 'a/part_0' momentum, 'a/part_1' "
            "none");
  auto gap = a.save();
  gap.pop_back();
  gap[0].slot_rule.clear();
  gap[0].slots.clear();
  EXPECT_EQ(error_of([&] { ShardedVariable::restore(client, ps, again, gap, 1); }),
            "checkpoint of 'a' holds rows [0, 2), the variable has 4 rows");
}

TEST_F(ShardedVariableTest, AShardThatIsGoneFailsTheRequestAsUnavailable) {
  RoundRobinPlacement rr(2);
  auto sv = ShardedVariable::create(client, ps, rr, "v", table(4), 2);
  caf::scoped_actor self{*sys_};
  self->monitor(ps[1]);
  caf::anon_send_exit(ps[1], caf::exit_reason::kill);
  self->receive([](caf::down_msg&) {});
  try {
    sv.read();
    FAIL() << "read from a shard that exited succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::unavailable) << e.what();
  }
}
