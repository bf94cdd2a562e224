// Partitioner arithmetic (spec variables.md §2.9 R-PART-*, §3 T-PART-*; cluster-and-ps.md T-V2-2).
#include <gtest/gtest.h>

#include "core/ps/partitioners.hpp"
#include "tests/common/error_of.hpp"

using namespace troupe;
using troupe::testing::error_of;
using Parts = std::vector<int64_t>;

TEST(Partitioners, T_PART_1_Fixed2On10x3) {
  EXPECT_EQ(FixedShardsPartitioner(2)({10, 3}, DType::float32), (Parts{2, 1}));
}

TEST(Partitioners, T_PART_2_MinSize4Max2On6x1) {
  EXPECT_EQ(MinSizePartitioner(4, 2)({6, 1}, DType::float32), (Parts{2, 1}));
}

TEST(Partitioners, T_PART_3_MinSize4Max10On6x1) {
  EXPECT_EQ(MinSizePartitioner(4, 10)({6, 1}, DType::float32), (Parts{6, 1}));
}

TEST(Partitioners, T_PART_4_MinSizeDefault256KiBOn1024x1024) {
  EXPECT_EQ(MinSizePartitioner(256 << 10, 16)({1024, 1024}, DType::float32), (Parts{16, 1}));
  EXPECT_EQ(MinSizePartitioner(256 << 10, 100)({1024, 1024}, DType::float32), (Parts{16, 1}));
  EXPECT_EQ(MinSizePartitioner(256 << 10, 3)({1024, 1024}, DType::float32), (Parts{3, 1}));
  // The defaults (max_shards = 1) never partition.
  EXPECT_EQ(MinSizePartitioner()({1024, 1024}, DType::float32), (Parts{1, 1}));
}

TEST(Partitioners, T_PART_5_MaxSize) {
  EXPECT_EQ(MaxSizePartitioner(4)({6, 1}, DType::float32), (Parts{6, 1}));
  EXPECT_EQ(MaxSizePartitioner(4, 2)({6, 1}, DType::float32), (Parts{2, 1}));
  EXPECT_EQ(MaxSizePartitioner(1024)({6, 1}, DType::float32), (Parts{1, 1}));
}

TEST(Partitioners, T_PART_6_MaxSizeAtLeastOneSlicePerShard) {
  EXPECT_EQ(MaxSizePartitioner(10)({6, 1}, DType::float32), (Parts{3, 1}));
  EXPECT_EQ(MaxSizePartitioner(2)({6, 1}, DType::float32), (Parts{6, 1}));
}

TEST(Partitioners, T_PART_7_MinSizeCeilMakesShardsBelowTheMinimum) {
  // 24 B / 5 = 4.8 -> ceil 5: reproduce the formula, not the prose.
  EXPECT_EQ(MinSizePartitioner(5, 10)({6, 1}, DType::float32), (Parts{5, 1}));
}

TEST(Partitioners, T_PART_8_MinSizeStringsAndAxisBeyondRank) {
  EXPECT_EQ(MinSizePartitioner(16, 100, 16).for_strings({10}), (Parts{10}));
  EXPECT_EQ(error_of([] {
              MinSizePartitioner(4, 2)({6, 1}, DType::float32, 2);
            }),
            "cannot partition along axis 2 when shape is only [6, 1]");
}

TEST(Partitioners, T_PART_9_MaxSizeValidationAndNoCap) {
  EXPECT_EQ(error_of([] { MaxSizePartitioner(0); }),
            "MaxSizePartitioner: max_shard_bytes must be positive, got 0");
  EXPECT_EQ(error_of([] { MaxSizePartitioner(4, -1); }),
            "MaxSizePartitioner: max_shards must be positive (0 = no limit), got -1");
  EXPECT_EQ(error_of([] { MaxSizePartitioner(4, 0, 0); }),
            "MaxSizePartitioner: bytes_per_string must be positive, got 0");
  EXPECT_EQ(MaxSizePartitioner(4, 0)({6, 1}, DType::float32), (Parts{6, 1}));  // 0 = no cap
  EXPECT_EQ(MaxSizePartitioner(2000)({100, 10}, DType::float32), (Parts{2, 1}));
}

