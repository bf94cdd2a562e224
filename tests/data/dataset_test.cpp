// Sources and transformations, against closed-form expectations.
#include <algorithm>
#include <set>

#include "data_test_util.hpp"

using namespace troupe;
using namespace troupe::data;
using namespace troupe::data::testing;
using V = std::vector<int64_t>;

TEST(Dataset, RangeCountsUpDownAndEmpty) {
  EXPECT_EQ(drain_flat(Dataset::range(0, 5)), (V{0, 1, 2, 3, 4}));
  EXPECT_EQ(drain_flat(Dataset::range(5, 0, -2)), (V{5, 3, 1}));
  EXPECT_EQ(drain_flat(Dataset::range(3, 3)), V{});
  EXPECT_EQ(Dataset::range(0, 10, 3).cardinality(), 4);
  EXPECT_ERROR_CONTAINS(Dataset::range(0, 1, 0), "step must not be 0");
}

TEST(Dataset, FromTensorSlicesYieldsZeroCopyRows) {
  auto x = Tensor::from_vector<float>({3, 2}, {0, 1, 2, 3, 4, 5});
  auto y = Tensor::from_vector<int64_t>({3}, {7, 8, 9});
  auto ds = Dataset::from_tensor_slices({x, y});
  EXPECT_EQ(spec_to_string(ds.element_spec()), "(float32[2], int64[])");
  auto it = ds.make_iterator();
  it.next();
  auto e = it.next();
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)[0].to_vector<float>(), (std::vector<float>{2, 3}));
  EXPECT_EQ((*e)[1].scalar<int64_t>(), 8);
  EXPECT_TRUE((*e)[0].shares_buffer_with(x));
  EXPECT_ERROR_CONTAINS(Dataset::from_tensor_slices({x, Tensor::zeros(DType::int64, {2})}),
                        "tensor 1 has 2 rows, tensor 0 has 3");
}

TEST(Dataset, FromGeneratorStopsAtNulloptAndChecksSpec) {
  auto gen = [](int64_t i) -> std::optional<Element> {
    if (i == 3) return std::nullopt;
    return Element{Tensor::from_scalar<int64_t>(i * i)};
  };
  auto ds = Dataset::from_generator(gen, {{DType::int64, {}}});
  EXPECT_EQ(drain_flat(ds), (V{0, 1, 4}));
  auto bad = Dataset::from_generator(gen, {{DType::float32, {}}});
  EXPECT_ERROR_CONTAINS(drain(bad),
                        "from_generator: element 0 component 0 is int64[], spec says float32[]");
}

TEST(Dataset, MapAndFilter) {
  auto sq = Dataset::range(0, 6).map([](const Element& e) {
    return Element{Tensor::from_scalar<int64_t>(e[0].scalar<int64_t>() * 10)};
  });
  EXPECT_EQ(drain_flat(sq), (V{0, 10, 20, 30, 40, 50}));
  auto even =
      Dataset::range(0, 7).filter([](const Element& e) { return e[0].scalar<int64_t>() % 2 == 0; });
  EXPECT_EQ(drain_flat(even), (V{0, 2, 4, 6}));
  EXPECT_EQ(even.cardinality(), kUnknownCardinality);
  auto wrong = Dataset::range(0, 2).map(
      [](const Element&) { return Element{Tensor::from_scalar<float>(1.0f)}; });
  EXPECT_ERROR_CONTAINS(drain(wrong), "map: component 0 is float32[], declared int64[]");
}

TEST(Dataset, BatchKeepsOrDropsTheRemainder) {
  EXPECT_EQ(drain(Dataset::range(0, 7).batch(3)), (std::vector<V>{{0, 1, 2}, {3, 4, 5}, {6}}));
  EXPECT_EQ(drain(Dataset::range(0, 7).batch(3, true)), (std::vector<V>{{0, 1, 2}, {3, 4, 5}}));
  EXPECT_EQ(Dataset::range(0, 7).batch(3).element_spec()[0].dims, (V{kUnknownDim}));
  EXPECT_EQ(Dataset::range(0, 7).batch(3, true).element_spec()[0].dims, V{3});
  EXPECT_EQ(Dataset::range(0, 7).batch(3).cardinality(), 3);
  EXPECT_EQ(Dataset::range(0, 7).batch(3, true).cardinality(), 2);
  EXPECT_ERROR_CONTAINS(Dataset::range(0, 7).batch(0), "batch size must be > 0, got 0");
}

