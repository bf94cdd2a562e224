// Restoring sharded checkpoints into another shard count (spec variables.md R-SVSAVE; issue 12:
// 4 -> 1, 2, 3 and 1 -> 4; cluster-and-ps.md E6).
#include <gtest/gtest.h>

#include "core/ps/reshard.hpp"
#include "core/ps/shard_layout.hpp"
#include "tests/common/error_of.hpp"

using namespace troupe;
using troupe::testing::error_of;

namespace {

std::vector<SavedRows> saved_parts(int64_t rows, int64_t parts) {
  std::vector<SavedRows> out;
  auto l = ShardLayout::split("v", {rows}, DType::float32, parts);
  for (size_t i = 0; i < l.num_shards(); ++i)
    out.push_back({l.row_offsets()[i], l.row_counts()[i]});
  return out;
}

// Applies a plan to row numbers: every new row must receive exactly its own global row.
void expect_every_row_lands_once(int64_t rows, int64_t from, int64_t to) {
  auto saved = saved_parts(rows, from);
  auto target = ShardLayout::split("v", {rows}, DType::float32, to).row_offsets();
  std::vector<int64_t> got(size_t(rows), -1);
  for (auto& c : plan_reshard("v", saved, target))
    for (int64_t k = 0; k < c.rows; ++k) {
      const int64_t dst = target[c.target] + c.target_row + k;
      ASSERT_EQ(got[size_t(dst)], -1) << "row written twice";
      got[size_t(dst)] = saved[c.source].first_row + c.source_row + k;
    }
  for (int64_t r = 0; r < rows; ++r) EXPECT_EQ(got[size_t(r)], r) << from << " -> " << to;
}

}  // namespace

TEST(Reshard, FourPartsIntoOneTwoThreeAndOneIntoFour) {
  for (int64_t to : {1, 2, 3}) expect_every_row_lands_once(10, 4, to);
  expect_every_row_lands_once(10, 1, 4);
  for (int64_t from = 1; from <= 6; ++from)
    for (int64_t to = 1; to <= 6; ++to) expect_every_row_lands_once(13, from, to);
}

TEST(Reshard, FourIntoThreeCopiesOverlapsInOrder) {
  // 10 rows: saved [3,3,2,2] at 0,3,6,8; new [4,3,3] at 0,4,7.
  auto plan = plan_reshard("v", saved_parts(10, 4), {0, 4, 7, 10});
  std::vector<RowCopy> want{{0, 0, 0, 0, 3}, {1, 0, 0, 3, 1}, {1, 1, 1, 0, 2},
                            {2, 0, 1, 2, 1}, {2, 1, 2, 0, 1}, {3, 0, 2, 1, 2}};
  EXPECT_EQ(plan, want);
}

TEST(Reshard, SavedPartsMayComeInAnyOrder) {
  std::vector<SavedRows> saved{{6, 4}, {0, 6}};
  auto plan = plan_reshard("v", saved, {0, 10});
  std::vector<RowCopy> want{{1, 0, 0, 0, 6}, {0, 0, 0, 6, 4}};
  EXPECT_EQ(plan, want);
}

TEST(Reshard, GapsOverlapsAndMissingRowsAreDataLoss) {
  EXPECT_EQ(error_of([] {
              plan_reshard("emb", {{0, 3}, {4, 6}}, {0, 10});
            }),
            "checkpoint of 'emb' is not one tiling of its rows: a part starts at row 4 where row "
            "3 was expected");
  EXPECT_EQ(error_of([] {
              plan_reshard("emb", {{0, 5}, {4, 6}}, {0, 10});
            }),
            "checkpoint of 'emb' is not one tiling of its rows: a part overlaps at row 4 where "
            "row 5 was expected");
  EXPECT_EQ(error_of([] {
              plan_reshard("emb", {{0, 8}}, {0, 10});
            }),
            "checkpoint of 'emb' holds rows [0, 8), the variable has 10 rows");
}
