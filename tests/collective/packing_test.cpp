// Tensor fusion: concat-and-split packing by num_packs and group_by_size by bytes_per_pack
// (mirrored.md §2.7.5 and the packing vectors of §3.2), and pack -> all-reduce -> unpack.

#include "core/packing.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "collective_test_support.hpp"

namespace troupe {
namespace {

using ::testing::HasSubstr;
using Groups = std::vector<std::vector<size_t>>;

Tensor iota(Shape shape, float start = 0) {
  Tensor t(DType::float32, std::move(shape));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = start + float(i);
  return t;
}

std::vector<int64_t> pack_counts(const PackedTensors& p) {
  std::vector<int64_t> out;
  for (const auto& t : p.packs) out.push_back(t.num_elements());
  return out;
}

TEST(Packing, SpecVector_3And5Elements_OnePack) {
  auto p = pack_tensors({iota({3}), iota({5})}, 1);
  EXPECT_EQ(pack_counts(p), (std::vector<int64_t>{8}));
}
TEST(Packing, SpecVector_3And5Elements_TwoPacks) {
  EXPECT_EQ(pack_counts(pack_tensors({iota({3}), iota({5})}, 2)), (std::vector<int64_t>{4, 4}));
}
TEST(Packing, SpecVector_3And5Elements_ThreePacksRemainderLast) {
  EXPECT_EQ(pack_counts(pack_tensors({iota({3}), iota({5})}, 3)), (std::vector<int64_t>{2, 2, 4}));
}
TEST(Packing, SplitSizesFollowSpecFormula) {
  EXPECT_EQ(concat_split_sizes(10, 3), (std::vector<int64_t>{3, 3, 4}));
  EXPECT_EQ(concat_split_sizes(3, 5), (std::vector<int64_t>{0, 0, 0, 0, 3}));
  EXPECT_EQ(concat_split_sizes(0, 2), (std::vector<int64_t>{0, 0}));
  EXPECT_THROW(concat_split_sizes(4, 0), Error);
}
TEST(Packing, ZeroPacksMeansNoPacking) {
  std::vector<Tensor> in{iota({3}), iota({5})};
  auto p = pack_tensors(in, 0);
  EXPECT_FALSE(p.layout.packed);
  ASSERT_EQ(p.packs.size(), 2u);
  EXPECT_TRUE(p.packs[0].shares_buffer_with(in[0]));
  auto back = unpack_tensors(p.packs, p.layout);
  EXPECT_TRUE(back[1].shares_buffer_with(in[1]));
}
TEST(Packing, NegativeNumPacksRejectedWithSpecMessage) {
  try {
    pack_tensors({iota({3})}, -2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_STREQ(e.what(), "NCCL all-reduce requires num_packs >= 0, but -2 is specified");
  }
  try {
    check_num_packs(-1, "HierarchicalCopyAllReduce");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "HierarchicalCopyAllReduce requires num_packs >= 0, but -1 is specified");
  }
}
TEST(Packing, MixedDtypesRejectedNamingTensor) {
  try {
    pack_tensors({iota({3}), Tensor::zeros(DType::int32, {2})}, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("tensor 0 is float32, tensor 1 is int32"));
  }
}

class PackRoundTrip : public ::testing::TestWithParam<int> {};
TEST_P(PackRoundTrip, UnpackOfPackIsIdentityOverShapes) {
  std::vector<Tensor> in{iota({2, 3}),    iota({}, 100), iota({0}),
                         iota({4, 0, 2}), iota({7}, 50), iota({1, 1, 1}, 9)};
  auto p = pack_tensors(in, GetParam());
  int64_t total = 0;
  for (const auto& t : p.packs) total += t.num_elements();
  EXPECT_EQ(total, 6 + 1 + 0 + 0 + 7 + 1);
  auto back = unpack_tensors(p.packs, p.layout);
  ASSERT_EQ(back.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i)
    EXPECT_TRUE(back[i].bitwise_equal(in[i])) << "tensor " << i;
}
INSTANTIATE_TEST_SUITE_P(Packing, PackRoundTrip, ::testing::Values(0, 1, 2, 3, 7, 20));

TEST(Packing, EmptyListPacksToNothing) {
  auto p = pack_tensors({}, 2);
  EXPECT_TRUE(p.packs.empty());
  EXPECT_TRUE(unpack_tensors(p.packs, p.layout).empty());
}
TEST(Packing, UnpackRejectsPacksThatDoNotFitLayout) {
  auto p = pack_tensors({iota({3}), iota({5})}, 2);
  try {
    unpack_tensors({p.packs[0]}, p.layout);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("got 1 packs, layout has 2"));
  }
  try {
    unpack_tensors({p.packs[0], iota({3})}, p.layout);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("pack 1 is float32[3], layout expects float32[4]"));
  }
}