TEST(Dataset, BatchOfRaggedElementsNamesTheElement) {
  auto ds = Dataset::from_generator(
      [](int64_t i) -> std::optional<Element> {
        if (i == 2) return std::nullopt;
        return Element{Tensor::zeros(DType::float32, {i + 1})};
      },
      {{DType::float32, {kUnknownDim}}});
  EXPECT_ERROR_CONTAINS(drain(ds.batch(2)), "element 1 is float32[2] but element 0 is float32[1]");
}

TEST(Dataset, ShuffleIsAPermutationDeterministicPerSeed) {
  auto a = drain_flat(Dataset::range(0, 50).shuffle(10, 42));
  auto b = drain_flat(Dataset::range(0, 50).shuffle(10, 42));
  auto c = drain_flat(Dataset::range(0, 50).shuffle(10, 43));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, drain_flat(Dataset::range(0, 50)));
  std::sort(a.begin(), a.end());
  EXPECT_EQ(a, drain_flat(Dataset::range(0, 50)));
  // A buffer of 1 cannot reorder anything.
  EXPECT_EQ(drain_flat(Dataset::range(0, 9).shuffle(1, 5)), drain_flat(Dataset::range(0, 9)));
}

TEST(Dataset, ShuffleBufferBoundsHowFarElementsMove) {
  // With a buffer of B, element k can only be emitted once the element k - B + 1 ... has been
  // read: output position p holds a value <= p + B - 1.
  auto out = drain_flat(Dataset::range(0, 200).shuffle(4, 9));
  for (size_t p = 0; p < out.size(); ++p) EXPECT_LE(out[p], int64_t(p) + 3);
}

TEST(Dataset, RepeatReshufflesEachEpochUnlessAskedNotTo) {
  auto two = drain_flat(Dataset::range(0, 10).shuffle(10, 3).repeat(2));
  ASSERT_EQ(two.size(), 20u);
  V first(two.begin(), two.begin() + 10), second(two.begin() + 10, two.end());
  EXPECT_NE(first, second);
  auto same = drain_flat(Dataset::range(0, 10).shuffle(10, 3, false).repeat(2));
  EXPECT_EQ(V(same.begin(), same.begin() + 10), V(same.begin() + 10, same.end()));
}

TEST(Dataset, RepeatTakeSkip) {
  EXPECT_EQ(drain_flat(Dataset::range(0, 3).repeat(2)), (V{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(drain_flat(Dataset::range(0, 3).repeat().take(7)), (V{0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(Dataset::range(0, 3).repeat().cardinality(), kInfiniteCardinality);
  EXPECT_EQ(Dataset::range(0, 3).repeat().take(7).cardinality(), 7);
  EXPECT_EQ(drain_flat(Dataset::range(0, 6).skip(4)), (V{4, 5}));
  EXPECT_EQ(drain_flat(Dataset::range(0, 6).skip(10)), V{});
  EXPECT_EQ(Dataset::range(0, 6).skip(4).cardinality(), 2);
  // repeat() of an empty dataset ends instead of spinning.
  EXPECT_EQ(drain_flat(Dataset::range(0, 0).repeat()), V{});
}

TEST(Dataset, ShardKeepsEveryNth) {
  EXPECT_EQ(drain_flat(Dataset::range(0, 10).shard(3, 1)), (V{1, 4, 7}));
  EXPECT_EQ(Dataset::range(0, 10).shard(3, 0).cardinality(), 4);
  EXPECT_EQ(Dataset::range(0, 10).shard(3, 2).cardinality(), 3);
  EXPECT_ERROR_CONTAINS(Dataset::range(0, 10).shard(3, 3), "shard: index 3 outside [0, 3)");
}

TEST(Dataset, PrefetchChangesNothingVisible) {
  EXPECT_EQ(drain(Dataset::range(0, 9).batch(2).prefetch(3)), drain(Dataset::range(0, 9).batch(2)));
  EXPECT_ERROR_CONTAINS(Dataset::range(0, 9).prefetch(0), "prefetch: buffer size must be > 0");
}
