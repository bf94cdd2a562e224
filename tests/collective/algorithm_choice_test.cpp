// The pure parts of algorithm selection: select_cross_device_ops (mirrored.md §2.3, §3.2), the
// make_collective factory, hierarchical-copy grouping (§2.7.4, §3.2) and chunk layout.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "collective_test_support.hpp"
#include "core/collective/chunk_layout.hpp"
#include "core/collective/hierarchical_copy.hpp"

namespace troupe {
namespace {

using ::testing::HasSubstr;
using Kind = CrossDeviceOpKind;

DeviceCapabilities gpus(int n, bool nccl) { return {nccl, n, n}; }

TEST(SelectCrossDeviceOps, TwoGpusWithNcclPickNccl) {
  EXPECT_EQ(select_cross_device_ops({"GPU:0", "GPU:1"}, gpus(2, true)), Kind::nccl_all_reduce);
  EXPECT_EQ(select_cross_device_ops({"/job:localhost/replica:0/task:0/device:GPU:0", "/gpu:1"},
                                    gpus(2, true)),
            Kind::nccl_all_reduce);
}
TEST(SelectCrossDeviceOps, AnyCpuPicksReductionToOneDevice) {
  EXPECT_EQ(select_cross_device_ops({"CPU:0"}, gpus(0, true)), Kind::reduction_to_one_device);
  EXPECT_EQ(select_cross_device_ops({"GPU:0", "CPU:0"}, gpus(1, true)),
            Kind::reduction_to_one_device);
}
TEST(SelectCrossDeviceOps, VirtualGpusPickReductionToOneDevice) {
  // Two logical GPUs on one physical GPU.
  EXPECT_EQ(select_cross_device_ops({"GPU:0", "GPU:1"}, {true, 1, 2}),
            Kind::reduction_to_one_device);
}
TEST(SelectCrossDeviceOps, NoNcclPicksReductionToOneDevice) {
  EXPECT_EQ(select_cross_device_ops({"GPU:0", "GPU:1"}, gpus(2, false)),
            Kind::reduction_to_one_device);
}
TEST(SelectCrossDeviceOps, EmptyListRejected) {
  try {
    select_cross_device_ops({}, gpus(0, false));
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("empty device list"));
  }
}
TEST(SelectCrossDeviceOps, NamesMatchTensorFlow) {
  EXPECT_EQ(cross_device_op_name(Kind::reduction_to_one_device), "ReductionToOneDevice");
  EXPECT_EQ(cross_device_op_name(Kind::nccl_all_reduce), "NcclAllReduce");
  EXPECT_EQ(cross_device_op_name(Kind::hierarchical_copy), "HierarchicalCopyAllReduce");
  EXPECT_EQ(cross_device_op_name(Kind::collective_all_reduce), "CollectiveAllReduce");
}

TEST(MakeCollective, BuildsEachCpuAlgorithmAndRejectsNccl) {
  CollectiveSpec spec;
  spec.reduce = &testing::add_loop;
  EXPECT_EQ(make_collective(Kind::collective_all_reduce, spec)->name(), "ring all-reduce");
  EXPECT_EQ(make_collective(Kind::reduction_to_one_device, spec)->name(), "reduce-to-one");
  EXPECT_EQ(make_collective(Kind::hierarchical_copy, spec)->name(), "hierarchical copy");
  try {
    make_collective(Kind::nccl_all_reduce, spec);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("NcclAllReduce has no CPU state machine"));
  }
}

