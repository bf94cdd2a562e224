// Rebatch arithmetic of experimental_distribute_dataset (spec §2.7.6, T2, T3, T8, T9, T10).
#include <numeric>

#include "core/data/rebatch.hpp"
#include "data_test_util.hpp"

using namespace troupe;
using namespace troupe::data;
using namespace troupe::data::testing;
using Sizes = std::vector<int64_t>;

TEST(BatchSizesForWorker, T10_Table) {
  EXPECT_EQ(batch_sizes_for_worker(7, 2, 2, 0), (Sizes{2, 2, 2, 1}));
  EXPECT_EQ(batch_sizes_for_worker(7, 2, 2, 1), (Sizes{2, 1, 2, 2}));
  EXPECT_EQ(batch_sizes_for_worker(2, 1, 2, 0), (Sizes{1, 1}));
  EXPECT_EQ(batch_sizes_for_worker(3, 1, 2, 0), (Sizes{2, 1}));
  EXPECT_EQ(batch_sizes_for_worker(5, 1, 4, 0), (Sizes{2, 1, 1, 1}));
  EXPECT_EQ(batch_sizes_for_worker(6, 1, 4, 0), (Sizes{2, 2, 1, 1}));
  EXPECT_EQ(batch_sizes_for_worker(2, 1, 4, 0), (Sizes{1, 1, 0, 0}));
  EXPECT_EQ(batch_sizes_for_worker(8, 2, 2, 0), (Sizes{2, 2, 2, 2}));
  EXPECT_EQ(batch_sizes_for_worker(8, 2, 2, 1), (Sizes{2, 2, 2, 2}));
  EXPECT_EQ(batch_sizes_for_worker(10, 2, 2, 0), (Sizes{3, 3, 2, 2}));
  EXPECT_EQ(batch_sizes_for_worker(10, 2, 2, 1), (Sizes{2, 2, 3, 3}));
}

TEST(BatchSizesForWorker, T10_PropertiesHoldForManyShapes) {
  for (int64_t g = 0; g <= 40; ++g)
    for (int64_t w = 1; w <= 4; ++w)
      for (int64_t r = 1; r <= 4; ++r) {
        std::vector<Sizes> lists;
        for (int64_t i = 0; i < w; ++i) lists.push_back(batch_sizes_for_worker(g, w, r, i));
        for (const auto& l : lists) {
          ASSERT_EQ(int64_t(l.size()), w * r);                            // (A)
          ASSERT_EQ(std::accumulate(l.begin(), l.end(), int64_t(0)), g);  // (B)
          auto [lo, hi] = std::minmax_element(l.begin(), l.end());
          ASSERT_LE(*hi - *lo, 1);  // (D)
        }
        for (int64_t step = 0; step < w; ++step) {  // (C)
          int64_t sum = 0;
          for (int64_t i = 0; i < w; ++i)
            for (int64_t k = 0; k < r; ++k) sum += lists[size_t(i)][size_t(step * r + k)];
          ASSERT_EQ(sum, g) << "G=" << g << " W=" << w << " R=" << r << " step " << step;
        }
      }
}

TEST(BatchSizesForWorker, BadArgumentsNameTheValue) {
  EXPECT_ERROR_CONTAINS(batch_sizes_for_worker(4, 2, 2, 2), "worker index 2 outside [0, 2)");
  EXPECT_ERROR_CONTAINS(batch_sizes_for_worker(4, 0, 2, 0), "W=0");
}

TEST(RebatchDataset, T3_SplitsWithCyclingSizes) {
  auto out = drain(Dataset::range(0, 8).batch(4).rebatch({2, 1, 1}));
  EXPECT_EQ(out, (std::vector<Sizes>{{0, 1}, {2}, {3}, {4, 5}, {6}, {7}}));
}

TEST(RebatchDataset, T3_BatchesSpanInputBatchesAndShortLastIsEmitted) {
  auto out = drain(Dataset::range(0, 16).batch(4).rebatch({6}));
  EXPECT_EQ(out, (std::vector<Sizes>{{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}, {12, 13, 14, 15}}));
}

TEST(RebatchDataset, DropRemainderEndsAtShortBatch) {
  auto out = drain(Dataset::range(0, 16).batch(4).rebatch({6}, /*drop_remainder=*/true));
  EXPECT_EQ(out.size(), 2u);
}

TEST(RebatchDataset, ZeroTargetEmitsEmptyBatchWithLeadingZero) {
  auto ds = Dataset::from_tensor_slices({Tensor::from_vector<float>({2, 3}, {0, 1, 2, 3, 4, 5})})
                .batch(2)
                .rebatch({1, 1, 0, 0});
  auto it = ds.make_iterator();
  it.next();
  it.next();
  auto e = it.next();
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)[0].shape(), (Shape{0, 3}));
}

TEST(RebatchDataset, ScalarInputIsRejected) {
  EXPECT_ERROR_CONTAINS(Dataset::range(0, 4).rebatch({2}), "scalar and has no batch dimension");
}

TEST(RebatchDataset, T9_StaticBatchDimension) {
  EXPECT_EQ(rebatch_static_batch_dim({2}, 4, false), 2);
  EXPECT_EQ(rebatch_static_batch_dim({2, 2}, 4, false), 2);
  EXPECT_EQ(rebatch_static_batch_dim({2, 1, 1}, 4, false), kUnknownDim);
  EXPECT_EQ(rebatch_static_batch_dim({3}, 4, false), kUnknownDim);
  EXPECT_EQ(rebatch_static_batch_dim({3}, 4, true), 3);
  EXPECT_EQ(rebatch_static_batch_dim({2}, kUnknownDim, false), kUnknownDim);
  // The same through the dataset's element spec.
  auto fixed = Dataset::range(0, 16).batch(4, true);
  EXPECT_EQ(fixed.rebatch({2}).element_spec()[0].dims, (Sizes{2}));
  EXPECT_EQ(fixed.rebatch({2, 1, 1}).element_spec()[0].dims, (Sizes{kUnknownDim}));
  EXPECT_EQ(Dataset::range(0, 16).batch(4).rebatch({2}).element_spec()[0].dims,
            (Sizes{kUnknownDim}));
}

