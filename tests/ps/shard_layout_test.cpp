// Row split, names and offsets of sharded variables (spec variables.md R-PS-SPLIT, R-SV; T-PS-*,
// T-SV-1).
#include <gtest/gtest.h>

#include "core/ps/shard_layout.hpp"
#include "tests/common/error_of.hpp"

using namespace troupe;
using troupe::testing::error_of;
using Ints = std::vector<int64_t>;

TEST(ShardLayout, T_PS_1_TenRowsIntoFour) {
  auto l = ShardLayout::split("w", {10}, DType::float32, 4);
  EXPECT_EQ(l.row_counts(), (Ints{3, 3, 2, 2}));
  EXPECT_EQ(l.row_offsets(), (Ints{0, 3, 6, 8, 10}));
}

TEST(ShardLayout, T_PS_3_SevenRowsIntoThreeWithNames) {
  auto l = ShardLayout::split("w", {7, 4}, DType::float32, 3);
  EXPECT_EQ(l.row_counts(), (Ints{3, 2, 2}));
  EXPECT_EQ(l.row_offsets(), (Ints{0, 3, 5, 7}));
  ASSERT_EQ(l.num_shards(), 3u);
  EXPECT_EQ(l.shard(0).name, "w/part_0");
  EXPECT_EQ(l.shard(1).name, "w/part_1");
  EXPECT_EQ(l.shard(2).name, "w/part_2");
  EXPECT_EQ(l.shard(1).shape, Shape({2, 4}));
  EXPECT_EQ(l.shard(2).offset, (Ints{5, 0}));
}

TEST(ShardLayout, T_PS_2_DenseKernelIntoTwo) {
  auto l = ShardLayout::split("dense/kernel", {100, 10}, DType::float32, 2);
  EXPECT_EQ(l.shard(0).shape, Shape({50, 10}));
  EXPECT_EQ(l.shard(1).shape, Shape({50, 10}));
  EXPECT_EQ(l.full_shape(), Shape({100, 10}));
}

TEST(ShardLayout, T_PART_10_MoreShardsThanRowsGivesOneRowEach) {
  auto l = ShardLayout::split("w", {5, 4}, DType::float32, 8);
  EXPECT_EQ(l.row_counts(), (Ints{1, 1, 1, 1, 1}));
}

TEST(ShardLayout, T_PART_7_RowSplitOfFiveShards) {
  EXPECT_EQ(ShardLayout::split("w", {6, 1}, DType::float32, 5).row_counts(), (Ints{2, 1, 1, 1, 1}));
}

TEST(ShardLayout, T_SV_1_LayoutOfExistingShards) {
  auto l = ShardLayout::of_shards("sv", {{1, 2}, {2, 2}, {1, 2}},
                                  {DType::float32, DType::float32, DType::float32});
  EXPECT_EQ(l.full_shape(), Shape({4, 2}));
  EXPECT_EQ(l.shard(0).offset, (Ints{0, 0}));
  EXPECT_EQ(l.shard(1).offset, (Ints{1, 0}));
  EXPECT_EQ(l.shard(2).offset, (Ints{3, 0}));
}

TEST(ShardLayout, R_SV_ShardsMustAgreeOnDtypeAndTrailingDims) {
  EXPECT_EQ(error_of([] {
              ShardLayout::of_shards("sv", {{1, 2}, {1, 2}}, {DType::float32, DType::int32});
            }),
            "shards of ShardedVariable 'sv' must have the same dtype: shard 0 is float32, shard 1 "
            "is int32");
  EXPECT_EQ(error_of([] {
              ShardLayout::of_shards("sv", {{1, 2}, {1, 3}}, {DType::float32, DType::float32});
            }),
            "shards of ShardedVariable 'sv' must have the same shapes except for the first axis: "
            "shard 0 is [1, 2], shard 1 is [1, 3]");
  EXPECT_EQ(error_of([] { ShardLayout::of_shards("sv", {}, {}); }),
            "ShardedVariable 'sv' needs a non-empty list of shards, each with a dtype");
}

TEST(ShardLayout, R_PS_SPLIT_RejectsScalarsEmptyAxisAndZeroShards) {
  EXPECT_EQ(error_of([] { ShardLayout::split("s", {}, DType::float32, 2); }),
            "cannot shard scalar variable 's': sharding splits axis 0");
  EXPECT_EQ(error_of([] {
              ShardLayout::split("e", {0, 3}, DType::float32, 2);
            }),
            "cannot shard variable 'e' of shape [0, 3]: axis 0 has no rows");
  EXPECT_EQ(error_of([] { ShardLayout::split("w", {4}, DType::float32, 0); }),
            "cannot split variable 'w' into 0 shards: need at least 1");
}
