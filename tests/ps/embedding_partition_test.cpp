// Routing embedding ids to shards (spec variables.md R-EMB; T-EMB-*).
#include <gtest/gtest.h>

#include "core/ps/embedding_partition.hpp"
#include "tests/common/error_of.hpp"

using namespace troupe;
using troupe::testing::error_of;
using Ints = std::vector<int64_t>;

namespace {

// The ids each shard holds, listed by routing every id of the space.
std::vector<Ints> ids_per_shard(const EmbeddingRouter& router) {
  std::vector<Ints> out(router.num_shards());
  for (int64_t id = 0; id < router.total_rows(); ++id) {
    auto at = router.route(id);
    EXPECT_EQ(int64_t(out[size_t(at.shard)].size()), at.row) << "id " << id;
    out[size_t(at.shard)].push_back(id);
  }
  return out;
}

}  // namespace

TEST(EmbeddingPartition, T_EMB_1_ThirteenIdsOverFivePartitionsMod) {
  EmbeddingRouter r({3, 3, 3, 2, 2}, PartitionStrategy::mod);
  EXPECT_EQ(ids_per_shard(r),
            (std::vector<Ints>{{0, 5, 10}, {1, 6, 11}, {2, 7, 12}, {3, 8}, {4, 9}}));
}

TEST(EmbeddingPartition, T_EMB_1_ThirteenIdsOverFivePartitionsDiv) {
  EmbeddingRouter r({3, 3, 3, 2, 2}, PartitionStrategy::div);
  EXPECT_EQ(ids_per_shard(r),
            (std::vector<Ints>{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 10}, {11, 12}}));
  EXPECT_EQ(r.route(9), (ShardRow{3, 0}));
  EXPECT_EQ(r.route(11), (ShardRow{4, 0}));
}

TEST(EmbeddingPartition, T_EMB_2_IdOneOfTwoSingleRowShards) {
  for (auto s : {PartitionStrategy::div, PartitionStrategy::mod})
    EXPECT_EQ(EmbeddingRouter({1, 1}, s).route(1), (ShardRow{1, 0}));
}

TEST(EmbeddingPartition, T_EMB_3_DivAndModPickDifferentRows) {
  // Shards [[1,2],[3,4]], [[5,6],[7,8]], [[9,10]]; ids [0,3,4].
  const Ints ids{0, 3, 4};
  EmbeddingRouter div({2, 2, 1}, PartitionStrategy::div);
  auto d = div.route_all(ids);
  EXPECT_EQ(d.rows, (std::vector<Ints>{{0}, {1}, {0}}));  // rows [1,2], [7,8], [9,10]
  EXPECT_EQ(d.positions, (std::vector<Ints>{{0}, {1}, {2}}));
  EmbeddingRouter mod({2, 2, 1}, PartitionStrategy::mod);
  auto m = mod.route_all(ids);
  EXPECT_EQ(m.rows, (std::vector<Ints>{{0, 1}, {1}, {}}));  // rows [1,2], [3,4], [7,8]
  EXPECT_EQ(m.positions, (std::vector<Ints>{{0, 1}, {2}, {}}));
}

TEST(EmbeddingPartition, R_EMB_DivMatchesTheRowSplitForManySizes) {
  // "div" routing equals the contiguous PS split for every total and shard count up to 12.
  for (int64_t p = 1; p <= 12; ++p)
    for (int64_t total = p; total <= 40; ++total) {
      Ints rows(size_t(p), total / p);
      for (int64_t i = 0; i < total % p; ++i) ++rows[size_t(i)];
      EmbeddingRouter r(rows, PartitionStrategy::div);
      int64_t shard = 0, start = 0;
      for (int64_t id = 0; id < total; ++id) {
        while (id >= start + rows[size_t(shard)]) start += rows[size_t(shard++)];
        ASSERT_EQ(r.route(id), (ShardRow{shard, id - start})) << "P " << p << " total " << total;
      }
    }
}

TEST(EmbeddingPartition, R_EMB_UnknownStrategyAndBadIds) {
  EXPECT_EQ(error_of([] { parse_partition_strategy("hash"); }),
            "Unrecognized partition strategy: 'hash' (use \"div\" or \"mod\")");
  EXPECT_EQ(parse_partition_strategy("mod"), PartitionStrategy::mod);
  EmbeddingRouter r({2, 2, 1}, PartitionStrategy::div);
  EXPECT_EQ(error_of([&] { r.route(5); }), "embedding id 5 is not in [0, 5)");
  EXPECT_EQ(error_of([&] { r.route(-1); }), "embedding id -1 is not in [0, 5)");
  EmbeddingRouter m({1, 2}, PartitionStrategy::mod);
  EXPECT_EQ(error_of([&] { m.route(2); }),
            "embedding id 2 maps to row 1 of shard 0 (\"mod\"), which has only 1 rows");
}

TEST(EmbeddingPartition, R_EMB_DivNeedsTheRowSplitLayout) {
  // T-SV-1's hand-built shards (1, 2, 1 rows) are not the layout "div" assumes.
  EXPECT_EQ(error_of([] {
              EmbeddingRouter({1, 2, 1}, PartitionStrategy::div);
            }),
            "embedding_lookup with partition strategy \"div\" over 3 shards of 4 rows needs "
            "shard sizes [2, 1, 1], got [1, 2, 1]");
  EXPECT_EQ(error_of([] { EmbeddingRouter({}, PartitionStrategy::div); }),
            "embedding_lookup needs at least one shard");
}