TEST(Partitioners, T_PART_10_FixedCappedByDim0) {
  EXPECT_EQ(FixedShardsPartitioner(2)({1, 5}, DType::float32), (Parts{1, 1}));
  EXPECT_EQ(FixedShardsPartitioner(8)({5, 4}, DType::float32), (Parts{5, 1}));
}

TEST(Partitioners, R_PART_FIXED_ZeroShardsRejected) {
  EXPECT_EQ(error_of([] { FixedShardsPartitioner(0); }),
            "FixedShardsPartitioner: num_shards must be at least 1, got 0");
}

TEST(Partitioners, R_PART_MIN_ZeroMinimumRejected) {
  EXPECT_EQ(error_of([] { MinSizePartitioner(0, 2); }),
            "MinSizePartitioner: min_shard_bytes must be positive, got 0");
}

TEST(Partitioners, R_PART_MAX_EmptyAxisIsOneShard) {
  EXPECT_EQ(MaxSizePartitioner(4)({0, 3}, DType::float32), (Parts{1, 1}));
  EXPECT_EQ(MaxSizePartitioner(4)({5, 0}, DType::float32), (Parts{1, 1}));
}

TEST(Partitioners, StringSizingUsesBytesPerString) {
  // 10 strings × 8 B = 80 B, 3 slices of 8 B per 24 B shard -> 4 shards.
  EXPECT_EQ(MaxSizePartitioner(24, 0, 8).for_strings({10}), (Parts{4}));
}

TEST(Partitioners, T_V2_2_MinSizeOnEmbeddingsAndKernels) {
  MinSizePartitioner p(256 << 10, 2);
  EXPECT_EQ(p({1024, 1024}, DType::float32), (Parts{2, 1}));  // 16 wanted, capped to 2
  EXPECT_EQ(p({8, 16384}, DType::float32), (Parts{2, 1}));    // 512 KiB -> 2
  EXPECT_EQ(p({16384, 1}, DType::float32), (Parts{1, 1}));    // 64 KiB -> ceil(0.25) = 1
}

TEST(Partitioners, T_V2_2_BadResultsRejected) {
  Partitioner two_by_two = [](const Shape&, DType) { return Parts{2, 2}; };
  Partitioner zero = [](const Shape&, DType) { return Parts{0, 1}; };
  EXPECT_EQ(error_of([&] {
              shard_count_for(&two_by_two, {4, 4}, DType::float32, false, "emb");
            }),
            "partitioner returned [2, 2] for variable 'emb' of shape [4, 4]: it must give one "
            "entry per axis, a first entry of at least 1 and 1 for every other axis (only axis 0 "
            "is partitioned)");
  EXPECT_NE(error_of([&] {
              shard_count_for(&zero, {4, 4}, DType::float32, false, "emb");
            }).find("partitioner returned [0, 1] for variable 'emb'"),
            std::string::npos);
}

TEST(Partitioners, R_PS_SHARD_CRITERIA) {
  Partitioner fixed = FixedShardsPartitioner(3);
  EXPECT_EQ(shard_count_for(&fixed, {10, 2}, DType::float32, false, "w"), 3);
  EXPECT_EQ(shard_count_for(&fixed, {2, 2}, DType::float32, false, "w"), 2);    // min(3, dim0)
  EXPECT_EQ(shard_count_for(nullptr, {10, 2}, DType::float32, false, "w"), 1);  // none set
  EXPECT_EQ(shard_count_for(&fixed, {10, 2}, DType::float32, true, "w"), 1);    // colocated
  EXPECT_EQ(shard_count_for(&fixed, {}, DType::float32, false, "w"), 1);        // scalar
}