TEST(RebatchDataset, T9_TwoDimensionalBatchSizesAreRejected) {
  EXPECT_EQ(batch_sizes_from_tensor(Tensor::from_scalar<int64_t>(3)), (Sizes{3}));
  EXPECT_EQ(batch_sizes_from_tensor(Tensor::from_vector<int64_t>({3}, {2, 1, 1})),
            (Sizes{2, 1, 1}));
  EXPECT_ERROR_CONTAINS(batch_sizes_from_tensor(Tensor::zeros(DType::int64, {2, 2})),
                        "expected a scalar or a vector");
}

TEST(LegacyRebatch, SplitsEachBatchIndependently) {
  auto out = drain(Dataset::range(0, 7).batch(5).legacy_rebatch(2));
  EXPECT_EQ(out, (std::vector<Sizes>{{0, 1, 2}, {3, 4}, {5}, {6}}));
  auto three = drain(Dataset::range(0, 4).batch(4).legacy_rebatch(3));
  EXPECT_EQ(three, (std::vector<Sizes>{{0, 1}, {2, 3}, {}}));
}

TEST(ComputeBatchSize, WalksBackToTheBatchStage) {
  EXPECT_EQ(compute_batch_size(Dataset::range(0, 8).batch(4, true)), 4);
  EXPECT_EQ(compute_batch_size(Dataset::range(0, 8).batch(4).shuffle(3, 1).prefetch(2)), 4);
  EXPECT_EQ(compute_batch_size(Dataset::range(0, 8)), kNoBatchFound);
  EXPECT_EQ(
      compute_batch_size(Dataset::range(0, 8).batch(4).map([](const Element& e) { return e; })),
      -1);
}

TEST(RebatchForWorker, T8_ReplicasMustDivideAmongWorkers) {
  auto ds = Dataset::range(0, 8).batch(4);
  EXPECT_ERROR_CONTAINS(
      rebatch_for_worker(ds, 2, 3, 0),
      "replicas in sync (3) must be a multiple of the number of input workers (2)");
  EXPECT_NO_THROW(rebatch_for_worker(ds, 2, 4, 0));
}

TEST(RebatchForWorker, UnbatchedInputAsksForBatch) {
  EXPECT_ERROR_CONTAINS(rebatch_for_worker(Dataset::range(0, 8), 1, 2, 0),
                        "without encountering a batch; call batch() on the input dataset before "
                        "it can be split across 2 replicas");
}

TEST(RebatchForWorker, T2_TwoReplicasOfRange4Batch2) {
  auto out = drain(rebatch_for_worker(Dataset::range(0, 4).batch(2), 1, 2, 0));
  // Element k goes to replica k % 2: replica 0 gets [0], [2]; replica 1 gets [1], [3].
  EXPECT_EQ(out, (std::vector<Sizes>{{0}, {1}, {2}, {3}}));
}

TEST(RebatchForWorker, T10_WalkthroughSevenAcrossTwoWorkers) {
  // Files A and B of 7 elements each, sharded by file: worker 0 reads A (0..6), worker 1 reads
  // B (100..106); G = 7, W = 2, R = 2.
  auto a = Dataset::range(0, 7).batch(7), b = Dataset::range(100, 107).batch(7);
  auto w0 = drain(rebatch_for_worker(a, 2, 4, 0)), w1 = drain(rebatch_for_worker(b, 2, 4, 1));
  EXPECT_EQ(w0, (std::vector<Sizes>{{0, 1}, {2, 3}, {4, 5}, {6}}));
  EXPECT_EQ(w1, (std::vector<Sizes>{{100, 101}, {102}, {103, 104}, {105, 106}}));
  // Each step (R = 2 pulls per worker) covers 7 elements.
  EXPECT_EQ(w0[0].size() + w0[1].size() + w1[0].size() + w1[1].size(), 7u);
  EXPECT_EQ(w0[2].size() + w0[3].size() + w1[2].size() + w1[3].size(), 7u);
}

TEST(RebatchForWorker, NoWorkersIsAnError) {
  EXPECT_ERROR_CONTAINS(rebatch_for_worker(Dataset::range(0, 8).batch(4), 0, 2, 0),
                        "should have at least one worker");
}

TEST(RebatchForWorker, UnknownBatchSizeFallsBackToLegacyRebatch) {
  auto ds = Dataset::range(0, 6).batch(3).map([](const Element& e) { return e; });
  auto clone = rebatch_for_worker(ds, 1, 2, 0);
  EXPECT_EQ(clone.node()->inputs()[0]->name(), "legacy_rebatch");
  EXPECT_EQ(drain(clone), (std::vector<Sizes>{{0, 1}, {2}, {3, 4}, {5}}));
}

TEST(RebatchDataset, ComponentsWithDifferentBatchSizesAreRejectedAtRunTime) {
  auto ds = Dataset::from_generator(
      [](int64_t i) -> std::optional<Element> {
        if (i > 0) return std::nullopt;
        return Element{Tensor::zeros(DType::int64, {4}), Tensor::zeros(DType::int64, {3})};
      },
      {{DType::int64, {kUnknownDim}}, {DType::int64, {kUnknownDim}}});
  EXPECT_ERROR_CONTAINS(drain(ds.rebatch({2})),
                        "rebatch: input components have different batch sizes (4 and 3)");
}