TEST(Packing, SpecVector_PackedAllReduceEqualsUnpackedPath) {
  // 3- and 5-element tensors on 3 replicas, all-reduced as packs (num_packs = 3) through the
  // ring, unpacked: equal to reducing each tensor on its own (num_packs = 0).
  const int n = 3;
  auto reduce_all = [&](int64_t num_packs) {
    std::vector<PackedTensors> per_rank;
    for (int r = 0; r < n; ++r)
      per_rank.push_back(pack_tensors({iota({3}, float(r)), iota({5}, 10.f * r)}, num_packs));
    std::vector<std::vector<Tensor>> reduced(n);
    for (size_t k = 0; k < per_rank[0].packs.size(); ++k) {
      auto peers = testing::make_peers(CrossDeviceOpKind::collective_all_reduce, n, DType::float32,
                                       per_rank[0].packs[k].num_elements(), 4);
      std::vector<Tensor> inputs;
      for (int r = 0; r < n; ++r) inputs.push_back(per_rank[r].packs[k]);
      auto out = run_locally(peers, inputs);
      for (int r = 0; r < n; ++r) reduced[r].push_back(out[r]);
    }
    return unpack_tensors(reduced[1], per_rank[1].layout);
  };
  auto packed = reduce_all(3);
  auto plain = reduce_all(0);
  ASSERT_EQ(packed.size(), 2u);
  EXPECT_EQ(packed[0].shape(), Shape{3});
  EXPECT_EQ(packed[1].shape(), Shape{5});
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(packed[i].bitwise_equal(plain[i]));
  EXPECT_EQ(packed[0].to_vector<float>(), (std::vector<float>{3, 6, 9}));  // sum of r + i, r = 0..2
}

TEST(GroupBySize, SpecVector_50BytesGivesTwoPacks) {
  EXPECT_EQ(group_by_size(std::vector<int64_t>{40, 40, 40}, 50), (Groups{{0, 1}, {2}}));
}
TEST(GroupBySize, SpecVector_ZeroBytesGivesOnePack) {
  EXPECT_EQ(group_by_size(std::vector<int64_t>{40, 40, 40}, 0), (Groups{{0, 1, 2}}));
}
TEST(GroupBySize, SpecVector_30BytesGivesOnePackEach) {
  EXPECT_EQ(group_by_size(std::vector<int64_t>{40, 40, 40}, 30), (Groups{{0}, {1}, {2}}));
}
TEST(GroupBySize, NewPackOnlyWhenStrictlyMore) {
  // 40 is not more than 40, so the second tensor joins the first pack.
  EXPECT_EQ(group_by_size(std::vector<int64_t>{40, 40, 40}, 40), (Groups{{0, 1}, {2}}));
  EXPECT_TRUE(group_by_size(std::vector<int64_t>{}, 10).empty());
}
TEST(GroupBySize, FromTensorsUsesByteSizes) {
  std::vector<Tensor> t{iota({10}), iota({10}), iota({10})};  // 40 B each
  EXPECT_EQ(group_by_size(t, 50), (Groups{{0, 1}, {2}}));
}
TEST(GroupBySize, NegativeBytesPerPackRejected) {
  try {
    group_by_size(std::vector<int64_t>{4}, -1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "bytes_per_pack must be non-negative, got -1");
  }
}
TEST(GroupBySize, CollectiveOrderReversesBeforeGrouping) {
  // 8, 40, 40 bytes reversed is 40, 40, 8: with 50 B packs -> {t2, t1}, {t0}.
  std::vector<Tensor> t{iota({2}), iota({10}), iota({10})};
  EXPECT_EQ(collective_pack_groups(t, 50), (Groups{{2, 1}, {0}}));
  EXPECT_EQ(collective_pack_groups(t, 0), (Groups{{2, 1, 0}}));
}
TEST(GroupBySize, ConcatFlatAndSplitFlatRoundTrip) {
  std::vector<Tensor> t{iota({2, 2}), iota({}, 7)};
  Tensor flat = concat_flat(t);
  EXPECT_EQ(flat.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 7}));
  auto back = split_flat(flat, {Shape{2, 2}, Shape{}});
  EXPECT_TRUE(back[0].bitwise_equal(t[0]));
  EXPECT_TRUE(back[1].bitwise_equal(t[1]));
  EXPECT_TRUE(back[0].shares_buffer_with(flat));
  EXPECT_THROW(split_flat(flat, {Shape{2}}), Error);
}

}  // namespace
}  // namespace troupe
