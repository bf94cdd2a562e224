// Placement of variables and shards on ps tasks (spec cluster-and-ps.md §2.3, §3 vector 3,
// T-V2-1; variables.md R-PS-RR, T-PS-4).
#include <gtest/gtest.h>

#include "core/ps/placement.hpp"
#include "core/ps/shard_layout.hpp"
#include "tests/common/error_of.hpp"

using namespace troupe;
using troupe::testing::error_of;
using Ints = std::vector<int64_t>;

namespace {

PlacementRequest var(const std::string& name, Shape shape, DType dtype = DType::float32) {
  return {name, std::move(shape), dtype};
}

// Places every shard of `layout`, in order (each shard is its own creation).
Ints place_shards(PlacementPolicy& policy, const ShardLayout& layout) {
  Ints tasks;
  for (auto& s : layout.shards()) tasks.push_back(policy.place({s.name, s.shape, layout.dtype()}));
  return tasks;
}

}  // namespace

TEST(Placement, ClusterB_RoundRobinV1ToV5) {
  RoundRobinPlacement rr(2);
  Ints tasks;
  for (int i = 1; i <= 5; ++i) tasks.push_back(rr.place(var("v" + std::to_string(i), {4})));
  EXPECT_EQ(tasks, (Ints{0, 1, 0, 1, 0}));
}

TEST(Placement, T_V2_1_RoundRobinOverThreePsWithDevices) {
  RoundRobinPlacement rr(3);
  std::vector<std::string> devices;
  for (int i = 2; i <= 5; ++i) devices.push_back(ps_device(rr.place(var("v", {}))));
  EXPECT_EQ(devices,
            (std::vector<std::string>{
                "/job:ps/replica:0/task:0/device:CPU:0", "/job:ps/replica:0/task:1/device:CPU:0",
                "/job:ps/replica:0/task:2/device:CPU:0", "/job:ps/replica:0/task:0/device:CPU:0"}));
}

TEST(Placement, T_PS_4_EveryShardAdvancesTheRoundRobin) {
  RoundRobinPlacement rr(2);
  EXPECT_EQ(place_shards(rr, ShardLayout::split("A", {4, 2}, DType::float32, 2)), (Ints{0, 1}));
  EXPECT_EQ(rr.place(var("B", {3})), 0);
  EXPECT_EQ(place_shards(rr, ShardLayout::split("C", {6, 2}, DType::float32, 3)), (Ints{1, 0, 1}));
}

TEST(Placement, GreedyByteSizeTiesToLowestIndex) {
  GreedyLoadPlacement greedy(3);
  // 400 B, 40 B, 40 B, 80 B, 8 B: loads go [400,0,0] -> [400,40,0] -> [400,40,40] ->
  // [400,120,40] (tie 40/40 goes to task 1) -> [400,120,48].
  EXPECT_EQ(greedy.place(var("big", {100})), 0);
  EXPECT_EQ(greedy.place(var("a", {10})), 1);
  EXPECT_EQ(greedy.place(var("b", {10})), 2);
  EXPECT_EQ(greedy.place(var("c", {10}, DType::float64)), 1);
  EXPECT_EQ(greedy.place(var("d", {2})), 2);
  EXPECT_EQ(greedy.loads(), (Ints{400, 120, 48}));
}

TEST(Placement, GreedyScalarWeighsOneElement) {
  EXPECT_EQ(byte_size_load(var("s", {}, DType::float64)), 8);
}

TEST(Placement, GreedyWithConstantLoadReproducesRoundRobin) {
  GreedyLoadPlacement greedy(3, [](const PlacementRequest&) { return int64_t{1}; });
  RoundRobinPlacement rr(3);
  for (int i = 0; i < 10; ++i) {
    auto r = var("v" + std::to_string(i), {int64_t(i + 1)});
    EXPECT_EQ(greedy.place(r), rr.place(r)) << i;
  }
}

TEST(Placement, UserPolicyIsCalledAndChecked) {
  UserPlacement by_name(2, [](const PlacementRequest& r) {
    return r.name.rfind("emb", 0) == 0 ? int64_t{1} : int64_t{0};
  });
  EXPECT_EQ(by_name.place(var("emb/part_0", {4})), 1);
  EXPECT_EQ(by_name.place(var("dense", {4})), 0);
  UserPlacement wrong(2, [](const PlacementRequest&) { return int64_t{2}; });
  EXPECT_EQ(error_of([&] { wrong.place(var("w", {4})); }),
            "placement policy put variable 'w' on ps task 2, but the cluster has ps tasks 0..1");
}

TEST(Placement, R_PS_RR_NoPsTasksAndUnknownKindRejected) {
  EXPECT_EQ(error_of([] { RoundRobinPlacement(0); }),
            "round_robin placement needs at least one ps task, got 0");
  EXPECT_EQ(error_of([] { make_placement("random", 2); }),
            "unknown placement 'random' (use \"round_robin\" or \"greedy\")");
  EXPECT_EQ(make_placement("greedy", 2)->kind(), "greedy");
}
