// Uneven data over 2, 3 and 4 replicas: per-replica batches from the rebatched stream, with
// empty (leading dimension 0) batches for replicas without data (spec §2.8.4).
#include "core/data/partial_batch.hpp"
#include "core/data/rebatch.hpp"
#include "data_test_util.hpp"

using namespace troupe;
using namespace troupe::data;
using namespace troupe::data::testing;
using V = std::vector<int64_t>;

namespace {
// One worker with `replicas` replicas reads `ds` (batched by the global batch size): each step
// pulls one element per replica, as the multi-device iterator hands them out round-robin.
std::vector<std::vector<Element>> run_steps(const Dataset& ds, int64_t replicas) {
  auto it = rebatch_for_worker(ds, 1, replicas, 0).make_iterator();
  auto spec = rebatch_for_worker(ds, 1, replicas, 0).element_spec();
  std::vector<std::vector<Element>> steps;
  for (;;) {
    std::vector<std::optional<Element>> pulled;
    for (int64_t r = 0; r < replicas; ++r) pulled.push_back(it.next());
    auto step = fill_missing_replicas(pulled, spec);
    if (!step) break;
    steps.push_back(*step);
  }
  return steps;
}
}  // namespace

TEST(PartialBatch, UnevenDataOverTwoThreeFourReplicas) {
  // 11 elements in global batches of 4: steps of 4, 4 and a short 3.
  auto ds = Dataset::from_tensor_slices(
                {Tensor::from_vector<int64_t>({11, 1}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})})
                .batch(4);
  struct Case {
    int64_t replicas;
    std::vector<std::vector<V>> want;  // [step][replica] -> values
  };
  std::vector<Case> cases = {
      {2, {{{0, 1}, {2, 3}}, {{4, 5}, {6, 7}}, {{8, 9}, {10}}}},
      {3, {{{0, 1}, {2}, {3}}, {{4, 5}, {6}, {7}}, {{8, 9}, {10}, {}}}},
      {4, {{{0}, {1}, {2}, {3}}, {{4}, {5}, {6}, {7}}, {{8}, {9}, {10}, {}}}},
  };
  for (const auto& c : cases) {
    auto steps = run_steps(ds, c.replicas);
    ASSERT_EQ(steps.size(), c.want.size()) << c.replicas << " replicas";
    for (size_t s = 0; s < steps.size(); ++s)
      for (size_t r = 0; r < steps[s].size(); ++r) {
        EXPECT_EQ(values(steps[s][r]), c.want[s][r]) << c.replicas << " replicas, step " << s;
        EXPECT_EQ(steps[s][r][0].shape(), (Shape{int64_t(c.want[s][r].size()), 1}));
      }
  }
}

TEST(PartialBatch, ReplicasBeyondASmallGlobalBatchGetEmptyBatches) {
  // G = 2 < N = 4: T10's [1, 1, 0, 0]; replicas 2 and 3 always get 0-row batches.
  auto x = Tensor::from_vector<float>({4, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  auto steps = run_steps(Dataset::from_tensor_slices({x}).batch(2), 4);
  ASSERT_EQ(steps.size(), 2u);
  for (const auto& step : steps) {
    EXPECT_EQ(step[0][0].shape(), (Shape{1, 3}));
    EXPECT_EQ(step[1][0].shape(), (Shape{1, 3}));
    EXPECT_EQ(step[2][0].shape(), (Shape{0, 3}));
    EXPECT_EQ(step[3][0].shape(), (Shape{0, 3}));
  }
  EXPECT_EQ(steps[1][1][0].to_vector<float>(), (std::vector<float>{9, 10, 11}));
}

TEST(PartialBatch, DummiesFollowTheElementSpec) {
  ElementSpec spec{{DType::float32, {kUnknownDim, 5}}, {DType::int32, {kUnknownDim}}};
  std::vector<std::optional<Element>> pulled = {
      Element{Tensor::zeros(DType::float32, {2, 5}), Tensor::zeros(DType::int32, {2})},
      std::nullopt};
  EXPECT_EQ(count_replicas_with_data(pulled), 1);
  auto step = fill_missing_replicas(pulled, spec);
  ASSERT_TRUE(step);
  EXPECT_EQ((*step)[1][0].description(), "float32[0, 5]");
  EXPECT_EQ((*step)[1][1].description(), "int32[0]");
  EXPECT_FALSE(fill_missing_replicas({std::nullopt, std::nullopt}, spec));
}

TEST(PartialBatch, SplitGlobalBatchOfShortBatch) {
  auto batch = Element{Tensor::from_vector<int64_t>({5}, {0, 1, 2, 3, 4})};
  auto full = split_global_batch(batch, 5, 3);  // sizes [2, 2, 1]
  EXPECT_EQ(values(full[0]), (V{0, 1}));
  EXPECT_EQ(values(full[1]), (V{2, 3}));
  EXPECT_EQ(values(full[2]), (V{4}));
  auto short_batch = Element{Tensor::from_vector<int64_t>({3}, {0, 1, 2})};
  auto parts = split_global_batch(short_batch, 8, 4);  // sizes [2, 2, 2, 2], only 3 rows
  EXPECT_EQ(values(parts[0]), (V{0, 1}));
  EXPECT_EQ(values(parts[1]), (V{2}));
  EXPECT_EQ(parts[2][0].shape(), (Shape{0}));
  EXPECT_EQ(parts[3][0].shape(), (Shape{0}));
  EXPECT_ERROR_CONTAINS(split_global_batch(batch, 4, 2),
                        "batch of 5 rows exceeds the global batch size 4");
}
