// Integer and slice indexing over shards (spec variables.md R-SLICE, R-SLICE-DEC; T-SLICE-*).
#include <gtest/gtest.h>

#include "core/ps/sharded_index.hpp"
#include "tests/common/error_of.hpp"

using namespace troupe;
using troupe::testing::error_of;
using Ints = std::vector<int64_t>;
using Local = std::optional<LocalSlice>;

namespace {

const Ints kSlice1Offsets{0, 3, 6, 10};  // v0=[0,1,2], v1=[3,4,5], v2=[6,7,8,9]
const Ints kSlice2Offsets{0, 3, 6, 8};   // rows [3,3,2]

// Global row numbers of sv[slice] (shard offset + local row).
Ints global_rows(const SliceSpec& s, const Ints& offsets) {
  Ints out;
  for (auto r : slice_rows(s, offsets)) out.push_back(offsets[size_t(r.shard)] + r.row);
  return out;
}

// What Python's list(range(dim))[start:stop:step] gives.
Ints python_slice(const SliceSpec& s, int64_t dim) {
  int64_t step = s.step.value_or(1);
  auto norm = [&](std::optional<int64_t> v, int64_t def, int64_t lo, int64_t hi) {
    if (!v) return def;
    int64_t x = *v < 0 ? *v + dim : *v;
    return x < lo ? lo : (x > hi ? hi : x);
  };
  Ints out;
  if (step > 0) {
    int64_t a = norm(s.start, 0, 0, dim), b = norm(s.stop, dim, 0, dim);
    for (int64_t i = a; i < b; i += step) out.push_back(i);
  } else {
    int64_t a = norm(s.start, dim - 1, -1, dim - 1), b = norm(s.stop, -1, -1, dim - 1);
    for (int64_t i = a; i > b; i += step) out.push_back(i);
  }
  return out;
}

}  // namespace

TEST(ShardedIndex, T_SLICE_1_FullSlice) {
  auto parts = decompose_slice({}, kSlice1Offsets);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0], (Local{LocalSlice{0, 3, 1}}));
  EXPECT_EQ(parts[1], (Local{LocalSlice{0, 3, 1}}));
  EXPECT_EQ(parts[2], (Local{LocalSlice{0, 4, 1}}));
  EXPECT_EQ(global_rows({}, kSlice1Offsets), (Ints{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(ShardedIndex, T_SLICE_1_Stepped2To8By3) {
  SliceSpec s{2, 8, 3};
  auto parts = decompose_slice(s, kSlice1Offsets);
  EXPECT_EQ(parts[0], (Local{LocalSlice{2, 3, 3}}));
  EXPECT_EQ(parts[1], (Local{LocalSlice{2, 3, 3}}));
  EXPECT_EQ(parts[2], Local{});
  EXPECT_EQ(global_rows(s, kSlice1Offsets), (Ints{2, 5}));
}

TEST(ShardedIndex, T_SLICE_1_Negative9To3ByMinus2) {
  SliceSpec s{9, 3, -2};
  auto parts = decompose_slice(s, kSlice1Offsets);
  EXPECT_EQ(parts[0], Local{});
  EXPECT_EQ(parts[1], (Local{LocalSlice{2, 0, -2}}));
  EXPECT_EQ(parts[2], (Local{LocalSlice{3, std::nullopt, -2}}));
  EXPECT_EQ(global_rows(s, kSlice1Offsets), (Ints{9, 7, 5}));
}

TEST(ShardedIndex, T_SLICE_2_IntegerIndexHalfOpenIntervalErratum3) {
  // TF's strict comparison would send sv[0] and sv[3] to the last shard with a negative row.
  EXPECT_EQ(locate_row(0, kSlice2Offsets), (ShardRow{0, 0}));
  EXPECT_EQ(locate_row(3, kSlice2Offsets), (ShardRow{1, 0}));
  EXPECT_EQ(locate_row(-2, kSlice2Offsets), (ShardRow{2, 0}));
  EXPECT_EQ(locate_row(7, kSlice2Offsets), (ShardRow{2, 1}));
}

TEST(ShardedIndex, T_SLICE_2_OutOfBoundsIsAnErrorErratum4) {
  EXPECT_EQ(error_of([] { locate_row(8, kSlice2Offsets); }),
            "index 8 is out of bounds for axis 0 with size 8");
  EXPECT_EQ(error_of([] { locate_row(-9, kSlice2Offsets); }),
            "index -9 is out of bounds for axis 0 with size 8");
}

TEST(ShardedIndex, T_SLICE_3_ZeroStepAndEmptySlice) {
  EXPECT_EQ(error_of([] {
              decompose_slice({1, 4, 0}, kSlice2Offsets);
            }),
            "slice step cannot be zero");
  EXPECT_TRUE(slice_rows({5, 3, std::nullopt}, kSlice2Offsets).empty());
  for (auto& part : decompose_slice({5, 3, std::nullopt}, kSlice2Offsets)) EXPECT_FALSE(part);
}

TEST(ShardedIndex, EmptyShardsAreSkippedByIntegerIndex) {
  EXPECT_EQ(locate_row(0, Ints{0, 0, 3}), (ShardRow{1, 0}));
}

TEST(ShardedIndex, R_SLICE_DEC_OutOfRangeBoundsClampLikeNumPy) {
  // The spec's recommendation for the §2.11 quirk: start < -dim0 with step > 1 starts at row 0.
  EXPECT_EQ(global_rows({-100, std::nullopt, 3}, kSlice1Offsets), (Ints{0, 3, 6, 9}));
  EXPECT_EQ(global_rows({100, std::nullopt, -4}, kSlice1Offsets), (Ints{9, 5, 1}));
  EXPECT_EQ(global_rows({std::nullopt, -100, -1}, kSlice1Offsets),
            (Ints{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
}

TEST(ShardedIndex, R_SLICE_DEC_AgreesWithPythonOnEverySliceOfTenRows) {
  // Every start/stop in [-12, 12] plus None and steps ±1..±4 over two shard layouts.
  std::vector<std::optional<int64_t>> bounds{std::nullopt};
  for (int64_t b = -12; b <= 12; ++b) bounds.push_back(b);
  for (const Ints& offsets : {kSlice1Offsets, Ints{0, 1, 1, 5, 10}, Ints{0, 10}}) {
    for (int64_t step : {-4, -3, -2, -1, 1, 2, 3, 4})
      for (auto start : bounds)
        for (auto stop : bounds) {
          SliceSpec s{start, stop, step};
          ASSERT_EQ(global_rows(s, offsets), python_slice(s, 10))
              << "start " << start.value_or(999) << " stop " << stop.value_or(999) << " step "
              << step << " shards " << offsets.size() - 1;
        }
  }
}