TEST(HierarchicalGroups, N8Index0RootsZeroAndFour) {
  auto g = hierarchical_groups(8, 0);
  EXPECT_EQ(g.g0_main, 0);
  EXPECT_EQ(g.g1_main, 4);
  EXPECT_EQ(g.group_a, (ElementRange{0, 4}));
  EXPECT_EQ(g.group_b, (ElementRange{4, 4}));
}
TEST(HierarchicalGroups, N8Index1RootsOneAndFive) {
  auto g = hierarchical_groups(8, 1);
  EXPECT_EQ(g.g0_main, 1);
  EXPECT_EQ(g.g1_main, 5);
}
TEST(HierarchicalGroups, N8Index5RootFiveGroupUpperThenOne) {
  auto g = hierarchical_groups(8, 5);
  EXPECT_EQ(g.g0_main, 5);
  EXPECT_EQ(g.group_a, (ElementRange{4, 4}));
  EXPECT_EQ(g.g1_main, 1);
  EXPECT_EQ(g.group_b, (ElementRange{0, 4}));
}
TEST(HierarchicalGroups, N4Index2GroupsSwap) {
  auto g = hierarchical_groups(4, 2);
  EXPECT_EQ(g.g0_main, 2);
  EXPECT_EQ(g.g1_main, 0);
  EXPECT_EQ(g.group_a, (ElementRange{2, 2}));
  EXPECT_EQ(g.group_b, (ElementRange{0, 2}));
}
TEST(HierarchicalGroups, EvenNMatchesUpstreamG1Formula) {
  for (int n : {2, 4, 6, 8})
    for (int i = 0; i < 3 * n; ++i)
      EXPECT_EQ(hierarchical_groups(n, i).g1_main, (i % n + n / 2) % n) << "n " << n << " i " << i;
}
TEST(HierarchicalGroups, OddNErrataFixUpperGroupTakesExtraDevice) {
  // Upstream drops device n-1 for odd n; here every device is in exactly one group.
  for (int n : {3, 5, 7})
    for (int i = 0; i < n; ++i) {
      auto g = hierarchical_groups(n, i);
      EXPECT_EQ(g.group_a.count + g.group_b.count, n);
      ElementRange upper = g.group_a.begin == 0 ? g.group_b : g.group_a;
      EXPECT_EQ(upper, (ElementRange{n / 2, n - n / 2}));
      EXPECT_GE(g.g1_main, g.group_b.begin);
      EXPECT_LT(g.g1_main, g.group_b.end());
    }
  auto g = hierarchical_groups(3, 2);  // g0_main 2 at offset 1 of {1,2}; B = {0}
  EXPECT_EQ(g.g1_main, 0);
}
TEST(HierarchicalGroups, OddNErrataFixSumsDeviceNMinus1) {
  // n=3: device 2 is outside upstream's groups [0,1) and [1,2); its input must still count.
  auto peers = testing::make_peers(Kind::hierarchical_copy, 3, DType::float32, 1, 4);
  auto results = run_locally(
      peers, {Tensor::from_scalar(1.f).reshape({1}), Tensor::from_scalar(10.f).reshape({1}),
              Tensor::from_scalar(100.f).reshape({1})});
  for (const auto& r : results) EXPECT_EQ(r.to_vector<float>(), std::vector<float>{111.f});
}
TEST(HierarchicalGroups, SingleDeviceAndBadArguments) {
  auto g = hierarchical_groups(1, 3);
  EXPECT_EQ(g.g0_main, 0);
  EXPECT_EQ(g.group_b.count, 0);
  EXPECT_THROW(hierarchical_groups(0, 0), Error);
  EXPECT_THROW(hierarchical_groups(4, -1), Error);
}

TEST(ChunkLayout, SplitEvenlyGivesExtraToFirst) {
  auto s = split_evenly(10, 4);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], (ElementRange{0, 3}));
  EXPECT_EQ(s[1], (ElementRange{3, 3}));
  EXPECT_EQ(s[2], (ElementRange{6, 2}));
  EXPECT_EQ(s[3], (ElementRange{8, 2}));
  auto tiny = split_evenly(2, 3);
  EXPECT_EQ(tiny[2], (ElementRange{2, 0}));
  EXPECT_THROW(split_evenly(3, 0), Error);
}
TEST(ChunkLayout, ChunksCoverRange) {
  auto c = split_into_chunks({5, 7}, 3);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[2], (ElementRange{11, 1}));
  EXPECT_TRUE(split_into_chunks({4, 0}, 3).empty());
  EXPECT_EQ(chunk_elements(10, DType::float64), 1);
  EXPECT_EQ(chunk_elements(3, DType::float64), 1);
  EXPECT_EQ(chunk_elements(4096, DType::float32), 1024);
}

}  // namespace
}  // namespace troupe
